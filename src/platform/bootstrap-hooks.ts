/** Steps run on every project database after its SQL migrations (the areas' database-side objects). */
import type pg from 'pg';
import { resolve } from 'node:path';
import { embeddedExtensionDir } from '../db/embedded.js';
import { installGraphQL } from '../graphql/extension/install.js';
import { serverExtensionDir } from '../graphql/extension/extension-dir.js';
import type { ProjectBootstrapHook } from './project-database.js';

/**
 * The GraphQL engine's objects: as the `strata_graphql` extension on the embedded server (whose
 * extension folder ships in node_modules and is ours to write), as plain SQL on any other server,
 * so a system PostgreSQL's folders are never touched.
 */
async function installGraphQLObjects(client: pg.ClientBase): Promise<void> {
  const dir = await serverExtensionDir(client);
  const ours = dir !== undefined && resolve(dir) === resolve(await embeddedExtensionDir());
  await installGraphQL(client, { extensionDir: ours ? dir : false });
}

export const projectBootstrapHooks: ProjectBootstrapHook[] = [installGraphQLObjects];
