/**
 * POST/GET {project}/graphql/v1 on the platform's Fastify app.
 * PLACEHOLDER (foundation): checks the apikey and answers with an empty schema's response.
 * The GraphQL HTTP layer replaces this file.
 */
import type { FastifyInstance } from 'fastify';
import type { Platform } from '../../platform/platform.js';
import { apiKeyOf, bearerOf } from '../../auth/request-credentials.js';
import { AuthError, principalOf } from '../../auth/principal.js';

export async function graphqlRoutes(app: FastifyInstance, _opts: { platform: Platform }): Promise<void> {
  const handler = async (req: import('fastify').FastifyRequest, reply: import('fastify').FastifyReply) => {
    const project = req.project;
    if (!project) return reply.code(404).send({ message: 'Project not found' });
    try {
      await principalOf(project, apiKeyOf(req.headers), bearerOf(req.headers));
    } catch (err) {
      if (err instanceof AuthError) return reply.code(401).send({ message: err.message });
      throw err;
    }
    return reply.send({ data: null, errors: [{ message: 'The GraphQL engine is not installed yet' }] });
  };
  app.post('/graphql/v1', handler);
  app.get('/graphql/v1', handler);
}
