/**
 * `POST /v1/projects/{ref}/database/query` and `POST …/database/query/read-only`: the caller's SQL
 * as the project's login (query-runner.ts). 201 with the last statement's rows as JSON objects
 * (`[]` for statements without rows); a PostgreSQL error is 400 `{"message": "Failed to run sql
 * query: ERROR:  <SQLSTATE>: <message>"}`.
 */
import type { ManagementModule } from '../http/module.js';
import { ApiError, badRequest } from '../http/errors.js';
import { projectOf } from '../http/project-access.js';
import { booleanField, objectBody, rejectUnknownKeys, stringField } from '../http/validate.js';
import { runProjectQuery, SqlError, type QueryRequest } from './query-runner.js';

function parseQueryBody(raw: unknown, readOnlyRoute: boolean): QueryRequest {
  const body = objectBody(raw);
  rejectUnknownKeys(body, readOnlyRoute ? ['query', 'parameters'] : ['query', 'parameters', 'read_only']);
  const query = stringField(body, 'query', { required: true, minLength: 1 });
  if (query.includes('\u0000')) throw badRequest('query must not contain NUL characters');
  const parameters = body.parameters;
  if (parameters !== undefined && parameters !== null && !Array.isArray(parameters))
    throw badRequest('parameters must be an array');
  const params = (parameters ?? undefined) as unknown[] | undefined;
  if (params?.some((p) => typeof p === 'string' && p.includes('\u0000')))
    throw badRequest('parameters must not contain NUL characters');
  return { query, parameters: params, readOnly: readOnlyRoute || booleanField(body, 'read_only') === true };
}

export const databaseQueryRoutes: ManagementModule = async (app, { platform }) => {
  const run =
    (readOnly: boolean) =>
    async (req: import('fastify').FastifyRequest, reply: import('fastify').FastifyReply) => {
      const input = parseQueryBody(req.body, readOnly);
      const ctx = await projectOf(req).context();
      try {
        return reply.code(201).send(await runProjectQuery(platform, ctx, input));
      } catch (err) {
        if (err instanceof SqlError) throw new ApiError(400, err.message);
        throw err;
      }
    };
  app.post(
    '/projects/:ref/database/query',
    { config: { failureMessage: 'Failed to run sql query' } },
    run(false),
  );
  app.post(
    '/projects/:ref/database/query/read-only',
    { config: { failureMessage: 'Failed to run sql query' } },
    run(true),
  );
};
