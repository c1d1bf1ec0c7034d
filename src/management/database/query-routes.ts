/**
 * `POST /v1/projects/{ref}/database/query` and `POST …/database/query/read-only`: the caller's SQL
 * as the project's login (query-runner.ts). 201 with the last statement's rows as JSON objects
 * (`[]` for statements without rows); a PostgreSQL error is 400 `{"message": "Failed to run sql
 * query: ERROR:  <SQLSTATE>: <message>"}`.
 */
import { Type } from '@sinclair/typebox';
import type { ManagementModule } from '../http/module.js';
import { projectOf } from '../http/project-access.js';
import { Optional, Strict } from '../http/schemas.js';
import { runCallerQuery } from './query-runner.js';

const ReadOnlyQuery = Strict({
  query: Type.String({ minLength: 1 }),
  parameters: Optional(Type.Array(Type.Unknown())),
});
const Query = Strict({ ...ReadOnlyQuery.properties, read_only: Optional(Type.Boolean()) });

export const databaseQueryRoutes: ManagementModule = async (app, { platform }) => {
  const config = { failureMessage: 'Failed to run sql query' };
  app.post('/projects/:ref/database/query', { schema: { body: Query }, config }, async (req, reply) => {
    const { query, parameters, read_only } = req.body;
    const ctx = await projectOf(req).context();
    const input = { query, parameters: parameters ?? undefined, readOnly: read_only === true };
    return reply.code(201).send(await runCallerQuery(platform, ctx, input));
  });
  app.post(
    '/projects/:ref/database/query/read-only',
    { schema: { body: ReadOnlyQuery }, config },
    async (req, reply) => {
      const { query, parameters } = req.body;
      const ctx = await projectOf(req).context();
      const input = { query, parameters: parameters ?? undefined, readOnly: true };
      return reply.code(201).send(await runCallerQuery(platform, ctx, input));
    },
  );
};
