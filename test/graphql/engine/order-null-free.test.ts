/**
 * Sorting a column that holds no NULL (a validated NOT NULL of a table) by `DescNullsLast` or
 * `AscNullsFirst` answers the same rows in the same order, and the statement leaves the NULLS
 * clause out so an index of either direction serves it (a Sort over the whole table otherwise: a
 * chat's "newest first" read every row). Nullable columns, foreign-key paths and NOT NULL
 * constraints added NOT VALID (PostgreSQL 18+) keep the clause.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogFor, compile } from '../../../src/graphql/engine.js';
import { ids, setupEnv, type Env } from './harness.js';

const schema = `
comment on schema public is '@graphql({"inflect_names": true})';
create table event (id int primary key, at int not null, note int);
create index event_at on event (at);
insert into event select g, (g * 7) % 50, case when g % 5 = 0 then null else g end from generate_series(1, 40) g;
analyze event;
`;

const LIST = (order: string, first = 5) =>
  `{ eventCollection(orderBy: [${order}], first: ${first}) { edges { node { id } } } }`;

const FULL_SORT = /(^|->\s+)Sort\b/m;

let env: Env;
beforeAll(async () => {
  env = await setupEnv(schema);
});
afterAll(() => env.close());

/**
 * The EXPLAIN of a request's one statement, sorts priced out: a full Sort left means no index served
 * the order (an Incremental Sort of the key tie-breaker within an index's order is fine).
 */
async function plan(query: string): Promise<string> {
  const [field] = compile(await catalogFor(env.client), { query }).sql;
  if (!field) throw new Error('no statement');
  await env.client.query('begin');
  try {
    await env.client.query('set local enable_sort = off');
    const { rows } = await env.client.query(`explain ${field.sql}`, field.params);
    return rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
  } finally {
    await env.client.query('rollback');
  }
}

describe('ordering a column without NULLs', () => {
  it('answers each direction and NULLS placement in the order PostgreSQL sorts it', async () => {
    const expected = async (sqlOrder: string) =>
      (await env.client.query(`select id from event order by ${sqlOrder}, id limit 5`)).rows.map((r) => r.id);
    expect(ids(await env.gql(LIST('{at: DescNullsLast}')), 'eventCollection')).toEqual(
      await expected('at desc nulls last'),
    );
    expect(ids(await env.gql(LIST('{at: AscNullsFirst}')), 'eventCollection')).toEqual(
      await expected('at asc nulls first'),
    );
    expect(ids(await env.gql(LIST('{id: DescNullsLast}')), 'eventCollection')).toEqual([40, 39, 38, 37, 36]);
  });

  it('pages by cursor through a DescNullsLast order as through any other', async () => {
    const first = (await env.gql(
      '{ eventCollection(orderBy: [{at: DescNullsLast}], first: 3) { edges { cursor node { id } } } }',
    )) as { data: { eventCollection: { edges: { cursor: string; node: { id: number } }[] } } };
    const edges = first.data.eventCollection.edges;
    const next = await env.gql(
      `{ eventCollection(orderBy: [{at: DescNullsLast}], first: 3, after: "${edges[2]?.cursor}") { edges { node { id } } } }`,
    );
    const all = (await env.client.query('select id from event order by at desc, id limit 6')).rows.map(
      (r) => r.id,
    );
    expect([...edges.map((e) => e.node.id), ...ids(next, 'eventCollection')]).toEqual(all);
  });

  it('lets an index serve the order, where a nullable column still sorts', async () => {
    expect(await plan(LIST('{at: DescNullsLast}'))).not.toMatch(FULL_SORT);
    expect(await plan(LIST('{id: DescNullsLast}'))).not.toMatch(FULL_SORT);
    expect(await plan(LIST('{at: AscNullsFirst}'))).not.toMatch(FULL_SORT);
    const nullable = compile(await catalogFor(env.client), { query: LIST('{note: DescNullsLast}') }).sql[0];
    expect(nullable?.sql).toMatch(/"note" desc nulls last/);
  });

  it('keeps NULLs last for DescNullsLast when the NOT NULL was added NOT VALID over NULLs', async (ctx) => {
    const { rows } = await env.client.query("select current_setting('server_version_num')::int as v");
    // NOT NULL ... NOT VALID exists from PostgreSQL 18 on.
    if ((rows[0] as { v: number }).v < 180000) ctx.skip();
    await env.client.query(
      'create table later (id int primary key, v int); insert into later values (1, null), (2, 5), (3, 9);' +
        'alter table later add constraint later_v_not_null not null v not valid',
    );
    const res = await env.gql('{ laterCollection(orderBy: [{v: DescNullsLast}]) { edges { node { id } } } }');
    expect(ids(res, 'laterCollection')).toEqual([3, 2, 1]);
  });
});
