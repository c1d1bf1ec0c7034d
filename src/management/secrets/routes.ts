/** M5 GET, M6 POST (bulk upsert) and M7 DELETE (bulk delete) /v1/projects/{ref}/secrets. */
import type { FastifyRequest } from 'fastify';
import type { ManagementModule } from '../http/module.js';
import { badRequest } from '../http/errors.js';
import { projectOf } from '../http/project-access.js';
import { arrayBody, isObject, stringField } from '../http/validate.js';
import { deleteSecrets, listSecrets, RESERVED_PREFIX, upsertSecrets } from './service.js';

export const RESERVED_NAME_MESSAGE = 'Secret name must not start with the SUPABASE_ prefix.';

/** The project's API address as functions see it: `http://<ref>.localhost:<port>`. */
function projectApiUrl(req: FastifyRequest, ref: string): string {
  return `http://${ref}.localhost:${req.socket.localPort ?? ''}`;
}

function parseSecret(item: unknown, i: number): { name: string; value: string } {
  if (!isObject(item)) throw badRequest(`${i} must be an object with name and value`);
  const name = stringField(item, 'name', {
    required: true,
    minLength: 1,
    maxLength: 256,
    label: `${i}.name`,
  });
  const value = stringField(item, 'value', { required: true, maxLength: 24576, label: `${i}.value` });
  if (name.startsWith(RESERVED_PREFIX)) throw badRequest(RESERVED_NAME_MESSAGE);
  return { name, value };
}

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
    { config: { failureMessage: "Failed to create project's secrets" } },
    async (req, reply) => {
      const project = projectOf(req);
      const secrets = arrayBody(req.body).map(parseSecret);
      await upsertSecrets(platform, project.ref, secrets);
      return reply.code(201).send();
    },
  );

  app.delete(
    '/projects/:ref/secrets',
    { config: { failureMessage: 'Failed to delete secrets with given names' } },
    async (req, reply) => {
      const project = projectOf(req);
      const names = arrayBody(req.body).map((n, i) => {
        if (typeof n !== 'string') throw badRequest(`${i} must be a string`);
        if (n.startsWith(RESERVED_PREFIX))
          throw badRequest(`Secrets with the SUPABASE_ prefix cannot be deleted: ${n}`);
        return n;
      });
      await deleteSecrets(platform, project.ref, names);
      return reply.code(200).send();
    },
  );
};
