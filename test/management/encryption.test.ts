/** GET/PUT /v1/projects/{ref}/pgsodium root key, and the project vault it keys (sql/project/0200_vault.sql). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { SupabaseManagementAPI } from 'supabase-management-js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { api } from '../support/management.js';
import { withRole } from '../../src/db/with-role.js';
import { withClient } from '../../src/db/pool.js';
import { deriveVaultKey } from '../../src/management/encryption/root-key.js';
import type { ProjectContext } from '../../src/platform/project-context.js';
import { eventually } from '../support/eventually.js';

const MESSAGE = 'Expected a 32 byte secret, hex-encoded (64 characters).';

let tp: TestPlatform;
let ref: string;
let ctx: ProjectContext;
beforeAll(async () => {
  tp = await startTestPlatform();
  ref = tp.platform.defaultRef;
  ctx = await tp.platform.defaultProject();
});
afterAll(async () => {
  await tp?.close();
});

const asService = <T>(c: ProjectContext, sql: string, params: unknown[] = []) =>
  withRole(
    c.pool,
    { role: 'service_role', claims: { role: 'service_role' } },
    async (client) => (await client.query(sql, params)).rows as T[],
  );
const asRole = (c: ProjectContext, role: string, sql: string) =>
  withRole(c.pool, { role, claims: { role } }, (client) => client.query(sql));

async function vaultValue(c: ProjectContext, id: string): Promise<string | null> {
  const rows = await asService<{ decrypted_secret: string | null }>(
    c,
    'select decrypted_secret from vault.decrypted_secrets where id = $1',
    [id],
  );
  return rows[0]!.decrypted_secret;
}

async function createVaultSecret(c: ProjectContext, secret: string, name: string): Promise<string> {
  const rows = await asService<{ id: string }>(c, 'select vault.create_secret($1, $2, $3) as id', [
    secret,
    name,
    'test secret',
  ]);
  return rows[0]!.id;
}

describe('root key', () => {
  let first: string;

  it('GET returns a 64-hex root key, the same on every call', async () => {
    const r = await api(tp, 'GET', `/v1/projects/${ref}/pgsodium`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ root_key: expect.stringMatching(/^[0-9a-f]{64}$/) });
    first = r.body.root_key;
    expect((await api(tp, 'GET', `/v1/projects/${ref}/pgsodium`)).body.root_key).toBe(first);
  });

  it('is stored sealed in the platform database, and never enters the project database', async () => {
    const { rows } = await tp.platform.pool.query(
      `select encode(root_key_sealed, 'hex') as h, encode(root_key_sealed, 'escape') as e from project_root_keys where project_ref = $1`,
      [ref],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].h).not.toContain(first);
    expect(rows[0].e).not.toContain(first);
    const inProject = await withClient(
      ctx.superuserUrl,
      async (c) => (await c.query(`select encode(key, 'hex') as k from vault.key`)).rows,
    );
    expect(inProject).toHaveLength(1);
    expect(inProject[0].k).toMatch(/^[0-9a-f]{64}$/);
    expect(inProject[0].k).not.toBe(first);
  });

  it('a stored root key whose vault key is not installed yet (provisioning still under way) gets it before GET answers', async () => {
    const keyIdOf = async () =>
      (
        await withClient(ctx.superuserUrl, (c) => c.query<{ key_id: string }>('select key_id from vault.key'))
      ).rows.map((r) => r.key_id);
    const installed = await keyIdOf();
    expect(installed).toEqual([deriveVaultKey(first).keyId]);
    await withClient(ctx.superuserUrl, (c) => c.query('delete from vault.key'));
    expect((await api(tp, 'GET', `/v1/projects/${ref}/pgsodium`)).body.root_key).toBe(first);
    expect(await keyIdOf()).toEqual(installed);
  });

  it('PUT validates: 400 "Expected a 32 byte secret, hex-encoded (64 characters)."', async () => {
    for (const bad of [
      { root_key: '' },
      { root_key: 'ab'.repeat(31) },
      { root_key: 'zz'.repeat(32) },
      { root_key: 'MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=' },
      { root_key: 42 },
      {},
    ]) {
      const r = await api(tp, 'PUT', `/v1/projects/${ref}/pgsodium`, { body: bad });
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(r.body).toEqual({ message: MESSAGE });
    }
    expect((await api(tp, 'GET', `/v1/projects/${ref}/pgsodium`)).body.root_key).toBe(first);
  });

  it('a key change makes vault secrets written under the old key unreadable; the old key brings them back', async () => {
    const id = await createVaultSecret(ctx, 'old-world-secret', `old_${randomBytes(3).toString('hex')}`);
    expect(await vaultValue(ctx, id)).toBe('old-world-secret');

    const next = randomBytes(32).toString('hex').toUpperCase();
    const r = await api(tp, 'PUT', `/v1/projects/${ref}/pgsodium`, { body: { root_key: next } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ root_key: next.toLowerCase() });
    expect((await api(tp, 'GET', `/v1/projects/${ref}/pgsodium`)).body.root_key).toBe(next.toLowerCase());

    expect(await vaultValue(ctx, id)).toBeNull();
    const id2 = await createVaultSecret(ctx, 'new-world-secret', `new_${randomBytes(3).toString('hex')}`);
    expect(await vaultValue(ctx, id2)).toBe('new-world-secret');

    await api(tp, 'PUT', `/v1/projects/${ref}/pgsodium`, { body: { root_key: first } });
    expect(await vaultValue(ctx, id)).toBe('old-world-secret');
    expect(await vaultValue(ctx, id2)).toBeNull();
  });

  it('through supabase-management-js v2: getPgsodiumConfig / updatePgsodiumConfig', async () => {
    const client = new SupabaseManagementAPI({
      accessToken: tp.platform.defaultAccessToken,
      baseUrl: tp.url,
    });
    const got = await client.getPgsodiumConfig(ref);
    expect(got.status).toBe(200);
    expect(got.data.root_key).toBe(first);
    const key = randomBytes(32).toString('hex');
    const put = await client.updatePgsodiumConfig(ref, { root_key: key });
    expect(put.status).toBe(200);
    expect(put.data.root_key).toBe(key);
    await expect(client.updatePgsodiumConfig(ref, { root_key: 'short' })).rejects.toThrow(MESSAGE);
    await client.updatePgsodiumConfig(ref, { root_key: first });
  });
});

describe('vault', () => {
  it('stores ciphertext; decrypts through vault.decrypted_secrets; update_secret and delete_secret work', async () => {
    const id = await createVaultSecret(ctx, 'plain-text-never-stored', `v_${randomBytes(3).toString('hex')}`);
    const raw = await withClient(
      ctx.superuserUrl,
      async (c) =>
        (await c.query(`select encode(secret, 'escape') as s, key_id from vault.secrets where id = $1`, [id]))
          .rows[0],
    );
    expect(raw.s).not.toContain('plain-text-never-stored');
    expect(raw.key_id).toMatch(/^[0-9a-f]{16}$/);
    await asService(ctx, `select vault.update_secret($1, 'rotated-value')`, [id]);
    expect(await vaultValue(ctx, id)).toBe('rotated-value');
    await asService(ctx, `select vault.delete_secret($1)`, [id]);
    expect(await asService(ctx, 'select 1 from vault.secrets where id = $1', [id])).toHaveLength(0);
  });

  it('is for service_role only: anon and authenticated cannot read or write it; nobody but the superuser reads the key', async () => {
    for (const role of ['anon', 'authenticated']) {
      await expect(asRole(ctx, role, 'select * from vault.decrypted_secrets')).rejects.toThrow(
        /permission denied/,
      );
      await expect(asRole(ctx, role, `select vault.create_secret('x')`)).rejects.toThrow(/permission denied/);
    }
    await expect(asRole(ctx, 'service_role', 'select * from vault.key')).rejects.toThrow(/permission denied/);
    await expect(asRole(ctx, 'service_role', 'select * from vault._current_key()')).rejects.toThrow(
      /permission denied/,
    );
  });

  it('a new project gets its root key at creation, so its vault works without any pgsodium call', async () => {
    const p = await tp.platform.createProject({ name: 'vaulted', organizationId: 'default-org' });
    const rows = await eventually(
      async () => {
        const q = 'select 1 from project_root_keys where project_ref = $1';
        const { rows } = await tp.platform.pool.query(q, [p.ref]);
        return rows.length > 0 && rows;
      },
      { timeoutMs: 5_000 },
    ).catch(() => []);
    expect(rows).toHaveLength(1);
    const id = await eventually(() => createVaultSecret(p, 'fresh-project-secret', 'first'), {
      timeoutMs: 5_000,
    }).catch(() => undefined);
    expect(await vaultValue(p, id!)).toBe('fresh-project-secret');
    // each project has its own key
    const own = (await api(tp, 'GET', `/v1/projects/${p.ref}/pgsodium`)).body.root_key;
    expect(own).not.toBe((await api(tp, 'GET', `/v1/projects/${ref}/pgsodium`)).body.root_key);
  });

  it('the new-project listener comes back after its connection is lost', async () => {
    const { rowCount } = await tp.platform.pool.query(
      `select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'strata-root-keys' and datname = $1`,
      [tp.platform.platformDatabase],
    );
    expect(rowCount).toBe(1);
    await new Promise((r) => setTimeout(r, 2_500));
    const p = await tp.platform.createProject({ name: 'after-reconnect', organizationId: 'default-org' });
    const rows = await eventually(
      async () => {
        const q = 'select 1 from project_root_keys where project_ref = $1';
        const { rows } = await tp.platform.pool.query(q, [p.ref]);
        return rows.length > 0 && rows;
      },
      { timeoutMs: 5_000 },
    ).catch(() => []);
    expect(rows).toHaveLength(1);
  });
});
