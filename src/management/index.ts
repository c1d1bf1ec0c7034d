/**
 * Management API, mounted by server.ts at `/v1`.
 *
 * How to add a module (one line in `MODULES` below, plus its import):
 *   const FooBody = Strict({ name: Type.String({ maxLength: 64 }), note: Optional(Type.String()) });
 *   export const fooRoutes: ManagementModule = async (app, { platform, services }) => {
 *     app.put('/projects/:ref/foo', { schema: { body: FooBody } }, async (req) => {
 *       const project = projectOf(req);          // checked: caller is a member, project not REMOVED
 *       const ctx = await project.context();     // ProjectContext (pool, superuserUrl, keys...)
 *       const { name } = req.body;               // typed, and already checked by the schema
 *       if (bad) throw badRequest('field must ...');   // what a schema cannot say → 400 {"message": ...}
 *       return { ... };                          // 200 JSON; use reply.code(201) for POSTs
 *     });
 *   };
 * Everything in this scope (from ./http/setup.ts) already happened before the handler runs:
 *   - `Authorization: Bearer sbp_…` checked (401 {"message":"Unauthorized"}); `callerOf(req).userId`;
 *   - rate limit per (user, scope, endpoint) with X-RateLimit-* headers and 429; per route:
 *     `config: { managementRateLimit: { max: 10 } }` (or `false` to turn it off);
 *   - a `:ref` path parameter is validated and loaded → `projectOf(req)` (400 bad ref,
 *     404 "Project not found", 403 "Forbidden resource", 400 "Resource has been removed");
 *     a `:slug` parameter likewise → `organizationOf(req)`;
 *   - errors: throw `ApiError` / `badRequest` / `notFound` / `conflict` (./http/errors.ts); any other
 *     exception is a 500 {"message": config.failureMessage ?? "Internal Server Error", "errorEventId"};
 *   - JSON bodies are parsed (an empty body is `undefined`) and checked against the route's
 *     TypeBox schema (./http/schemas.ts; 400 worded like the reference API by ./http/schema-errors.ts).
 * Import helpers from './http/index.js'.
 */
import type { FastifyInstance } from 'fastify';
import type { FunctionsRuntimeAccess } from '../functions/runtime-access.js';
import type { Platform } from '../platform/platform.js';
import { registerManagementHttp } from './http/setup.js';
import type { ManagementModule } from './http/module.js';
import type { ManagementServices } from './services.js';
import { organizationRoutes } from './organizations/routes.js';
import { projectRoutes } from './projects/routes.js';
import { secretRoutes } from './secrets/routes.js';
import { typesRoutes } from './types/routes.js';
import { functionRoutes } from './functions/routes.js';
import { hostnameRoutes } from './hostnames/routes.js';
import { encryptionRoutes } from './encryption/routes.js';
import { networkRoutes } from './network/routes.js';
import { s3AccessKeyRoutes } from './storage/s3-access-keys.js';
import { databaseQueryRoutes } from './database/query-routes.js';
import { databasePasswordRoutes } from './database/password-routes.js';
import { connectionRoutes } from './database/connection-routes.js';
import { postgresConfigRoutes } from './database/postgres-config-routes.js';
import { serviceRoutes } from './database/service-routes.js';
import { migrationRoutes } from './database/migrations-routes.js';
import { consoleRoleTokenRoutes } from './role-tokens/routes.js';
import { functionInvokeRoutes } from './functions/invoke-route.js';

const MODULES: ManagementModule[] = [
  organizationRoutes,
  projectRoutes,
  secretRoutes,
  typesRoutes,
  functionRoutes,
  hostnameRoutes,
  encryptionRoutes,
  networkRoutes,
  s3AccessKeyRoutes,
  databaseQueryRoutes,
  databasePasswordRoutes,
  connectionRoutes,
  postgresConfigRoutes,
  serviceRoutes,
  migrationRoutes,
  consoleRoleTokenRoutes,
  functionInvokeRoutes,
];

export async function managementRoutes(
  app: FastifyInstance,
  opts: { platform: Platform; services: ManagementServices; functions: FunctionsRuntimeAccess },
): Promise<void> {
  const { platform, services, functions } = opts;
  registerManagementHttp(app, platform, services.routeKeys);
  for (const mod of MODULES) await app.register(mod, { platform, services, functions });
}
export { sendManagementFrameworkError } from './http/errors.js';
