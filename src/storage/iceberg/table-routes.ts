/**
 * The table routes of the Iceberg REST catalog. Replies that carry table metadata are written by
 * json.ts (64-bit snapshot ids keep every digit).
 */
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PageQuery } from './catalog-routes.js';
import type { Json } from './json.js';
import { type IcebergDeps, icebergScope } from './scope.js';
import {
  commitTable,
  createTable,
  dropTable,
  listTablesPage,
  loadTable,
  renameTableTo,
  tableExists,
} from './tables.js';

interface NamespaceParams {
  prefix: string;
  namespace: string;
}
interface TableParams extends NamespaceParams {
  table: string;
}

const sendJson = (reply: FastifyReply, text: string) =>
  reply.type('application/json; charset=utf-8').send(text);

export async function icebergTableRoutes(app: FastifyInstance, deps: IcebergDeps): Promise<void> {
  app.get(
    '/v1/:prefix/namespaces/:namespace/tables',
    { schema: { querystring: PageQuery } },
    async (req: FastifyRequest<{ Params: NamespaceParams; Querystring: Static<typeof PageQuery> }>) =>
      listTablesPage(await icebergScope(deps, req), req.params.prefix, req.params.namespace, req.query),
  );

  app.post<{ Params: NamespaceParams }>('/v1/:prefix/namespaces/:namespace/tables', async (req, reply) => {
    const s = await icebergScope(deps, req);
    const p = req.params;
    return sendJson(reply, await createTable(s, p.prefix, p.namespace, (req.body ?? null) as Json));
  });

  const table = '/v1/:prefix/namespaces/:namespace/tables/:table';

  app.head<{ Params: TableParams }>(table, async (req, reply) => {
    const p = req.params;
    await tableExists(await icebergScope(deps, req), p.prefix, p.namespace, p.table);
    return reply.code(204).send();
  });

  app.get<{ Params: TableParams }>(table, { exposeHeadRoute: false }, async (req, reply) => {
    const p = req.params;
    return sendJson(reply, await loadTable(await icebergScope(deps, req), p.prefix, p.namespace, p.table));
  });

  app.post<{ Params: TableParams }>(table, async (req, reply) => {
    const s = await icebergScope(deps, req);
    const p = req.params;
    return sendJson(reply, await commitTable(s, p.prefix, p.namespace, p.table, (req.body ?? null) as Json));
  });

  app.delete<{ Params: TableParams }>(table, async (req, reply) => {
    const p = req.params;
    await dropTable(await icebergScope(deps, req), p.prefix, p.namespace, p.table);
    return reply.code(204).send();
  });

  app.post<{ Params: { prefix: string } }>('/v1/:prefix/tables/rename', async (req, reply) => {
    await renameTableTo(await icebergScope(deps, req), req.params.prefix, (req.body ?? null) as Json);
    return reply.code(204).send();
  });
}
