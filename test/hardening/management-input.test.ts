/**
 * Hostile input on the Management API: NUL characters in JSON strings and keys, paths and query
 * strings, huge, deep and malformed bodies. Each gets a 4xx `{"message"}` answer, never a 500; and
 * after 200 such requests at once the API still answers a normal request with no pool client lost.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { api, type ApiAnswer } from '../support/management.js';
import { eventually } from '../support/eventually.js';

let tp: TestPlatform;
let ref: string;

beforeAll(async () => {
  tp = await startTestPlatform({ rateLimitMax: 1_000_000 });
  ref = tp.platform.defaultRef;
}, 120_000);

afterAll(async () => {
  await tp?.close();
});

function expectClientError(r: ApiAnswer, status: number, what: string): void {
  expect([what, r.status, r.text]).toEqual([what, status, r.text]);
  expect(typeof r.body.message, what).toBe('string');
  expect(r.body.errorEventId, what).toBeUndefined();
}

const NUL = '\u0000';

/** Raw JSON text with an escaped NUL (what a client's JSON.stringify sends). */
const nulCases = (): Array<[string, string, unknown]> => [
  ['POST', '/v1/organizations', { name: `a${NUL}b` }],
  ['POST', '/v1/organizations', { [`na${NUL}me`]: 'x' }],
  ['POST', '/v1/projects', { db_pass: 'x', name: `p${NUL}`, organization_slug: 'default-org' }],
  ['POST', '/v1/projects', { db_pass: `x${NUL}`, name: 'p', organization_slug: 'default-org' }],
  ['POST', `/v1/projects/${ref}/secrets`, [{ name: 'OK_NAME', value: `se${NUL}cret` }]],
  ['POST', `/v1/projects/${ref}/secrets`, [{ name: `BAD${NUL}NAME`, value: 'v' }]],
  ['DELETE', `/v1/projects/${ref}/secrets`, [`GONE${NUL}`]],
  ['PUT', `/v1/projects/${ref}/pgsodium`, { root_key: `${'a'.repeat(63)}${NUL}` }],
  ['POST', `/v1/projects/${ref}/custom-hostname/initialize`, { custom_hostname: `a${NUL}.example.com` }],
  ['POST', `/v1/projects/${ref}/network-restrictions/apply`, { dbAllowedCidrs: [`10.0.0.0/8${NUL}`] }],
  ['PATCH', `/v1/projects/${ref}/network-restrictions`, { add: { dbAllowedCidrs: [`10.0.0.0/8${NUL}`] } }],
  ['DELETE', `/v1/projects/${ref}/network-bans`, { ipv4_addresses: [`1.2.3.4${NUL}`] }],
  ['POST', `/v1/projects/${ref}/functions`, { slug: 'nul-fn', name: `n${NUL}`, body: 'export {}' }],
  ['POST', `/v1/projects/${ref}/functions`, { slug: `nul${NUL}fn`, body: 'export {}' }],
];

describe('NUL characters', () => {
  it('in any JSON body string or key: 400 with the Management error shape, nothing written', async () => {
    for (const [method, path, body] of nulCases()) {
      const r = await api(tp, method, path, { body });
      expectClientError(r, 400, `${method} ${path} ${JSON.stringify(body)}`);
    }
    const { rows } = await tp.platform.pool.query(
      `select (select count(*) from organizations where name like 'a%b') as orgs,
              (select count(*) from edge_functions where slug like 'nul%') as fns`,
    );
    expect(rows[0]).toEqual({ orgs: '0', fns: '0' });
  });

  it('names the field that holds it', async () => {
    const r = await api(tp, 'POST', `/v1/projects/${ref}/secrets`, {
      body: [{ name: 'A', value: `x${NUL}` }],
    });
    expect(r.body.message).toBe('0.value must not contain the NUL character (\\u0000)');
  });

  it('in a path or query parameter: 400', async () => {
    for (const path of [
      `/v1/projects/${ref}%00`,
      `/v1/organizations/default-org%00/members`,
      `/v1/projects/${ref}/functions/fn%00`,
      `/v1/projects/${ref}/types/typescript?included_schemas=public%00`,
      `/v1/projects?x=%00`,
    ]) {
      expectClientError(await api(tp, 'GET', path), 400, path);
    }
  });

  it('in a raw (non-JSON) function upload and its query: 400, never 500', async () => {
    const r = await api(tp, 'POST', `/v1/projects/${ref}/functions?slug=raw-nul&name=a%00b`, {
      rawBody: 'export default {}',
      headers: { 'content-type': 'application/typescript' },
    });
    expectClientError(r, 400, 'raw upload with NUL name');
  });
});

describe('malformed, huge and deep bodies', () => {
  it('malformed JSON is 400; a wrong content type 415', async () => {
    for (const raw of ['{"name":', '{name: 1}', '[1,]', '"\\u12"', '\u0000']) {
      const r = await api(tp, 'POST', '/v1/organizations', {
        rawBody: raw,
        headers: { 'content-type': 'application/json' },
      });
      expectClientError(r, 400, `malformed ${JSON.stringify(raw)}`);
    }
    const r = await api(tp, 'POST', '/v1/organizations', {
      rawBody: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expectClientError(r, 415, 'form body');
  });

  it('a body over the limit is 413', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(tp.config.bodyLimit + 10) });
    for (const path of ['/v1/organizations', `/v1/projects/${ref}/secrets`]) {
      const r = await api(tp, 'POST', path, {
        rawBody: big,
        headers: { 'content-type': 'application/json' },
      });
      expectClientError(r, 413, `huge body to ${path}`);
    }
  });

  it('deeply nested JSON is a 400 (validation), not a stack overflow', async () => {
    const depth = 100_000;
    for (const raw of [
      '['.repeat(depth) + ']'.repeat(depth),
      '{"a":'.repeat(depth) + '1' + '}'.repeat(depth),
    ]) {
      for (const [method, path] of [
        ['POST', `/v1/projects/${ref}/secrets`],
        ['POST', '/v1/organizations'],
        ['PATCH', `/v1/projects/${ref}/network-restrictions`],
      ] as const) {
        const r = await api(tp, method, path, {
          rawBody: raw,
          headers: { 'content-type': 'application/json' },
        });
        expectClientError(r, 400, `deep ${raw.slice(0, 5)} to ${path}`);
      }
    }
  });

  it('wrong types are 400', async () => {
    for (const [method, path, body] of [
      ['POST', '/v1/organizations', { name: 123 }],
      ['POST', '/v1/organizations', ['x']],
      ['POST', `/v1/projects/${ref}/secrets`, { name: 'x' }],
      ['POST', `/v1/projects/${ref}/secrets`, [{ name: ['x'], value: 'v' }]],
      ['DELETE', `/v1/projects/${ref}/secrets`, [1]],
      ['PUT', `/v1/projects/${ref}/pgsodium`, { root_key: 7 }],
    ] as const) {
      expectClientError(
        await api(tp, method, path, { body }),
        400,
        `${method} ${path} ${JSON.stringify(body)}`,
      );
    }
  });
});

describe('unpaired surrogates', () => {
  it('are stored as U+FFFD, and the answer says what was stored', async () => {
    const created = await api(tp, 'POST', '/v1/organizations', {
      rawBody: '{"name":"a\\ud800b\\udc00c"}',
      headers: { 'content-type': 'application/json' },
    });
    expect(created.status).toBe(201);
    expect(created.body.name).toBe('a\uFFFDb\uFFFDc');
    const read = await api(tp, 'GET', `/v1/organizations/${created.body.id}`);
    expect(read.body.name).toBe(created.body.name);
  });
});

describe('200 concurrent hostile requests', () => {
  it('all get a 4xx answer; then a normal request answers (within 5 s) and no pool client is checked out', async () => {
    const hostile: Array<() => Promise<ApiAnswer>> = [];
    const deep = '['.repeat(50_000) + ']'.repeat(50_000);
    for (let i = 0; i < 200; i++) {
      const k = i % 8;
      if (k === 0)
        hostile.push(() => api(tp, 'POST', '/v1/organizations', { body: { name: `n${NUL}${i}` } }));
      if (k === 1)
        hostile.push(() =>
          api(tp, 'POST', `/v1/projects/${ref}/secrets`, { body: [{ name: `S${i}`, value: `v${NUL}` }] }),
        );
      if (k === 2)
        hostile.push(() =>
          api(tp, 'POST', `/v1/projects/${ref}/secrets`, {
            rawBody: deep,
            headers: { 'content-type': 'application/json' },
          }),
        );
      if (k === 3)
        hostile.push(() =>
          api(tp, 'POST', '/v1/organizations', {
            rawBody: '{"a":',
            headers: { 'content-type': 'application/json' },
          }),
        );
      if (k === 4)
        hostile.push(() => api(tp, 'GET', `/v1/projects/${ref}`, { token: `sbp_${'0'.repeat(40)}` }));
      if (k === 5) hostile.push(() => api(tp, 'GET', `/v1/projects/${ref}%00/secrets`));
      if (k === 6)
        hostile.push(() =>
          api(tp, 'POST', `/v1/projects/${ref}/functions`, {
            body: { slug: `h${i}`, name: `x${NUL}`, body: 'x' },
          }),
        );
      if (k === 7)
        hostile.push(() =>
          api(tp, 'POST', `/v1/projects/${ref}/functions?slug=q${i}&name=%00`, {
            rawBody: 'x',
            headers: { 'content-type': 'application/typescript' },
          }),
        );
    }
    const answers = await Promise.all(hostile.map((f) => f()));
    const statuses = new Set(answers.map((a) => a.status));
    expect(
      [...statuses].every((s) => s >= 400 && s < 500),
      [...statuses].join(','),
    ).toBe(true);

    const res = await fetch(`${tp.url}/v1/projects/${ref}`, {
      headers: { authorization: `Bearer ${tp.platform.defaultAccessToken}` },
      signal: AbortSignal.timeout(5_000),
    });
    expect(res.status).toBe(200);
    const pool = tp.platform.pool;
    await eventually(() => pool.totalCount - pool.idleCount === 0, {
      timeoutMs: 5_000,
      intervalMs: 100,
    }).catch(() => {});
    expect({ checkedOut: pool.totalCount - pool.idleCount, waiting: pool.waitingCount }).toEqual({
      checkedOut: 0,
      waiting: 0,
    });
  }, 120_000);
});
