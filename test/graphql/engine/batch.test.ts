/**
 * resolveBatchWithPoolText: many variable sets of one document, each answer byte-identical to
 * resolveWithPoolText's alone, in one round trip and one statement per SQL text (per 500 sets).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { SAMPLE_SCHEMA, ownedItems, setupEnv, type Env } from './harness.js';
import { recordingPool, statementsOf } from './wire-tap.js';
import { resolveBatchWithPoolText, resolveWithPoolText } from '../../../src/graphql/engine.js';
import { lateralSql } from '../../../src/graphql/execute/batch-statements.js';
import { stopPreparing } from '../../../src/graphql/execute/prepared.js';

let env: Env;
let pool: pg.Pool;
/** The text of every message sent by `pool`'s clients. */
const sent: string[] = [];

beforeAll(async () => {
  env = await setupEnv(`${SAMPLE_SCHEMA}${ownedItems(30)}
    grant select on all tables in schema public to anon, authenticated;
    grant insert on blog to anon;
    grant usage on all sequences in schema public to anon;
    create function slow_echo(v text) returns text stable language plpgsql as $$
      begin perform pg_sleep(0.05); return v; end $$;
    grant execute on all functions in schema public to anon, authenticated;
  `);
  pool = recordingPool(env.db.url, sent);
});
afterAll(async () => {
  await pool.end();
  await env.close();
});

const anon = { role: 'anon', claims: { role: 'anon' } };
const user = (sub: string) => ({ role: 'authenticated', claims: { role: 'authenticated', sub } });
type Principal = typeof anon;

/** The messages and the request statements (not begin/commit/prepare, not the prelude) `work` sends. */
async function counted<T>(
  work: () => Promise<T>,
): Promise<{ value: T; messages: number; statements: number }> {
  const from = sent.length;
  const value = await work();
  const messages = sent.slice(from);
  if (process.env.DEBUG_BATCH) console.log(messages.map((m) => m.slice(0, 600)).join('\n----\n'));
  let statements = 0;
  for (const m of messages) {
    const parts = statementsOf(m);
    const begin = parts.findIndex((s) => /^begin$/i.test(s));
    // After begin: the prelude, the request's statements, commit.
    if (begin >= 0)
      statements += parts.slice(begin + 2).filter((s) => !/^(commit|rollback)\b/i.test(s)).length;
  }
  return { value, messages: messages.length, statements };
}

/** Each request alone, one after the other. */
async function alone(principal: Principal, query: string, sets: (Record<string, unknown> | null)[]) {
  const out: string[] = [];
  for (const variables of sets) out.push(await resolveWithPoolText(pool, principal, { query, variables }));
  return out;
}

/** The batch's answers equal each request's alone, byte for byte; the batch's counts. */
async function same(principal: Principal, query: string, sets: (Record<string, unknown> | null)[]) {
  // Warm: the catalog is loaded and the first sighting's plans made, so counts are the steady state's.
  await resolveWithPoolText(pool, principal, { query, variables: sets[0] ?? null });
  const batch = await counted(() =>
    resolveBatchWithPoolText(
      pool,
      principal,
      sets.map((variables) => ({ query, variables })),
    ),
  );
  const expected = await alone(principal, query, sets);
  expect(batch.value).toEqual(expected);
  if (process.env.DEBUG_COUNTS)
    console.log(sets.length, batch.messages, batch.statements, query.slice(0, 60), expected[1]);
  return { ...batch, expected };
}

describe('resolveBatchWithPoolText', () => {
  it('strings and ints of a template: one statement, answers byte-identical', async () => {
    const q =
      'query Q($name: String, $id: Int) { blogCollection(filter: {or: [{name: {eq: $name}}, {id: {eq: $id}}]}, orderBy: [{id: AscNullsLast}]) { edges { node { id name owner { email } } } } }';
    const sets = [
      { name: 'alpha', id: 3 },
      { name: 'beta', id: 0 },
      { name: "x' or '1'='1", id: 2 },
      { name: 'with "quotes" and \\ backslash, {braces}', id: -1 },
      { name: 'NULL', id: 1 },
      { name: '', id: 2 },
      { name: 'alpha', id: 3 },
    ];
    const r = await same(anon, q, sets);
    expect(r.messages).toBe(1);
    expect(r.statements).toBe(1);
    expect(r.expected[0]).toContain('"alpha"');
  });

  it('enums, uuids, nulls, length-checked strings: values planned per set share their SQL text', async () => {
    const posts =
      'query Q($s: PostStatus) { postCollection(filter: {status: {eq: $s}}, orderBy: [{id: AscNullsLast}]) { edges { node { id title status } } } }';
    const p = await same(anon, posts, [{ s: 'DRAFT' }, { s: 'PUBLISHED' }, { s: null }, { s: 'DRAFT' }]);
    expect(p.messages).toBe(1);
    expect(p.statements).toBeLessThanOrEqual(2);
    const accounts =
      'query Q($u: UUID, $e: String) { accountCollection(filter: {or: [{extId: {eq: $u}}, {email: {eq: $e}}]}) { edges { node { id email score balance big born wakes createdAt extId meta tags isAdmin } } } }';
    const a = await same(anon, accounts, [
      { u: '11111111-1111-1111-1111-111111111111', e: 'c@x.com' },
      { u: '22222222-2222-2222-2222-222222222222', e: null },
      { u: null, e: 'b@x.com' },
      { u: '33333333-3333-3333-3333-333333333333', e: 'nobody' },
      { u: null, e: null },
    ]);
    expect(a.messages).toBe(1);
    expect(a.statements).toBe(1);
    // An enum value that is not one: the plan's error, in the same round trip as the others' statements.
    const bad = await same(anon, posts, [{ s: 'DRAFT' }, { s: 'NOPE' }, { s: 'PUBLISHED' }]);
    expect(bad.messages).toBe(1);
    expect(JSON.parse(bad.expected[1] as string)).toMatchObject({
      errors: [{ message: expect.any(String) }],
    });
  });

  it('lists in `in` filters and cursors', async () => {
    const lists =
      'query Q($ids: [Int!]) { accountCollection(filter: {id: {in: $ids}}, orderBy: [{id: DescNullsLast}]) { edges { node { id } } } }';
    const l = await same(anon, lists, [
      { ids: [1, 2] },
      { ids: [3] },
      { ids: [] },
      { ids: [2, 3, 1] },
      { ids: null },
    ]);
    expect(l.messages).toBe(1);
    const page =
      'query P($after: Cursor) { accountCollection(first: 1, after: $after) { edges { cursor node { id } } pageInfo { hasNextPage endCursor } } }';
    const first = JSON.parse(
      await resolveWithPoolText(pool, anon, { query: page, variables: { after: null } }),
    ) as {
      data: { accountCollection: { pageInfo: { endCursor: string } } };
    };
    const c1 = first.data.accountCollection.pageInfo.endCursor;
    const second = JSON.parse(
      await resolveWithPoolText(pool, anon, { query: page, variables: { after: c1 } }),
    ) as {
      data: { accountCollection: { pageInfo: { endCursor: string } } };
    };
    const c2 = second.data.accountCollection.pageInfo.endCursor;
    const c = await same(anon, page, [
      { after: c1 },
      { after: c2 },
      { after: null },
      { after: 'not a cursor' },
      { after: c1 },
    ]);
    expect(c.messages).toBe(1);
    expect(c.expected[1]).toContain('"id" : 3');
  });

  it('a variable absent or present (different SQL), several root fields, introspection, aggregates', async () => {
    const q = `query Q($e: String, $n: Int, $t: String!) {
      blogCollection(filter: {name: {eq: $e}}) { totalCount: __typename edges { node { name } } }
      accountCollection(filter: {id: {gte: $n}}) { totalCount aggregate { count sum { score } avg { balance } } }
      accountByPk(id: $n) { email blogCount displayName: display }
      add(a: $n)
      __type(name: $t) { name }
      __typename
    }`;
    const r = await same(anon, q, [
      { n: 1, t: 'Blog' },
      { e: 'alpha', n: 2, t: 'Account' },
      { e: null, n: 3, t: 'Nope' },
      { e: 'beta', n: 1, t: 'Blog' },
      { n: 2, t: 'Post' },
    ]);
    expect(r.messages).toBe(1);
    // Per root field with SQL: sets of the same text in one statement; the absent filter is another text.
    expect(r.statements).toBe(5);
  });

  it('RLS follows the role and claims: each principal sees its rows', async () => {
    const q =
      'query Q($p: String) { itemCollection(filter: {name: {startsWith: $p}}, orderBy: [{id: AscNullsLast}]) { edges { node { id name owner } } } }';
    const sets = [{ p: 'item1' }, { p: 'item2' }, { p: 'item' }, { p: 'nope' }];
    for (const who of ['u0', 'u1', 'u2', 'u9']) {
      const r = await same(user(who), q, sets);
      expect(r.messages).toBe(1);
      expect(r.statements).toBe(1);
      if (who !== 'u9') expect(r.expected[2]).toContain(`"owner" : "${who}"`);
    }
    const none = await same(anon, q, sets);
    expect(none.expected[2]).toBe('{"data":{"itemCollection":{"edges" : []}}}');
  });

  it('a set whose value PostgreSQL refuses gets its own error, the others their answers', async () => {
    const q = 'query Q($u: UUID) { accountCollection(filter: {extId: {eq: $u}}) { edges { node { id } } } }';
    const sets: Record<string, unknown>[] = Array.from({ length: 64 }, (_, k) => ({
      u: `${(k % 3 ? k : 1).toString(16).padStart(8, '1')}-1111-1111-1111-111111111111`,
    }));
    sets[17] = { u: 'not-a-uuid' };
    const r = await same(anon, q, sets);
    expect(JSON.parse(r.expected[17] as string)).toEqual({
      data: null,
      errors: [{ message: 'invalid input syntax for type uuid: "not-a-uuid"' }],
    });
    expect(r.expected[0]).toContain('"id" : 1');
    // The joined sets fail, then each set as its own statement (one message), then halves down to
    // the one set: per level a failed message (and its two rollbacks) and a good one.
    expect(r.messages).toBeLessThanOrEqual(3 + 4 * Math.log2(64) + 4);
    // Every set refused: each its own error.
    await same(anon, q, [{ u: 'x' }, { u: 'y' }, { u: 'z' }]);
  });

  it("joined sets that outlast the role's statement_timeout: each set as its own statement", async () => {
    // 70 sets of 50 ms: 3.5 s joined, over anon's 3 s; each alone well within it.
    const q = 'query Q($v: String!) { slowEcho(v: $v) }';
    const sets = Array.from({ length: 70 }, (_, k) => ({ v: `v${k}` }));
    const r = await counted(() =>
      resolveBatchWithPoolText(
        pool,
        anon,
        sets.map((variables) => ({ query: q, variables })),
      ),
    );
    expect(r.value).toEqual(sets.map((s) => `{"data":{"slowEcho":"${s.v}"}}`));
    expect(r.value.slice(0, 3)).toEqual(await alone(anon, q, sets.slice(0, 3)));
    // The joined statement (cancelled), its two rollbacks, then one message of 70 statements.
    expect(r.messages).toBe(4);
    expect(r.statements).toBe(1 + 70);
  });

  it('1,000 variable sets: one round trip, two statements', async () => {
    const q = 'query Q($id: Int!) { itemByPk(id: $id) { id name owner } }';
    const sets = Array.from({ length: 1000 }, (_, k) => ({ id: k % 40 }));
    const r = await same(user('u1'), q, sets);
    expect(r.messages).toBe(1);
    expect(r.statements).toBe(1);
    const distinct = Array.from({ length: 1000 }, (_, k) => ({ id: k }));
    const d = await same(user('u2'), q, distinct);
    expect(d.messages).toBe(1);
    expect(d.statements).toBe(2);
    expect(d.expected[2]).toBe('{"data":{"itemByPk":{"id" : 2, "name" : "item2", "owner" : "u2"}}}');
    expect(d.expected[999]).toBe('{"data":{"itemByPk":null}}');
    const small = await counted(() =>
      resolveBatchWithPoolText(
        pool,
        user('u2'),
        distinct.slice(0, 10).map((variables) => ({ query: q, variables })),
        { maxPerStatement: 3 },
      ),
    );
    expect(small.value).toEqual(d.expected.slice(0, 10));
    expect(small.statements).toBe(4);
  });

  it('refused variables, parse errors and mutations answer as alone', async () => {
    const q = 'query Q($n: String) { blogCollection(filter: {name: {eq: $n}}) { edges { node { id } } } }';
    await same(anon, q, [{ n: 'alpha' }, { n: 'a\u0000b' }, { n: 'beta' }]);
    await same(anon, 'query { x', [null, null]);
    const m =
      'mutation M($n: String!) { insertIntoBlogCollection(objects: [{ownerId: 1, name: $n}]) { affectedCount records { name } } }';
    const out = await resolveBatchWithPoolText(pool, anon, [
      { query: m, variables: { n: 'm1' } },
      { query: m, variables: { n: 'm2' } },
    ]);
    expect(out).toEqual([
      '{"data":{"insertIntoBlogCollection":{"affectedCount" : 1, "records" : [{"name" : "m1"}]}}}',
      '{"data":{"insertIntoBlogCollection":{"affectedCount" : 1, "records" : [{"name" : "m2"}]}}}',
    ]);
    expect(await resolveBatchWithPoolText(pool, anon, [])).toEqual([]);
  });

  it('a schema change since the catalog was cached: reloaded and planned again', async () => {
    const q =
      'query Q($n: String) { blogCollection(filter: {name: {eq: $n}}) { edges { node { id name } } } }';
    await resolveBatchWithPoolText(pool, anon, [
      { query: q, variables: { n: 'alpha' } },
      { query: q, variables: { n: 'beta' } },
    ]);
    await env.client.query('alter table blog add column note text');
    await env.client.query("update blog set note = 'n-' || name");
    const withNote = q.replace('id name', 'id name note');
    const sets = [{ n: 'alpha' }, { n: 'beta' }];
    // The batch is the first to see the change: its guard fails, the catalog is reloaded, it runs again.
    const r = await counted(() =>
      resolveBatchWithPoolText(
        pool,
        anon,
        sets.map((variables) => ({ query: withNote, variables })),
      ),
    );
    expect(r.messages).toBeGreaterThan(1);
    expect(r.value).toEqual(await alone(anon, withNote, sets));
    expect(r.value[0]).toContain('"note" : "n-alpha"');
  });

  it('a pool that prepares nothing (transaction-mode pooler): the values inlined, the same answers', async () => {
    const inlined = new pg.Pool({ connectionString: env.db.url, max: 1 });
    try {
      stopPreparing(inlined);
      const q =
        'query Q($n: String, $s: PostStatus) { blogCollection(filter: {name: {eq: $n}}) { edges { node { name postCollection(filter: {status: {eq: $s}}) { edges { node { title status } } } } } } }';
      const sets = [
        { n: 'alpha', s: 'DRAFT' },
        { n: 'it\'s \\ {"x"}', s: 'PUBLISHED' },
        { n: 'alpha', s: 'PUBLISHED' },
        { n: 'gamma', s: null },
      ];
      const out = await resolveBatchWithPoolText(
        inlined,
        anon,
        sets.map((variables) => ({ query: q, variables })),
      );
      expect(out).toEqual(await alone(anon, q, sets));
      expect(out[0]).toContain('"title" : "p2"');
    } finally {
      await inlined.end();
    }
  });
});

describe('lateralSql', () => {
  it('replaces only placeholders outside literals and quoted identifiers, each cast kept', () => {
    const sql = `select "a$1", 'b $2', E'c\\' $1', t.x from t where t."$2" = $1::"pg_catalog"."text" and t.y = any($2::"pg_catalog"."int4"[])`;
    expect(lateralSql(sql, 2)).toBe(
      'select __strata_batch.i, __strata_result.v from rows from (unnest($1::"pg_catalog"."text"[]), unnest($2::"pg_catalog"."text"[])) with ordinality as __strata_batch(p1, p2, i)' +
        ` left join lateral (select "a$1", 'b $2', E'c\\' $1', t.x from t where t."$2" = __strata_batch.p1::"pg_catalog"."text" and t.y = any(__strata_batch.p2::"pg_catalog"."int4"[])) as __strata_result(v) on true`,
    );
  });
  it('declines a placeholder without a cast, used twice, or missing', () => {
    expect(lateralSql('select $1', 1)).toBeUndefined();
    expect(lateralSql('select $1::int, $1::int', 1)).toBeUndefined();
    expect(lateralSql('select $1::int', 2)).toBeUndefined();
    expect(lateralSql('select 1', 0)).toBeUndefined();
  });
});
