/** The package's public entry. */
export { startPlatform, buildServer, type RunningPlatform } from './server.js';
export { Platform } from './platform/platform.js';
export type { ProjectContext } from './platform/project-context.js';
export { configFromEnv, type StrataConfig } from './config.js';
export { withRole, queryAs, type Principal } from './db/with-role.js';
export { signJwt, verifyJwt, mintApiKey } from './auth/jwt.js';
export {
  installSchema,
  resolve,
  resolveWithPool,
  resolveWithPoolText,
  buildGraphQLSchema,
  type GraphQLRequest,
} from './graphql/engine.js';
export { createGraphQLHandler, serveDatabase, printSchemaSdl, installGraphQL } from './graphql/http/index.js';
