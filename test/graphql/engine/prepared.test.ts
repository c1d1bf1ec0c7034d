/**
 * The fast path prepares repeated statements on each connection: results stay correct across
 * variable values, roles (RLS replans), DDL, and errors; the request is still one round trip.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { setupEnv, type Env } from './harness.js';
import { resolveWithPool } from '../../../src/graphql/engine.js';

let env: Env;
let pool: pg.Pool;
let messages = 0;

beforeAll(async () => {
  env = await setupEnv(`
    create table item (id serial primary key, name text not null, owner text);
    insert into item (name, owner) values ('one', 'u1'), ('two', 'u2'), ('three', 'u1');
    alter table item enable row level security;
    create policy mine on item for all to authenticated using (owner = current_setting('request.jwt.claims', true)::jsonb ->> 'sub');
    create policy svc on item for all to service_role using (true);
    grant select, insert, update, delete on item to authenticated, service_role;
    grant usage on sequence item_id_seq to authenticated, service_role;
    comment on schema public is '@graphql({"inflect_names": true})';
  `);
  // One connection, so every request reuses the same session's prepared statements.
  pool = new pg.Pool({ connectionString: env.db.url, max: 1 });
  pool.on('connect', (c) => {
    const q = c.query.bind(c) as (...a: unknown[]) => unknown;
    (c as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => {
      messages++;
      return q(...a);
    };
  });
});
afterAll(async () => {
  await pool.end();
  await env.close();
});

const user = (sub: string) => ({ role: 'authenticated', claims: { sub, role: 'authenticated' } });
const service = { role: 'service_role', claims: { role: 'service_role' } };
const byName = {
  query: 'query($n: String!) { itemCollection(filter: {name: {eq: $n}}) { edges { node { name owner } } } }',
};
const names = (r: Record<string, unknown>) =>
  (r as { data: { itemCollection: { edges: { node: { name: string } }[] } } }).data.itemCollection.edges.map(
    (e) => e.node.name,
  );

describe('prepared statements on the fast path', () => {
  it('gives the right rows for each variable value, preparing after the first sight', async () => {
    for (const n of ['one', 'two', 'three', 'one', 'nope', 'two']) {
      const r = await resolveWithPool(pool, service, { ...byName, variables: { n } });
      expect(names(r)).toEqual(n === 'nope' ? [] : [n]);
    }
    const c = await pool.connect();
    try {
      const { rows } = await c.query(
        "select count(*)::int as n from pg_prepared_statements where name like 'strata_%'",
      );
      expect(rows[0].n).toBeGreaterThanOrEqual(1);
    } finally {
      c.release();
    }
  });

  it("prepares a query's scalar statement wrapped, so an EXECUTE's target list is one column", async () => {
    for (const n of ['one', 'two']) await resolveWithPool(pool, service, { ...byName, variables: { n } });
    const c = await pool.connect();
    try {
      // (`statement` is the whole message a statement was prepared in: its start is the PREPARE.)
      const { rows } = await c.query<{ statement: string }>(
        "select statement from pg_prepared_statements where name like 'strata_%'",
      );
      const starts = rows.map((r) => r.statement.replace(/^prepare strata_\w+ as /, '').slice(0, 30));
      expect(starts).toContain('select * from (select (with t1');
      expect(starts.filter((t) => t.startsWith('select (with'))).toEqual([]);
    } finally {
      c.release();
    }
  });

  it('RLS follows the role and claims of each request on the same prepared statement', async () => {
    const all = { query: '{ itemCollection(orderBy: [{id: AscNullsLast}]) { edges { node { name } } } }' };
    for (let i = 0; i < 3; i++) {
      expect(names(await resolveWithPool(pool, user('u1'), all))).toEqual(['one', 'three']);
      expect(names(await resolveWithPool(pool, user('u2'), all))).toEqual(['two']);
      expect(names(await resolveWithPool(pool, service, all))).toEqual(['one', 'two', 'three']);
      expect(names(await resolveWithPool(pool, { role: 'anon', claims: {} }, all))).toEqual([]);
    }
  });

  it('is one message per request once warm', async () => {
    await resolveWithPool(pool, service, { ...byName, variables: { n: 'one' } });
    const before = messages;
    for (const n of ['two', 'three', 'one'])
      await resolveWithPool(pool, service, { ...byName, variables: { n } });
    expect(messages - before).toBe(3);
  });

  it('survives DDL on the table behind a prepared statement', async () => {
    await env.client.query('alter table item add column note text');
    await env.client.query("update item set note = 'n-' || name");
    const q = {
      query:
        'query($n: String!) { itemCollection(filter: {name: {eq: $n}}) { edges { node { name note } } } }',
    };
    for (const n of ['one', 'two', 'one']) {
      const r = (await resolveWithPool(pool, service, { ...q, variables: { n } })) as {
        data: { itemCollection: { edges: { node: { note: string } }[] } };
      };
      expect(r.data.itemCollection.edges[0]!.node.note).toBe(`n-${n}`);
    }
    expect(names(await resolveWithPool(pool, service, { ...byName, variables: { n: 'three' } }))).toEqual([
      'three',
    ]);
  });

  it('an error in a request leaves the connection usable and later requests right', async () => {
    const ins = {
      query:
        'mutation($n: String!) { insertIntoItemCollection(objects: [{name: $n, owner: "u9"}]) { affectedCount } }',
    };
    const denied = await resolveWithPool(pool, user('u1'), { ...ins, variables: { n: 'x' } });
    expect(denied).toMatchObject({
      data: null,
      errors: [expect.objectContaining({ message: expect.stringMatching(/row-level security/) })],
    });
    for (const n of ['one', 'two'])
      expect(names(await resolveWithPool(pool, service, { ...byName, variables: { n } }))).toEqual([n]);
    expect(
      names(
        await resolveWithPool(pool, service, {
          query: '{ itemCollection(filter: {owner: {eq: "u9"}}) { edges { node { name } } } }',
        }),
      ),
    ).toEqual([]);
  });

  it('prepares the prelude (role, claims, schema-version guard) once per connection', async () => {
    await resolveWithPool(pool, service, { ...byName, variables: { n: 'one' } });
    const c = await pool.connect();
    try {
      // The prelude: the one statement taking (role, claims, statement_timeout, version).
      const { rows } = await c.query<{ n: number }>(
        "select count(*)::int as n from pg_prepared_statements where parameter_types = '{text,text,text,integer}'::regtype[]",
      );
      expect(rows[0]!.n).toBe(1);
    } finally {
      c.release();
    }
  });

  it('the guard sees DDL on the next request, for a role with no grant of its own on the version sequence', async () => {
    await env.client.query(`
      create role strata_reporting nologin;
      grant strata_reporting to current_user;
      grant select on item to strata_reporting;
      create policy reporting on item for select to strata_reporting using (true);
    `);
    const reporter = { role: 'strata_reporting', claims: { role: 'strata_reporting' } };
    const q = {
      query: '{ itemCollection(first: 1, orderBy: [{id: AscNullsLast}]) { edges { node { name } } } }',
    };
    expect(names(await resolveWithPool(pool, reporter, q))).toEqual(['one']);
    await env.client.query('alter table item add column rank int default 7');
    const r = await resolveWithPool(pool, reporter, {
      query: '{ itemCollection(first: 1, orderBy: [{id: AscNullsLast}]) { edges { node { name rank } } } }',
    });
    expect(r).toEqual({ data: { itemCollection: { edges: [{ node: { name: 'one', rank: 7 } }] } } });
  });

  it('API roles read the schema version but cannot advance it', async () => {
    const c = await pool.connect();
    try {
      await c.query('begin');
      await c.query('set local role anon');
      const { rows } = await c.query<{ v: string | null }>(
        "select pg_sequence_last_value('graphql.seq_schema_version'::regclass)::text as v",
      );
      expect(Number(rows[0]!.v)).toBeGreaterThan(0);
      await expect(c.query("select nextval('graphql.seq_schema_version')")).rejects.toThrow(
        /permission denied/,
      );
    } finally {
      await c.query('rollback');
      c.release();
    }
  });

  it('behind a transaction-mode pooler (prepared statements lost between transactions) answers right and stops preparing', async () => {
    const own = new pg.Pool({ connectionString: env.db.url, max: 1 });
    try {
      const q = { query: '{ itemCollection(orderBy: [{id: AscNullsLast}]) { edges { node { name } } } }' };
      for (let i = 0; i < 3; i++)
        expect(names(await resolveWithPool(own, service, q))).toEqual(['one', 'two', 'three']);
      // What a pooler does when the next transaction lands on another server connection.
      const c = await own.connect();
      await c.query('deallocate all');
      c.release();
      for (let i = 0; i < 3; i++)
        expect(names(await resolveWithPool(own, service, q))).toEqual(['one', 'two', 'three']);
      const c2 = await own.connect();
      try {
        expect((await c2.query('select count(*)::int as n from pg_prepared_statements')).rows[0].n).toBe(0);
      } finally {
        c2.release();
      }
      // RLS still follows each request's role and claims.
      expect(names(await resolveWithPool(own, user('u2'), q))).toEqual(['two']);
    } finally {
      await own.end();
    }
  });

  it('a statement name already taken on the session (another client of a transaction-mode pooler) is no error either', async () => {
    const c = await pool.connect();
    let name: string;
    try {
      name = (
        await c.query<{ name: string }>(
          "select name from pg_prepared_statements where parameter_types = '{text,text,text,integer}'::regtype[]",
        )
      ).rows[0]!.name;
    } finally {
      c.release();
    }
    const own = new pg.Pool({ connectionString: env.db.url, max: 1 });
    // The server connection already has a statement of that name, which this pool did not prepare.
    own.on('connect', (client) => {
      void client.query(`prepare ${name} as select 1`);
    });
    try {
      const q = { query: '{ itemCollection(orderBy: [{id: AscNullsLast}]) { edges { node { name } } } }' };
      for (let i = 0; i < 3; i++)
        expect(names(await resolveWithPool(own, service, q))).toEqual(['one', 'two', 'three']);
    } finally {
      await own.end();
    }
  });
});
