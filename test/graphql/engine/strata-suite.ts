/**
 * The setup the Strata-extension engine tests share: a database with the given schema, one client
 * whose statements are recorded on the wire (`sent`), every test rolled back, and `as(role, sub)`
 * opening a transaction as an API role with `{"sub": …}` claims (search_path public, plain).
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import { setupEnv, type Env } from './harness.js';
import { tap } from './wire-tap.js';

export type ApiRole = 'anon' | 'authenticated' | 'service_role';

export function strataSuite(schemaSql: string): {
  env: () => Env;
  sent: string[];
  as: (role: ApiRole, sub?: string) => Promise<void>;
} {
  const sent: string[] = [];
  let current: Env | undefined;
  const env = () => {
    if (!current) throw new Error('the suite is not set up yet');
    return current;
  };
  beforeAll(async () => {
    current = await setupEnv(schemaSql);
    tap(current.client, sent);
  });
  afterAll(() => current?.close());
  afterEach(() => current?.client.query('rollback'));
  const as = async (role: ApiRole, sub = 'alice') => {
    await env().client.query(
      `begin; set local role ${role}; set local search_path to public, plain; select set_config('request.jwt.claims', '{"sub": "${sub}"}', true)`,
    );
  };
  return { env, sent, as };
}
