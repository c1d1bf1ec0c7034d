/**
 * Live queries refreshed by merging changed rows (src/realtime/newest-rows.ts): which queries have
 * the shape (read-set.ts AppendShape), the keys a commit changed, the rows document, the merge;
 * and, against a running platform with logical replication, that every merged result is what the
 * query answers at that moment — inserts, updates that move rows in and out of a user's view,
 * deletes from a full page (run whole), another user's rows never shown.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from 'graphql-ws';
import pg from 'pg';
import { parse } from 'graphql';
import { tableKey, type Commit } from '../../src/realtime/change-feed.js';
import {
  changedKeys,
  MAX_MERGED_KEYS,
  mergedResult,
  rowsDocument,
  wholeResult,
  type NewestBase,
} from '../../src/realtime/newest-rows.js';
import type { AppendShape, SetScope } from '../../src/realtime/read-set.js';
import { sees, snapshotOf } from '../../src/realtime/snapshot-check.js';
import { Scopes } from '../../src/realtime/scopes.js';
import type { ProjectContext } from '../../src/platform/project-context.js';
import type { TestPlatform } from '../support/platform.js';
import { eventually } from '../support/eventually.js';
import { sql, startRealtimePlatform, subscribe, userToken, wsClient, wsUrl, type Json } from './support.js';

const SHAPE: AppendShape = {
  table: tableKey('public', 'msg'),
  column: 'id',
  desc: true,
  limit: 3,
  filterField: 'id',
  scalar: 'BigInt',
  rootKey: 'msgCollection',
  edgesKey: 'edges',
  nodeKey: 'node',
  keyKey: 'id',
  rootShared: false,
  children: new Map([[tableKey('public', 'reply'), 'msg_id']]),
};

const scope = (tables: string[], append: AppendShape | null = SHAPE): SetScope => ({
  version: 1,
  any: false,
  tables: new Set(tables.map((t) => tableKey('public', t))),
  claims: new Set(),
  ...(append ? { append } : {}),
});

const commit = (changes: Commit['changes'], extra: Partial<Commit> = {}): Commit => ({
  lsn: 1n,
  tables: new Set((changes ?? []).map((c) => tableKey(c.schema, c.table))),
  changes,
  ...extra,
});
const ins = (table: string, id: string | null) =>
  ({ schema: 'public', table, op: 'INSERT', new: { id, body: 'x' } }) as const;

describe('the keys a commit changed', () => {
  const s = scope(['msg', 'room', 'reply']);
  it('inserts, updates (old and new key) and deletes of the shape table', () => {
    const changed = changedKeys(s, [
      commit([ins('msg', '5'), ins('msg', ' 6')], { xid: 70 }),
      commit([
        { schema: 'public', table: 'msg', op: 'UPDATE', new: { id: '2' } },
        { schema: 'public', table: 'msg', op: 'UPDATE', new: { id: '9' }, old: { id: '3' } },
        { schema: 'public', table: 'msg', op: 'DELETE', old: { id: '1' } },
      ]),
      // A table the set does not read changes nothing for it.
      commit([ins('other', '77')]),
      // A row updated first: not created by these commits.
      commit([ins('msg', '2')], { xid: 72 }),
    ]);
    expect(changed?.keys).toEqual(['5', '6', '2', '9', '3', '1']);
    expect(changed?.created).toEqual(
      new Map([
        ['5', 70],
        ['6', 70],
      ]),
    );
    expect(changed?.nested).toBe(false);
  });
  it('a nested row changes the root row its foreign key names (old and new)', () => {
    const reply = (op: 'INSERT' | 'UPDATE' | 'DELETE', n?: string, o?: string) => ({
      schema: 'public',
      table: 'reply',
      op,
      ...(n ? { new: { id: '100', msg_id: n } } : {}),
      ...(o ? { old: { id: '100', msg_id: o } } : {}),
    });
    expect(
      changedKeys(s, [
        commit([reply('INSERT', '4'), reply('UPDATE', '5', '6'), reply('DELETE', undefined, '7')]),
      ]),
    ).toEqual({ keys: ['4', '5', '6', '7'], created: new Map(), nested: true });
    // Without the old row (no REPLICA IDENTITY FULL) the row may have left another root row.
    expect(changedKeys(s, [commit([reply('UPDATE', '5')])])).toBeUndefined();
    // The root table read elsewhere too (a nested policy reads it): its changes run whole.
    expect(
      changedKeys({ ...s, append: { ...SHAPE, rootShared: true } }, [commit([ins('msg', '1')])]),
    ).toBeUndefined();
    expect(
      changedKeys({ ...s, append: { ...SHAPE, rootShared: true } }, [commit([reply('INSERT', '4')])])?.keys,
    ).toEqual(['4']);
  });
  it("a root row whose every logged image fails the set's filter equalities is left out", () => {
    const room1: SetScope = {
      ...s,
      insertFilter: {
        table: tableKey('public', 'msg'),
        constraints: [{ column: 'room', kind: 'int', values: new Set(['1']) }],
      },
    };
    const row = (id: string, room: string) => ({ id, room });
    const changed = changedKeys(room1, [
      commit([
        { schema: 'public', table: 'msg', op: 'INSERT', new: row('20', '2') },
        { schema: 'public', table: 'msg', op: 'INSERT', new: row('21', '1') },
        // Moved out of room 1: its old image meets the filter.
        { schema: 'public', table: 'msg', op: 'UPDATE', new: row('5', '2'), old: row('5', '1') },
        { schema: 'public', table: 'msg', op: 'UPDATE', new: row('6', '3'), old: row('6', '2') },
        // No old image: it may have been in room 1.
        { schema: 'public', table: 'msg', op: 'UPDATE', new: row('7', '3') },
        { schema: 'public', table: 'msg', op: 'DELETE', old: row('8', '2') },
        // Only the key logged: the room is not known.
        { schema: 'public', table: 'msg', op: 'DELETE', old: { id: '9' } },
      ]),
    ]);
    expect(changed?.keys).toEqual(['21', '5', '7', '9']);
  });
  it('anything else: undefined (the query runs whole)', () => {
    const cases: Commit[][] = [
      [commit([ins('room', '1')])],
      [commit([{ schema: 'public', table: 'msg', op: 'TRUNCATE' }])],
      [commit([{ schema: 'public', table: 'msg', op: 'DELETE' }])],
      [commit([ins('msg', null)])],
      [commit([ins('msg', 'abc')])],
      [commit(undefined, { tables: new Set([tableKey('public', 'msg')]) })],
      [commit([ins('other', '1')], { anyTable: true })],
      [commit(Array.from({ length: MAX_MERGED_KEYS + 1 }, (_, i) => ins('msg', String(i))))],
    ];
    for (const c of cases) expect(changedKeys(s, c)).toBeUndefined();
    expect(changedKeys(scope(['msg'], null), [commit([ins('msg', '1')])])).toBeUndefined();
    expect(changedKeys({ ...s, any: true }, [commit([ins('msg', '1')])])).toBeUndefined();
    // Too many rows for the commit to list, on a table the set does not read: nothing for it.
    expect(
      changedKeys(s, [commit(undefined, { tables: new Set([tableKey('public', 'other')]) })])?.keys,
    ).toEqual([]);
  });
});

describe('the rows document', () => {
  it("adds the keys to the root field's filter (or makes it), with a variable of its own", () => {
    const q =
      'query Q($room: Int!, $strataKeys: Int) { msgCollection(filter: {roomId: {eq: $room}}, first: 3) { edges { node { id } } } }';
    const doc = rowsDocument(q, 'Q', SHAPE);
    expect(doc?.variable).toBe('strataKeys1');
    const printed = parse(doc?.query ?? '');
    const op = printed.definitions[0] as Json;
    expect(op.variableDefinitions.map((v: Json) => v.variable.name.value)).toEqual([
      'room',
      'strataKeys',
      'strataKeys1',
    ]);
    expect(doc?.query).toContain('filter: {and: [{roomId: {eq: $room}}, {id: {in: $strataKeys1}}]}');
    expect(doc?.query).toContain('$strataKeys1: [BigInt!]');
    const bare = rowsDocument(
      '{ __typename msgCollection(first: 3) { edges { node { id } } } }',
      null,
      SHAPE,
    );
    expect(bare?.query).toContain('msgCollection(first: 3, filter: {id: {in: $strataKeys}})');
  });
  it('none for a filter given as a variable, another root field, a fragment, or a bad document', () => {
    const none = [
      'query ($f: MsgFilter) { msgCollection(filter: $f) { edges { node { id } } } }',
      '{ other: msgCollection { edges { node { id } } } }',
      'query { ...F } fragment F on Query { msgCollection { edges { node { id } } } }',
      '{ msgCollection { edges { node { id } } }',
    ];
    for (const q of none) expect(rowsDocument(q, null, SHAPE)).toBeUndefined();
    expect(rowsDocument('query A { msgCollection { edges { node { id } } } }', 'B', SHAPE)).toBeUndefined();
  });
});

describe('the merge', () => {
  const result = (ids: (string | number)[], extra: Json = {}) =>
    JSON.stringify({
      data: {
        msgCollection: {
          __typename: 'MsgConnection',
          edges: ids.map((id) => ({ node: { id, body: `b${id}` } })),
        },
      },
      ...extra,
    });
  const ch = (keys: (string | number)[], created: [string, number][] = []) => ({
    keys: keys.map(String),
    created: new Map(created),
    nested: false,
  });
  const ids = (text: string) => JSON.parse(text).data.msgCollection.edges.map((e: Json) => e.node.id);
  const base = (list: (string | number)[], shape = SHAPE) =>
    wholeResult(shape, result(list)).base as NonNullable<ReturnType<typeof wholeResult>['base']>;

  it('new rows enter in key order, the page keeps its limit, a changed row is replaced', () => {
    const m = mergedResult(SHAPE, base(['9', '7', '5']), ch(['10', '7']), result(['10', '7']));
    expect(ids(m?.text ?? '')).toEqual(['10', '9', '7']);
    // A row seen already (an earlier snapshot had it) is there once.
    expect(ids(mergedResult(SHAPE, base(['9', '7']), ch(['9']), result(['9']))?.text ?? '')).toEqual([
      '9',
      '7',
    ]);
    // Ascending, Int keys.
    const asc = { ...SHAPE, desc: false, scalar: 'Int' as const, limit: 5 };
    expect(ids(mergedResult(asc, base([1, 2], asc), ch([3, 0]), result([0, 3]))?.text ?? '')).toEqual([
      0, 1, 2, 3,
    ]);
    // The text is the result's JSON as JSON.stringify writes it, keys in their order.
    expect(m?.text.startsWith('{"data":{"msgCollection":{"__typename":"MsgConnection","edges":[')).toBe(true);
  });
  it('a row leaving a page that is not full: gone; leaving a full page: not known (runs whole)', () => {
    expect(
      ids(mergedResult({ ...SHAPE, limit: 5 }, base(['9', '7']), ch(['7']), result([]))?.text ?? ''),
    ).toEqual(['9']);
    expect(mergedResult(SHAPE, base(['9', '7', '5']), ch(['7']), result([]))).toBeUndefined();
    // A full page whose left row is replaced by a new one within it: known.
    expect(
      ids(mergedResult(SHAPE, base(['9', '7', '5']), ch(['7', '8']), result(['8']))?.text ?? ''),
    ).toEqual(['9', '8', '5']);
    // A changed row past a full page's end stays out: the rows between are not known.
    expect(ids(mergedResult(SHAPE, base(['9', '7', '5']), ch(['2']), result(['2']))?.text ?? '')).toEqual([
      '9',
      '7',
      '5',
    ]);
  });
  it('a count: less the changed rows the base counted (its edges), plus the rows counted now; a row of unknown standing runs whole', () => {
    // (A base of limit 2, descending: its page lists every counted row from its first key to 7.)
    const COUNT = { ...SHAPE, limit: 2, countKey: 'totalCount' };
    const page = (list: string[], n: number) =>
      JSON.stringify({
        data: { msgCollection: { totalCount: n, edges: list.map((id) => ({ node: { id } })) } },
      });
    const counted = (list: string[], n: number) => {
      const b = wholeResult(COUNT, page(list, n)).base as NewestBase;
      b.upper = snapshotOf('100:105:102');
      return b;
    };
    const read = (text: string | undefined) => {
      const c = JSON.parse(text ?? 'null')?.data.msgCollection;
      return c && [c.totalCount, c.edges.map((e: Json) => e.node.id)];
    };
    // Keys within the page (here: after 7, descending) that it does not list were not counted,
    // whatever created them.
    expect(
      read(
        mergedResult(COUNT, counted(['9', '7'], 7), ch(['10', '11'], [['10', 101]]), page(['11', '10'], 2))
          ?.text,
      ),
    ).toEqual([9, ['11', '10']]);
    // Past the page: created by transactions the snapshot after the base did not see (102 was
    // running, 105 ≥ xmax), not counted; by one it saw, maybe counted (unknown).
    expect(
      read(
        mergedResult(
          COUNT,
          counted(['9', '7'], 7),
          ch(
            ['5', '4'],
            [
              ['5', 105],
              ['4', 102],
            ],
          ),
          page(['5', '4'], 2),
        )?.text,
      ),
    ).toEqual([9, ['9', '7']]);
    expect(
      mergedResult(COUNT, counted(['9', '7'], 7), ch(['5'], [['5', 101]]), page(['5'], 1)),
    ).toBeUndefined();
    // A page that is not full lists every row it counted.
    expect(
      read(mergedResult({ ...COUNT, limit: 3 }, counted(['9', '7'], 2), ch(['5']), page(['5'], 1))?.text),
    ).toEqual([3, ['9', '7', '5']]);
    // A counted row changed (an edge): out and in again, or gone.
    expect(read(mergedResult(COUNT, counted(['9', '7'], 7), ch(['9']), page(['9'], 1))?.text)).toEqual([
      7,
      ['9', '7'],
    ]);
    expect(
      read(
        mergedResult(COUNT, counted(['9', '7'], 7), ch(['9', '12'], [['12', 110]]), page(['12'], 1))?.text,
      ),
    ).toEqual([7, ['12', '7']]);
    // A row past the page that was there before (not created here): unknown.
    expect(mergedResult(COUNT, counted(['9', '7'], 7), ch(['3']), page([], 0))).toBeUndefined();
    // No snapshot after the base, or a nested change: unknown.
    const bare = wholeResult(COUNT, page(['9', '7'], 7)).base as NewestBase;
    expect(mergedResult(COUNT, bare, ch(['5'], [['5', 105]]), page(['5'], 1))).toBeUndefined();
    expect(
      mergedResult(COUNT, counted(['9', '7'], 7), { ...ch(['9']), nested: true }, page(['9'], 1)),
    ).toBeUndefined();
    // A count that is not a count is no base.
    expect(wholeResult(COUNT, page(['9'], -1)).base).toBeUndefined();
  });
  it('sees: 32-bit ids in the epoch of the snapshot', () => {
    const s = snapshotOf(`${2 ** 32 + 10}:${2 ** 32 + 20}:${2 ** 32 + 12}`) as NonNullable<
      ReturnType<typeof snapshotOf>
    >;
    expect([5, 11, 12, 19, 20, 25].map((x) => sees(s, x))).toEqual([true, true, false, true, false, false]);
    expect(snapshotOf('1:2')).toBeUndefined();
  });
  it('an error result is no base, and an error in the rows is no merge', () => {
    expect(wholeResult(SHAPE, result(['1'], { errors: [{ message: 'x' }] })).base).toBeUndefined();
    expect(wholeResult(SHAPE, '{"data":null,"errors":[{"message":"x"}]}').base).toBeUndefined();
    expect(wholeResult(SHAPE, 'not json')).toEqual({ text: 'not json' });
    expect(wholeResult(SHAPE, result([1.5])).base).toBeUndefined();
    expect(
      mergedResult(SHAPE, base(['1']), ch(['2']), '{"data":null,"errors":[{"message":"x"}]}'),
    ).toBeUndefined();
  });
});

let tp: TestPlatform;
let project: ProjectContext;
const clients: Client[] = [];

const TABLES = `
  create table public.msg (id bigserial primary key, room int not null, owner text not null, body text not null);
  alter table public.msg enable row level security;
  create policy own on public.msg for select to authenticated using (owner = auth.jwt() ->> 'sub');
  create table public.tick (id int primary key, n int not null);
  grant select on public.msg, public.tick to authenticated;
  insert into public.msg (room, owner, body) select r, o, o || ' seed ' || r
    from generate_series(1, 2) r, unnest(array['alice', 'bob']) o;
  insert into public.tick values (1, 0);
  comment on table public.msg is '@graphql({"totalCount": {"enabled": true}})';
  create table public.thread (id int primary key, title text not null);
  create table public.reply (id bigserial primary key, thread_id int not null references public.thread, owner text not null, body text not null);
  comment on table public.reply is '@graphql({"totalCount": {"enabled": true}})';
  alter table public.reply replica identity full;
  alter table public.reply enable row level security;
  create policy own on public.reply for select to authenticated using (owner = auth.jwt() ->> 'sub');
  grant select on public.thread, public.reply to authenticated;
  insert into public.thread values (1, 't1'), (2, 't2'), (3, 't3');
  insert into public.reply (thread_id, owner, body) values (1, 'alice', 'r0');`;

const LAST3 =
  'subscription ($room: Int!) { msgCollection(filter: {room: {eq: $room}}, orderBy: [{id: DescNullsLast}], first: 3) { edges { cursor node { id nodeId owner body } } } }';
const QUERY_LAST3 = LAST3.replace(/^subscription/, 'query');
const BADGE =
  'subscription ($room: Int!) { msgCollection(filter: {room: {eq: $room}}, orderBy: [{id: DescNullsLast}], first: 1) { totalCount edges { node { id owner body } } } }';
const THREADS =
  'subscription { threadCollection(orderBy: [{id: AscNullsLast}], first: 2) { edges { node { id title replyCollection(orderBy: [{id: DescNullsLast}], first: 1) { totalCount edges { node { body owner } } } } } } }';

beforeAll(async () => {
  ({ tp, project } = await startRealtimePlatform({ intervalMs: 600_000, replication: true }));
  await sql(project, TABLES);
});

afterAll(async () => {
  for (const c of clients) await c.dispose();
  await tp?.close();
});

describe('which live queries merge (the append shape)', () => {
  const shapeOf = async (query: string, variables: Record<string, unknown> | null = null) => {
    const pool = new pg.Pool({ connectionString: project.superuserUrl, max: 2 });
    try {
      const s = await new Scopes(pool, () => {}).scopeOf(
        { role: 'authenticated', claims: { sub: 'alice', role: 'authenticated' } },
        // (Only the query, its operation and variables are read: the scope is the query's.)
        { query, operationName: null, variables, field: '', document: parse(query) },
      );
      return s.append;
    } finally {
      await pool.end();
    }
  };
  it('the first rows by the integer key, filtered, edges only', async () => {
    expect(await shapeOf(QUERY_LAST3, { room: 1 })).toEqual({ ...SHAPE, children: new Map() });
    const aliased = await shapeOf('{ m: msgCollection { __typename e: edges { n: node { k: id body } } } }');
    expect(aliased).toMatchObject({
      desc: false,
      limit: 30,
      rootKey: 'm',
      edgesKey: 'e',
      nodeKey: 'n',
      keyKey: 'k',
    });
  });
  it.each([
    ['pageInfo', '{ msgCollection(first: 3) { pageInfo { hasNextPage } edges { node { id } } } }'],
    ['totalCount twice', '{ msgCollection(first: 3) { a: totalCount b: totalCount edges { node { id } } } }'],
    [
      'an order by another column',
      '{ msgCollection(orderBy: [{room: AscNullsLast}]) { edges { node { id } } } }',
    ],
    ['offset', '{ msgCollection(first: 3, offset: 1) { edges { node { id } } } }'],
    ['last', '{ msgCollection(last: 3) { edges { node { id } } } }'],
    ['no key selected', '{ msgCollection(first: 3) { edges { node { body } } } }'],
    [
      'two root fields',
      '{ msgCollection { edges { node { id } } } tickCollection { edges { node { id } } } }',
    ],
    ['edges twice', '{ msgCollection { a: edges { node { id } } b: edges { node { id } } } }'],
    ['a cursor to start after', '{ msgCollection(first: 2, after: "WzFd") { edges { node { id } } } }'],
  ])('not for %s', async (_name, query) => {
    expect(await shapeOf(query)).toBeUndefined();
  });
});

type User = 'alice' | 'bob';

/** Alice's and Bob's live queries of one document, and a check that each last result is the query's answer now. */
async function follow(subscription: string, variables: Record<string, unknown>) {
  const tokens = { alice: await userToken(project, 'alice'), bob: await userToken(project, 'bob') };
  const users = ['alice', 'bob'] as const;
  const streams = Object.fromEntries(
    users.map((u) => {
      const c = wsClient(wsUrl(tp), { apikey: project.anonKey, Authorization: `Bearer ${tokens[u]}` });
      clients.push(c);
      return [u, subscribe(c, subscription, variables)];
    }),
  ) as Record<User, ReturnType<typeof subscribe>>;
  const query = async (u: User) => {
    const res = await fetch(`${tp.url}/graphql/v1`, {
      method: 'POST',
      headers: {
        apikey: project.anonKey,
        authorization: `Bearer ${tokens[u]}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ query: subscription.replace(/^subscription/, 'query'), variables }),
    });
    return res.json();
  };
  const agree = async () => {
    for (const u of users) {
      const want = await query(u);
      await eventually(
        async () => {
          const last = streams[u].results.at(-1);
          return JSON.stringify(last) === JSON.stringify(await query(u)) && last;
        },
        { timeoutMs: 10_000, intervalMs: 50 },
      ).catch(() => {
        throw new Error(`${u}: ${JSON.stringify(streams[u].results.at(-1))} vs ${JSON.stringify(want)}`);
      });
    }
  };
  await agree();
  await eventually(() => tp.realtime.stats().feeds === 1, { timeoutMs: 10_000, intervalMs: 20 });
  return { streams, agree };
}

describe("merged results are the query's results", () => {
  it('inserts, updates in and out of view, deletes (a full page runs whole): each user sees what the query shows', async () => {
    const { streams, agree } = await follow(LAST3, { room: 1 });
    const merged0 = tp.realtime.stats().merged;
    const steps = [
      // Two of alice's, one of bob's, one in another room.
      `insert into public.msg (room, owner, body) values (1, 'alice', 'a1'), (1, 'alice', 'a2'), (1, 'bob', 'b1'), (2, 'alice', 'other room')`,
      `insert into public.msg (room, owner, body) values (1, 'alice', 'a3')`,
      // Out of alice's view, into bob's (a row of alice's page: alice's page is full, runs whole).
      `update public.msg set owner = 'bob' where body = 'a2'`,
      // Edited in place.
      `update public.msg set body = 'a3 edited' where body = 'a3'`,
      // A key change: old key gone, new key in.
      `update public.msg set id = 1000 where body = 'b1'`,
      `delete from public.msg where body = 'a3 edited'`,
      `insert into public.msg (room, owner, body) select 1, 'alice', 'burst ' || g from generate_series(1, 5) g`,
      // A table the query does not read.
      'update public.tick set n = n + 1',
    ];
    for (const step of steps) {
      await sql(project, step);
      await agree();
    }
    // Some refreshes merged (what each did is timing: a commit may come with a settle pass).
    expect(tp.realtime.stats().merged).toBeGreaterThan(merged0);
    const final = (u: User) => streams[u].results.at(-1).data.msgCollection.edges.map((e: Json) => e.node);
    for (const u of ['alice', 'bob'] as const)
      for (const r of streams[u].results)
        for (const e of r.data.msgCollection.edges) expect(e.node.owner).toBe(u);
    expect(final('bob').map((n: Json) => n.body)).toEqual(['b1', 'a2', 'bob seed 1']);
    expect(final('alice').map((n: Json) => n.body)).toEqual(['burst 5', 'burst 4', 'burst 3']);
    for (const s of Object.values(streams)) s.stop();
  });

  it('a count: kept through inserts, edits and deletes, as the query counts', async () => {
    const { streams, agree } = await follow(BADGE, { room: 2 });
    const merged0 = tp.realtime.stats().merged;
    const writer = new pg.Client({ connectionString: project.superuserUrl });
    await writer.connect();
    try {
      // A stream of commits, each seen by one refresh or the next.
      for (let i = 0; i < 12; i++) {
        await writer.query(`insert into public.msg (room, owner, body) values (2, $1, $2)`, [
          i % 3 ? 'alice' : 'bob',
          `c${i}`,
        ]);
        await new Promise((r) => setTimeout(r, 15));
      }
      await agree();
      const steps = [
        `update public.msg set body = 'c11 edited' where body = 'c11'`,
        // An older row of bob's: not in his page, not created here (runs whole).
        `update public.msg set body = 'c0 edited' where body = 'c0'`,
        `delete from public.msg where body = 'c10'`,
        `update public.msg set owner = 'bob' where body = 'c11 edited'`,
        `insert into public.msg (room, owner, body) values (2, 'alice', 'last'), (3, 'alice', 'elsewhere')`,
      ];
      for (const step of steps) {
        await writer.query(step);
        await agree();
      }
    } finally {
      await writer.end();
    }
    expect(tp.realtime.stats().merged).toBeGreaterThan(merged0);
    const last = (u: User) => streams[u].results.at(-1).data.msgCollection;
    expect([last('alice').totalCount, last('alice').edges[0].node.body]).toEqual([9, 'last']);
    expect([last('bob').totalCount, last('bob').edges[0].node.body]).toEqual([6, 'c11 edited']);
    for (const s of Object.values(streams)) s.stop();
  });

  it('nested rows: a reply changes the row of its thread (moved between threads, deleted, past the page), and so does a change of the thread', async () => {
    const { streams, agree } = await follow(THREADS, {});
    const merged0 = tp.realtime.stats().merged;
    const steps = [
      `insert into public.reply (thread_id, owner, body) values (1, 'bob', 'r1'), (2, 'alice', 'r2')`,
      `insert into public.reply (thread_id, owner, body) values (3, 'alice', 'past the page')`,
      `update public.reply set thread_id = 2 where body = 'r0'`,
      `update public.reply set body = 'r2 edited' where body = 'r2'`,
      `delete from public.reply where body = 'r1'`,
      `update public.thread set title = 't2 renamed' where id = 2`,
      `insert into public.thread values (0, 't0')`,
      `insert into public.reply (thread_id, owner, body) values (0, 'bob', 'in t0')`,
    ];
    for (const step of steps) {
      await sql(project, step);
      await agree();
    }
    expect(tp.realtime.stats().merged).toBeGreaterThan(merged0);
    const last = (u: User) => streams[u].results.at(-1).data.threadCollection.edges.map((e: Json) => e.node);
    expect(last('alice').map((n: Json) => [n.title, n.replyCollection.totalCount])).toEqual([
      ['t0', 0],
      ['t1', 0],
    ]);
    expect(last('bob').map((n: Json) => [n.title, n.replyCollection.edges[0]?.node.body])).toEqual([
      ['t0', 'in t0'],
      ['t1', undefined],
    ]);
    for (const u of ['alice', 'bob'] as const)
      for (const r of streams[u].results)
        for (const t of r.data.threadCollection.edges)
          for (const e of t.node.replyCollection.edges) expect(e.node.owner).toBe(u);
    for (const s of Object.values(streams)) s.stop();
  });

  it("a burst of random writes, commits coalesced into refreshes: every stream ends at the query's answer", async () => {
    const followed = [
      await follow(LAST3, { room: 4 }),
      await follow(BADGE, { room: 4 }),
      await follow(THREADS, {}),
    ];
    const merged0 = tp.realtime.stats().merged;
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const owner = () => (rand(2) ? 'alice' : 'bob');
    const writer = new pg.Client({ connectionString: project.superuserUrl });
    await writer.connect();
    try {
      for (let i = 0; i < 80; i++) {
        const r = rand(10);
        const room = 4 + rand(2);
        if (r < 5)
          await writer.query('insert into public.msg (room, owner, body) values ($1, $2, $3)', [
            room,
            owner(),
            `m${i}`,
          ]);
        else if (r < 6)
          await writer.query(
            'update public.msg set owner = $1, body = $2 where id = (select max(id) from public.msg where room = $3)',
            [owner(), `e${i}`, room],
          );
        else if (r < 7)
          await writer.query(
            'delete from public.msg where id = (select max(id) from public.msg where room = $1)',
            [room],
          );
        else if (r < 9)
          await writer.query('insert into public.reply (thread_id, owner, body) values ($1, $2, $3)', [
            1 + rand(3),
            owner(),
            `r${i}`,
          ]);
        else
          await writer.query(
            'update public.reply set thread_id = $1 where id = (select max(id) from public.reply)',
            [1 + rand(3)],
          );
        if (rand(4) === 0) await new Promise((res) => setTimeout(res, 20));
      }
    } finally {
      await writer.end();
    }
    for (const f of followed) await f.agree();
    expect(tp.realtime.stats().merged).toBeGreaterThan(merged0);
    for (const f of followed) for (const s of Object.values(f.streams)) s.stop();
  });
});
