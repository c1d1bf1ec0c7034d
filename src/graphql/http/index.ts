/** The GraphQL API's HTTP layer and tools: handler, standalone server, SDL printer, engine-object installer. */
export { createGraphQLHandler, type GraphQLHandler } from './handler.js';
export { GraphQLCore, type HttpAnswer } from './handler.js';
export { serveDatabase, type ServeOptions, type ServingDatabase } from './standalone.js';
export { printSchemaSdl, type SdlOptions } from './sdl.js';
export {
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_DEPTH,
  DEFAULT_MAX_SELECTIONS,
  GRAPHQL_PATH,
  type GraphQLHandlerOptions,
  type GraphQLLimits,
  type GraphQLTarget,
  type GraphiQLSettings,
} from './options.js';
export {
  installGraphQL,
  installedVersion,
  graphqlInstallHook,
  type InstallOptions,
  type InstallReport,
} from '../extension/install.js';
