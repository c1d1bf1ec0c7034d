/**
 * pg_graphql parity: a cursor carries the order-by values and then the primary key, always (even
 * when the order-by already names a key column), and paging by it round-trips for every column
 * type a connection can be ordered by. Derived from pg_graphql's builder (pkey appended to every
 * order_by) and transpile (cursor = jsonb array of the order values).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupEnv, type Env } from './harness.js';

const TYPES: [string, string[]][] = [
  ['int2', ['1', '2', '3']],
  ['int4', ['-5', '0', '7']],
  ['int8', ['9007199254740993', '9007199254740994', '9007199254740995']],
  ['float4', ['1.25', '2.5', '3.75']],
  ['float8', ['0.1', '0.2', '0.30000000000000004']],
  ['numeric', ['12345678901234567890.123456789', '12345678901234567890.123456790', '99999999999999999999.5']],
  ['text', ["a'b", 'a"c', 'a,b\\d']],
  ['varchar(20)', ['x', 'y', 'z']],
  ['char(3)', ['ab', 'abc', 'b']],
  ['bool', ['true', 'false', 'true']],
  [
    'uuid',
    [
      '00000000-0000-0000-0000-000000000001',
      '00000000-0000-0000-0000-000000000002',
      'ffffffff-0000-0000-0000-000000000003',
    ],
  ],
  ['date', ['1999-12-31', '2000-01-01', '2024-02-29']],
  ['time', ['00:00:00', '12:34:56.789', '23:59:59']],
  ['timestamp', ['2000-01-01 00:00:00', '2000-01-01 00:00:00.000001', '2024-02-29 12:00:00']],
  ['timestamptz', ['2000-01-01 00:00:00+00', '2000-01-01 00:00:00.5+00', '2024-02-29 12:00:00+05']],
  ['mood', ['happy', 'ok', 'sad']],
];
const usable = TYPES;
const col = (t: string) => `c_${t.replace(/[^a-z0-9]/g, '_')}`;

const schema = `
comment on schema public is '@graphql({"inflect_names": false})';
create type mood as enum ('happy', 'ok', 'sad');
create table item (id int primary key, ${usable.map(([t]) => `${col(t)} ${t}`).join(', ')});
${[0, 1, 2]
  .map(
    (i) =>
      `insert into item values (${i + 1}, ${usable
        .map(([, v]) => (v[i] === undefined ? 'null' : `'${v[i]?.replace(/'/g, "''")}'`))
        .join(', ')});`,
  )
  .join('\n')}
create table pair (a int, b text, v int, primary key (a, b));
insert into pair values (1, 'x', 1), (1, 'y', 1), (2, 'x', 2), (2, 'y', 2);
create table scored (id int primary key, score int);
insert into scored values (1, null), (2, null), (4, 20);
`;

let env: Env;
beforeAll(async () => {
  env = await setupEnv(schema);
});
afterAll(() => env.close());

const decode = (c: string) => JSON.parse(Buffer.from(c, 'base64').toString('utf8')) as unknown[];
type Page = { edges: { cursor: string; node: { id: number } }[] };

describe('cursor contents', () => {
  it('is the order-by values then the whole primary key, even when the order-by names a key column', async () => {
    const r = (await env.gql(
      '{ item(orderBy: [{id: DescNullsLast}], first: 1) { edges { cursor } } }'.replace(
        'item(',
        'itemCollection(',
      ),
    )) as {
      data: { itemCollection: Page };
    };
    expect(decode(r.data.itemCollection.edges[0]?.cursor)).toEqual([3, 3]);
    const p = (await env.gql(
      '{ pairCollection(orderBy: [{b: DescNullsLast}, {a: AscNullsLast}], first: 1) { edges { cursor } } }',
    )) as {
      data: { pairCollection: { edges: { cursor: string }[] } };
    };
    expect(decode(p.data.pairCollection.edges[0]?.cursor)).toEqual(['y', 1, 1, 'y']);
  });

  it('pages stay stable with a key column in the order-by', async () => {
    const q = (after?: string) =>
      env.gql(
        `query($a: Cursor) { pairCollection(orderBy: [{a: DescNullsLast}], first: 1, after: $a) { edges { cursor node { a b } } } }`,
        { a: after ?? null },
      ) as Promise<{
        data: { pairCollection: { edges: { cursor: string; node: { a: number; b: string } }[] } };
      }>;
    const seen: string[] = [];
    let after: string | undefined;
    for (let i = 0; i < 5; i++) {
      const r = await q(after);
      const e = r.data.pairCollection.edges[0];
      if (!e) break;
      seen.push(`${e.node.a}${e.node.b}`);
      after = e.cursor;
    }
    expect(seen).toEqual(['2x', '2y', '1x', '1y']);
  });
});

describe('cursor round trip for every orderable type', () => {
  for (const [t] of usable) {
    it(`${t}: forward and backward from each row's cursor`, async () => {
      const c = col(t);
      const all = (await env.gql(
        `{ itemCollection(orderBy: [{${c}: AscNullsLast}]) { edges { cursor node { id } } } }`,
      )) as { data: { itemCollection: Page } };
      const edges = all.data.itemCollection.edges;
      expect(edges.length).toBeGreaterThan(1);
      for (let i = 0; i < edges.length; i++) {
        const after = (await env.gql(
          `query($c: Cursor) { itemCollection(orderBy: [{${c}: AscNullsLast}], after: $c) { edges { node { id } } } }`,
          { c: edges[i]?.cursor },
        )) as { data: { itemCollection: Page } };
        expect(after.data.itemCollection.edges.map((e) => e.node.id)).toEqual(
          edges.slice(i + 1).map((e) => e.node.id),
        );
        const before = (await env.gql(
          `query($c: Cursor) { itemCollection(orderBy: [{${c}: AscNullsLast}], before: $c) { edges { node { id } } } }`,
          { c: edges[i]?.cursor },
        )) as { data: { itemCollection: Page } };
        expect(before.data.itemCollection.edges.map((e) => e.node.id)).toEqual(
          edges.slice(0, i).map((e) => e.node.id),
        );
      }
    });
  }
});

describe('rows whose order key is NULL, against a non-null cursor', () => {
  // pg_graphql 1.6 compares the cursor plainly (NULL keys are on neither side), while its
  // hasPreviousPage asks whether the first row of the whole order is off the page.
  it('are not paged past, and count as rows before the page for hasPreviousPage', async () => {
    // cursor [10, 3]: a row that was deleted; the NULL rows 1 and 2 sort first
    const after = Buffer.from('[10, 3]').toString('base64');
    const res = await env.gql(
      `{ scoredCollection(first: 5, after: "${after}", orderBy: [{score: AscNullsFirst}]) { pageInfo { hasPreviousPage hasNextPage } edges { node { id } } } }`,
    );
    expect(res).toEqual({
      data: {
        scoredCollection: {
          pageInfo: { hasPreviousPage: true, hasNextPage: false },
          edges: [{ node: { id: 4 } }],
        },
      },
    });
  });
});

describe('hostile cursors', () => {
  it('are refused with pg_graphql messages, not SQL errors', async () => {
    const run = (c: string) =>
      env.gql('query($c: Cursor) { itemCollection(after: $c) { edges { node { id } } } }', { c });
    expect(await run('%%%')).toMatchObject({
      data: null,
      errors: [{ message: expect.stringMatching(/cursor/) }],
    });
    expect(await run(Buffer.from('{"a":1}').toString('base64'))).toMatchObject({ data: null });
    expect(await run(Buffer.from('[1,2,3,4]').toString('base64'))).toEqual({
      data: null,
      errors: [{ message: 'orderBy clause incompatible with pagination cursor' }],
    });
    const nul = await run(Buffer.from('["\\u0000"]').toString('base64'));
    expect(nul).toMatchObject({ data: null });
  });
});
