/** GET/POST/DELETE /v1/projects/{ref}/secrets: project secrets, through supabase-management-js v2 and as the CLI calls them. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { SupabaseManagementAPI } from 'supabase-management-js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { api } from '../support/management.js';
import { readProjectSecrets } from '../../src/platform/project-secrets.js';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

let tp: TestPlatform;
let client: SupabaseManagementAPI;
let ref: string;
beforeAll(async () => {
  tp = await startTestPlatform();
  client = new SupabaseManagementAPI({ accessToken: tp.platform.defaultAccessToken, baseUrl: tp.url });
  ref = tp.platform.defaultRef;
});
afterAll(async () => {
  await tp?.close();
});

describe('secrets', () => {
  it('a new project lists only the platform-managed SUPABASE_ secrets, as digests', async () => {
    const { data, status } = await client.listAllSecrets(ref);
    expect(status).toBe(200);
    expect(data.map((s) => s.name)).toEqual([
      'SUPABASE_ANON_KEY',
      'SUPABASE_SERVICE_ROLE_KEY',
      'SUPABASE_URL',
    ]);
    const ctx = await tp.platform.defaultProject();
    expect(data.find((s) => s.name === 'SUPABASE_ANON_KEY')!.value).toBe(sha256(ctx.anonKey));
    expect(data.find((s) => s.name === 'SUPABASE_URL')!.value).toBe(
      sha256(`http://${ref}.localhost:${tp.port}`),
    );
  });

  it('bulk create answers exactly 201 with an empty body; list shows digests, never plaintext', async () => {
    const r = await api(tp, 'POST', `/v1/projects/${ref}/secrets`, {
      body: [
        { name: 'OPENAI_API_KEY', value: 'sk-plaintext-1' },
        { name: 'supabase_lower', value: 'ok' },
      ],
    });
    expect(r.status).toBe(201);
    expect(r.text).toBe('');
    expect(r.headers.get('content-type')).toBeNull();
    const list = await api(tp, 'GET', `/v1/projects/${ref}/secrets`);
    expect(list.text).not.toContain('sk-plaintext-1');
    expect(list.body).toContainEqual({
      name: 'OPENAI_API_KEY',
      value: sha256('sk-plaintext-1'),
      updated_at: expect.any(String),
    });
    expect(list.body).toContainEqual(expect.objectContaining({ name: 'supabase_lower' }));
    const names = list.body.map((s: { name: string }) => s.name);
    expect(names).toEqual([...names].sort());
  });

  it('upserts: setting an existing name overwrites it', async () => {
    const { status } = await client.bulkCreateSecrets(ref, [{ name: 'STRIPE_KEY', value: 'v1' }]);
    expect(status).toBe(201);
    await client.bulkCreateSecrets(ref, [{ name: 'STRIPE_KEY', value: 'v2' }]);
    const { data } = await client.listAllSecrets(ref);
    expect(data.filter((s) => s.name === 'STRIPE_KEY')).toEqual([
      { name: 'STRIPE_KEY', value: sha256('v2'), updated_at: expect.any(String) },
    ]);
  });

  it('stores values encrypted in the platform database, readable by the platform itself', async () => {
    await client.bulkCreateSecrets(ref, [{ name: 'AT_REST', value: 'very-secret-value' }]);
    const { rows } = await tp.platform.pool.query(
      `select value_encrypted::text as enc, value_sha256 from project_secrets where name = 'AT_REST'`,
    );
    expect(rows[0].enc).not.toContain(Buffer.from('very-secret-value').toString('hex'));
    const plain = await readProjectSecrets(tp.platform.pool, tp.platform.state.platformKey, ref);
    expect(plain.AT_REST).toBe('very-secret-value');
  });

  it('refuses names with the SUPABASE_ prefix (and stores nothing of that request)', async () => {
    const r = await api(tp, 'POST', `/v1/projects/${ref}/secrets`, {
      body: [
        { name: 'FINE_ONE', value: 'x' },
        { name: 'SUPABASE_URL', value: 'x' },
      ],
    });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message: 'Secret name must not start with the SUPABASE_ prefix.' });
    const list = await api(tp, 'GET', `/v1/projects/${ref}/secrets`);
    expect(list.body.map((s: { name: string }) => s.name)).not.toContain('FINE_ONE');
  });

  it.each([
    [{ name: 'A' }, '0.value is required'],
    [[{ value: 'x' }], '0.name is required'],
    [[{ name: 'A', value: 1 }], '0.value must be a string'],
    [[{ name: '', value: 'x' }], '0.name should not be empty'],
    [
      [
        { name: 'A', value: 'x' },
        { name: 'n'.repeat(257), value: 'x' },
      ],
      '1.name must be shorter than or equal to 256 characters',
    ],
    [[{ name: 'A', value: 'v'.repeat(24577) }], '0.value must be shorter than or equal to 24576 characters'],
  ])('refuses %j with 400', async (body, message) => {
    const payload = Array.isArray(body) ? body : [body];
    const r = await api(tp, 'POST', `/v1/projects/${ref}/secrets`, { body: payload });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message });
  });

  it('a non-array body is 400', async () => {
    const r = await api(tp, 'POST', `/v1/projects/${ref}/secrets`, { body: { name: 'A', value: 'x' } });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message: 'Request body must be a JSON array' });
  });

  it('bulk delete answers exactly 200 with an empty body; unknown names are a no-op', async () => {
    await client.bulkCreateSecrets(ref, [
      { name: 'TO_DELETE', value: 'x' },
      { name: 'TO_KEEP', value: 'y' },
    ]);
    const r = await api(tp, 'DELETE', `/v1/projects/${ref}/secrets`, {
      body: ['TO_DELETE', 'NEVER_EXISTED'],
    });
    expect(r.status).toBe(200);
    expect(r.text).toBe('');
    expect(r.headers.get('content-type')).toBeNull();
    const names = (await client.listAllSecrets(ref)).data.map((s) => s.name);
    expect(names).not.toContain('TO_DELETE');
    expect(names).toContain('TO_KEEP');
    expect((await client.bulkDeleteSecrets(ref, ['TO_KEEP'])).status).toBe(200);
  });

  it('refuses deleting SUPABASE_ names', async () => {
    const r = await api(tp, 'DELETE', `/v1/projects/${ref}/secrets`, { body: ['SUPABASE_URL'] });
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/SUPABASE_/);
    expect((await api(tp, 'DELETE', `/v1/projects/${ref}/secrets`, { body: [1] })).status).toBe(400);
  });

  it('the CLI flow: secrets unset without names lists, drops SUPABASE_*, deletes the rest', async () => {
    await api(tp, 'POST', `/v1/projects/${ref}/secrets`, {
      body: [
        { name: 'CLI_A', value: '1' },
        { name: 'CLI_B', value: '2' },
      ],
    });
    const listed = await api(tp, 'GET', `/v1/projects/${ref}/secrets`);
    const names = listed.body
      .map((s: { name: string }) => s.name)
      .filter((n: string) => !n.startsWith('SUPABASE_'));
    const del = await api(tp, 'DELETE', `/v1/projects/${ref}/secrets`, { body: names });
    expect(del.status).toBe(200);
    const after = await api(tp, 'GET', `/v1/projects/${ref}/secrets`);
    expect(after.body.map((s: { name: string }) => s.name)).toEqual([
      'SUPABASE_ANON_KEY',
      'SUPABASE_SERVICE_ROLE_KEY',
      'SUPABASE_URL',
    ]);
  });
});
