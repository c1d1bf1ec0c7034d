/** The GraphQL engine's step of a project database's bootstrap (run after its SQL migrations). */
import type pg from 'pg';
import { resolve } from 'node:path';
import { embeddedExtensionDir } from '../../db/embedded.js';
import { installGraphQL } from './install.js';
import { serverExtensionDir } from './extension-dir.js';
import type { ProjectBootstrapHook } from '../../platform/project-database.js';

/**
 * The GraphQL engine's objects: as the `strata_graphql` extension on the embedded server (whose
 * extension folder ships in node_modules and is ours to write), as plain SQL on any other server,
 * so a system PostgreSQL's folders are never touched.
 */
export const installGraphQLObjects: ProjectBootstrapHook = async (client: pg.ClientBase) => {
  const dir = await serverExtensionDir(client);
  const ours = dir !== undefined && resolve(dir) === resolve(await embeddedExtensionDir());
  await installGraphQL(client, { extensionDir: ours ? dir : false });
};
