/** GET, POST (bulk upsert) and DELETE (bulk delete) /v1/projects/{ref}/secrets. */
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { ManagementModule } from '../http/module.js';
import { badRequest } from '../http/errors.js';
import { projectOf } from '../http/project-access.js';
import { environmentNameProblem } from '../../functions/environment-names.js';
import { deleteSecrets, listSecrets, RESERVED_PREFIX, upsertSecrets } from './service.js';

export const RESERVED_NAME_MESSAGE = 'Secret name must not start with the SUPABASE_ prefix.';

/** The project's API address as functions see it: `http://<ref>.localhost:<port>`. */
function projectApiUrl(req: FastifyRequest, ref: string): string {
  return `http://${ref}.localhost:${req.socket.localPort ?? ''}`;
}

const NewSecrets = Type.Array(
  Type.Object(
    {
      name: Type.String({
        minLength: 1,
        maxLength: 256,
        pattern: `^(?!${RESERVED_PREFIX})`,
        messages: { pattern: RESERVED_NAME_MESSAGE },
      }),
      value: Type.String({ maxLength: 24576 }),
    },
    { messages: { type: '{field} must be an object with name and value' } },
  ),
);

export const secretRoutes: ManagementModule = async (app, { platform }) => {
  app.get(
    '/projects/:ref/secrets',
    { config: { failureMessage: "Failed to retrieve project's secrets" } },
    async (req) => {
      const project = projectOf(req);
      return listSecrets(platform, await project.context(), projectApiUrl(req, project.ref));
    },
  );

  app.post(
    '/projects/:ref/secrets',
    {
      schema: { body: NewSecrets },
      config: { failureMessage: "Failed to create project's secrets" },
    },
    async (req, reply) => {
      const project = projectOf(req);
      const secrets = req.body.map(({ name, value }) => ({ name, value }));
      // The names become the Deno worker's environment: only identifiers, never one that steers
      // the loader, the runtime or the process (environment-names.ts). Nothing is stored then.
      for (const { name, value } of secrets) {
        const problem = environmentNameProblem(name);
        if (problem) throw badRequest(problem);
        if (value.includes('\0')) throw badRequest(`Secret value of ${name} must not contain NUL characters`);
      }
      await upsertSecrets(platform, project.ref, secrets);
      return reply.code(201).send();
    },
  );

  app.delete(
    '/projects/:ref/secrets',
    {
      schema: { body: Type.Array(Type.String()) },
      config: { failureMessage: 'Failed to delete secrets with given names' },
    },
    async (req, reply) => {
      const project = projectOf(req);
      const reserved = req.body.find((n) => n.startsWith(RESERVED_PREFIX));
      if (reserved !== undefined)
        throw badRequest(`Secrets with the SUPABASE_ prefix cannot be deleted: ${reserved}`);
      await deleteSecrets(platform, project.ref, req.body);
      return reply.code(200).send();
    },
  );
};
