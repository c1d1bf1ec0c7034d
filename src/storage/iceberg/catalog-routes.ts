/** /iceberg/v1/config and the namespace routes of the Iceberg REST catalog. */
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  catalogConfig,
  createNamespace,
  dropNamespace,
  listNamespacesPage,
  loadNamespace,
  updateNamespaceProperties,
} from './catalog.js';
import type { Json } from './json.js';
import { type IcebergDeps, icebergScope } from './scope.js';

export const PageQuery = Type.Object({
  pageToken: Type.Optional(Type.String()),
  pageSize: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647 })),
  parent: Type.Optional(Type.String()),
});
const ConfigQuery = Type.Object({ warehouse: Type.String() });

interface NamespaceParams {
  prefix: string;
  namespace: string;
}

export async function icebergCatalogRoutes(app: FastifyInstance, deps: IcebergDeps): Promise<void> {
  app.get(
    '/v1/config',
    { schema: { querystring: ConfigQuery } },
    async (req: FastifyRequest<{ Querystring: Static<typeof ConfigQuery> }>) =>
      catalogConfig(await icebergScope(deps, req), req.query.warehouse),
  );

  app.get(
    '/v1/:prefix/namespaces',
    { schema: { querystring: PageQuery } },
    async (req: FastifyRequest<{ Params: { prefix: string }; Querystring: Static<typeof PageQuery> }>) =>
      listNamespacesPage(await icebergScope(deps, req), req.params.prefix, req.query),
  );

  app.post<{ Params: { prefix: string } }>('/v1/:prefix/namespaces', async (req) =>
    createNamespace(await icebergScope(deps, req), req.params.prefix, (req.body ?? null) as Json),
  );

  app.head<{ Params: NamespaceParams }>('/v1/:prefix/namespaces/:namespace', async (req, reply) => {
    await loadNamespace(await icebergScope(deps, req), req.params.prefix, req.params.namespace);
    return reply.code(204).send();
  });

  app.get<{ Params: NamespaceParams }>(
    '/v1/:prefix/namespaces/:namespace',
    { exposeHeadRoute: false },
    async (req) => loadNamespace(await icebergScope(deps, req), req.params.prefix, req.params.namespace),
  );

  app.delete<{ Params: NamespaceParams }>('/v1/:prefix/namespaces/:namespace', async (req, reply) => {
    await dropNamespace(await icebergScope(deps, req), req.params.prefix, req.params.namespace);
    return reply.code(204).send();
  });

  app.post<{ Params: NamespaceParams }>('/v1/:prefix/namespaces/:namespace/properties', async (req) => {
    const s = await icebergScope(deps, req);
    return updateNamespaceProperties(s, req.params.prefix, req.params.namespace, (req.body ?? null) as Json);
  });
}
