/**
 * pg_graphql parity: `and` / `or` entries and `not` filters that constrain nothing are dropped
 * (builder.rs create_filters: "avoid argumentless and", and no `not` around no filter), so they
 * neither widen an `or` to every row nor turn a `not` into "no rows". Also: a session whose
 * search_path is empty still answers `{ __typename }` (no schema reflected, nothing to fail on).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ids, setupEnv, type Env } from './harness.js';

let env: Env;

beforeAll(async () => {
  env = await setupEnv(`
    comment on schema public is '@graphql({"inflect_names": true})';
    create table account (id serial primary key, email text not null);
    insert into account (email) values ('aardvark@x.com'), ('bat@x.com'), ('cat@x.com');
  `);
});
afterAll(async () => {
  await env.close();
});

const accounts = async (filter: string, variables: Record<string, unknown> | null = null) => {
  const head = variables ? 'query Q($email: String)' : 'query';
  return ids(
    await env.gql(`${head} { accountCollection(filter: ${filter}) { edges { node { id } } } }`, variables),
    'accountCollection',
  );
};

/** Runs `body` in a transaction that is rolled back, whatever happens. */
async function inRollback(body: () => Promise<void>): Promise<void> {
  await env.client.query('begin');
  try {
    await body();
  } finally {
    await env.client.query('rollback');
  }
}

/** The names of Query's fields, from introspection. */
async function queryFields(): Promise<string[]> {
  const r = (await env.gql('{ __schema { queryType { fields { name } } } }')) as {
    data: { __schema: { queryType: { fields: { name: string }[] } } };
  };
  return r.data.__schema.queryType.fields.map((f) => f.name);
}

describe('filter entries that constrain nothing', () => {
  it('an empty entry beside a real one leaves the real one alone', async () => {
    expect(await accounts('{or: [{}, {id: {eq: 2}}]}')).toEqual([2]);
    expect(await accounts('{or: [{id: {eq: 1}}, {}, {id: {eq: 3}}]}')).toEqual([1, 3]);
    expect(await accounts('{and: [{}, {id: {gt: 1}}]}')).toEqual([2, 3]);
  });

  it('an entry whose only operator is an omitted variable is dropped too', async () => {
    expect(await accounts('{or: [{email: {eq: $email}}, {id: {eq: 3}}]}', {})).toEqual([3]);
    expect(await accounts('{or: [{email: {eq: $email}}]}', {})).toEqual([1, 2, 3]);
    expect(await accounts('{or: [{email: {eq: $email}}, {id: {eq: 3}}]}', { email: 'bat@x.com' })).toEqual([
      2, 3,
    ]);
  });

  it('lists of nothing but empty entries, and `not` around them, filter nothing', async () => {
    for (const f of ['{or: [{}]}', '{and: [{}]}', '{not: {or: [{}]}}', '{not: {and: [{}, {}]}}', '{not: {}}'])
      expect(await accounts(f)).toEqual([1, 2, 3]);
    expect(await accounts('{not: {or: [{}, {id: {eq: 1}}]}}')).toEqual([2, 3]);
  });

  it('the same holds for a mutation filter', async () => {
    await inRollback(async () => {
      expect(
        await env.gql(
          'mutation { updateAccountCollection(set: {email: "x@x.com"}, filter: {or: [{}]}, atMost: 10) { affectedCount } }',
        ),
      ).toEqual({ data: { updateAccountCollection: { affectedCount: 3 } } });
      expect(
        await env.gql(
          'mutation { deleteFromAccountCollection(filter: {or: [{}, {id: {eq: 2}}]}) { affectedCount } }',
        ),
      ).toEqual({ data: { deleteFromAccountCollection: { affectedCount: 1 } } });
    });
  });
});

describe('an empty search_path', () => {
  it('answers { __typename } and reflects nothing', async () => {
    await inRollback(async () => {
      await env.client.query(`set local search_path to ''`);
      expect(await env.gql('{ __typename }')).toEqual({ data: { __typename: 'Query' } });
      expect(await env.gql('{ accountCollection { edges { node { id } } } }')).toEqual({
        data: null,
        errors: [{ message: 'Unknown field "accountCollection" on type Query' }],
      });
    });
  });
});

describe('a function returning a row of a table the role cannot select', () => {
  it('is left out with the type: Query keeps only node', async () => {
    await inRollback(async () => {
      await env.client.query(`
        comment on schema public is '@graphql({"inflect_names": true, "introspection": true})';
        create function returns_account() returns account language sql stable as $$ select * from account limit 1 $$;
        do $$ begin if not exists (select from pg_roles where rolname = 'parity_reader') then create role parity_reader; end if; end $$;
        grant usage on schema graphql, public to parity_reader;
        grant select on account to parity_reader;
        grant execute on function returns_account() to parity_reader;
        savepoint a;
        set local role parity_reader;`);
      expect(await queryFields()).toEqual(['accountByPk', 'accountCollection', 'node', 'returnsAccount']);
      await env.client.query(
        'rollback to a; revoke select on account from parity_reader; set local role parity_reader',
      );
      expect(await env.gql('{ __type(name: "Account") { __typename } }')).toEqual({ data: { __type: null } });
      expect(await queryFields()).toEqual(['node']);
    });
  });
});

describe('a function returning a row of a view', () => {
  it('exists with the view: keyless, neither is reflected; with primary_key_columns, both are, with ByPk', async () => {
    await inRollback(async () => {
      await env.client.query(`
        comment on schema public is '@graphql({"inflect_names": true, "introspection": true})';
        create view pair as select 1 as foo, 2 as bar;
        create function returns_pair() returns pair language sql stable as $$ select foo, bar from pair $$;`);
      expect(await env.gql('{ __type(name: "Pair") { __typename } }')).toEqual({ data: { __type: null } });
      expect(await queryFields()).toEqual(['accountByPk', 'accountCollection', 'node']);
      await env.client.query(`comment on view pair is e'@graphql({"primary_key_columns": ["foo"]})'`);
      expect(await env.gql('{ __type(name: "Pair") { __typename } }')).toEqual({
        data: { __type: { __typename: 'Pair' } },
      });
      expect(await queryFields()).toEqual([
        'accountByPk',
        'accountCollection',
        'node',
        'pairByPk',
        'pairCollection',
        'returnsPair',
      ]);
      expect(await env.gql('{ pairByPk(foo: 1) { foo bar } returnsPair { bar } }')).toEqual({
        data: { pairByPk: { foo: 1, bar: 2 }, returnsPair: { bar: 2 } },
      });
    });
  });
});
