/** Fresh databases for tests, on the run's PostgreSQL (see global-setup.ts). */
import { inject } from 'vitest';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { withClient, withDatabase, withUser } from '../../src/db/pool.js';
import { bootstrapProjectDatabase } from '../../src/db/bootstrap.js';
import { quoteIdent } from '../../src/db/sql-text.js';
import { TEST_AUTHENTICATOR_PASSWORD } from './global-setup.js';

export interface TestDatabase {
  name: string;
  /** Superuser URL of the new database. */
  url: string;
  /** URL of the API login role (authenticator) on it. */
  apiUrl: string;
  /** Superuser URL of the server (the `postgres` database). */
  serverUrl: string;
  drop(): Promise<void>;
}

export function serverUrl(): string {
  return inject('databaseUrl');
}

export const authenticatorPassword = TEST_AUTHENTICATOR_PASSWORD;

/** Creates an empty database (from template0). With `bootstrap` (default) the project migrations are applied. */
export async function createTestDatabase(
  opts: { prefix?: string; bootstrap?: boolean } = {},
): Promise<TestDatabase> {
  const server = serverUrl();
  const name = `${opts.prefix ?? 'test'}_${randomBytes(6).toString('hex')}`;
  await withClient(withDatabase(server, 'postgres'), (c) =>
    c.query(`create database ${quoteIdent(name)} template template0 encoding 'UTF8'`),
  );
  const url = withDatabase(server, name);
  if (opts.bootstrap !== false) await withClient(url, (c) => bootstrapProjectDatabase(c));
  return {
    name,
    url,
    apiUrl: withUser(url, 'authenticator', TEST_AUTHENTICATOR_PASSWORD),
    serverUrl: server,
    drop: () =>
      withClient(withDatabase(server, 'postgres'), (c) =>
        c.query(`drop database if exists ${quoteIdent(name)} with (force)`),
      ).then(() => undefined),
  };
}

/** A connected superuser client on `url`; remember to `end()` it. */
export async function connect(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  return c;
}
