/**
 * Analytics buckets and the Iceberg REST catalog, mounted at {project}/storage/v1/iceberg: its
 * own context, with the Iceberg error shape (errors.ts) and a JSON parser that keeps 64-bit ids
 * (json.ts). Bodies are read only by POST routes; other methods ignore theirs, as the reference.
 */
import type { FastifyInstance } from 'fastify';
import { icebergBucketRoutes } from './bucket-routes.js';
import { icebergCatalogRoutes } from './catalog-routes.js';
import { sendIcebergError } from './errors.js';
import { parseJson } from './json.js';
import type { IcebergDeps } from './scope.js';
import { icebergTableRoutes } from './table-routes.js';

export async function icebergRoutes(app: FastifyInstance, deps: IcebergDeps): Promise<void> {
  app.setErrorHandler(sendIcebergError);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    '*',
    { parseAs: 'string', bodyLimit: deps.platform.config.bodyLimit },
    (req, body, done) => {
      const text = String(body);
      if (req.method !== 'POST' || text.trim() === '') {
        done(null, undefined);
        return;
      }
      try {
        done(null, parseJson(text));
      } catch (err) {
        done(err as Error);
      }
    },
  );
  // Not `deps` itself: its `prefix` (this context's) would be added again.
  const d: IcebergDeps = { platform: deps.platform, backends: deps.backends };
  await app.register(icebergBucketRoutes, d);
  await app.register(icebergCatalogRoutes, d);
  await app.register(icebergTableRoutes, d);
}
