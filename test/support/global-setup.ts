/**
 * One PostgreSQL for the whole run: the server named by DATABASE_URL, or an embedded one in a
 * temporary folder (removed afterwards). Test files get their own databases from it
 * (see database.ts).
 */
import type { TestProject } from 'vitest/node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbedded, type EmbeddedServer } from '../../src/db/embedded.js';
import { withClient } from '../../src/db/pool.js';
import { ensureClusterRoles } from '../../src/db/roles.js';
import { chromiumPath } from './chromium.js';

export const TEST_AUTHENTICATOR_PASSWORD = 'strata-test-authenticator';

let embedded: EmbeddedServer | undefined;
let dir: string | undefined;

export async function setup(project: TestProject): Promise<void> {
  let url = process.env.DATABASE_URL;
  if (!url) {
    dir = mkdtempSync(join(tmpdir(), 'strata-test-pg-'));
    embedded = await startEmbedded({ dataDir: join(dir, 'db'), port: 0, password: 'postgres' });
    url = embedded.superuserUrl('postgres');
  }
  await withClient(url, (c) => ensureClusterRoles(c, TEST_AUTHENTICATOR_PASSWORD));
  // The packaged Chromium is unpacked once here, not by several test files at once; the workers
  // inherit the path.
  if (!process.env.STRATA_CHROMIUM) {
    const found = await chromiumPath().catch(() => undefined);
    if (found) process.env.STRATA_CHROMIUM = found;
  }
  project.provide('databaseUrl', url);
  project.provide('embeddedDataDir', embedded ? embedded.dataDir : '');
}

export async function teardown(): Promise<void> {
  await embedded?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    embeddedDataDir: string;
  }
}
