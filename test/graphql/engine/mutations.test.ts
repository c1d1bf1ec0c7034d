/** Mutations (insert/update/delete with atMost), functions as query/mutation/setof fields with defaults, errors. */
import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it } from 'vitest';
import { setupEnv, type Env } from './harness.js';

let env: Env;
beforeAll(async () => {
  env = await setupEnv();
});
afterAll(() => env.close());
// Every test runs in a transaction that is rolled back (resolve uses a savepoint inside it).
beforeEach(() => env.client.query('begin'));
afterEach(() => env.client.query('rollback'));

describe('mutations', () => {
  it('inserts several records, with defaults for absent keys and NULL for explicit nulls', async () => {
    const res =
      await env.gql(`mutation { insertIntoAccountCollection(objects: [{email: "n1@x.com", score: null}, {email: "n2@x.com", isAdmin: true}]) {
      affectedCount records { id email isAdmin score } } }`);
    expect(res).toEqual({
      data: {
        insertIntoAccountCollection: {
          affectedCount: 2,
          records: [
            { id: 4, email: 'n1@x.com', isAdmin: false, score: null },
            { id: 5, email: 'n2@x.com', isAdmin: true, score: null },
          ],
        },
      },
    });
  });
  it('rejects bad insert input', async () => {
    expect(await env.gql('mutation { insertIntoAccountCollection(objects: []) { affectedCount } }')).toEqual({
      data: null,
      errors: [{ message: 'At least one record must be provided to objects' }],
    });
    expect(
      await env.gql('mutation { insertIntoAccountCollection(objects: [{bogus: 1}]) { affectedCount } }'),
    ).toEqual({
      data: null,
      errors: [{ message: 'Input for type AccountInsertInput contains extra keys ["bogus"]' }],
    });
    expect(
      await env.gql(
        'mutation { insertIntoAccountCollection(objects: [{email: "012345678901234567890123456789012345678901"}]) { affectedCount } }',
      ),
    ).toEqual({
      data: null,
      errors: [{ message: 'Invalid input for String type. Maximum character length 40' }],
    });
    expect(
      await env.gql(
        'mutation { insertIntoAccountCollection(objects: [{email: "a@x.com"}]) { affectedCount } }',
      ),
    ).toEqual({
      data: null,
      errors: [{ message: 'duplicate key value violates unique constraint "account_email_key"' }],
    });
  });
  it('updates with atMost', async () => {
    expect(
      await env.gql(
        'mutation { updateAccountCollection(set: {score: 9}, filter: {id: {eq: 3}}) { affectedCount records { id score } } }',
      ),
    ).toEqual({ data: { updateAccountCollection: { affectedCount: 1, records: [{ id: 3, score: 9 }] } } });
    expect(await env.gql('mutation { updateAccountCollection(set: {score: 9}) { affectedCount } }')).toEqual({
      data: null,
      errors: [{ message: 'update impacts too many records' }],
    });
    expect(
      await env.gql('mutation { updateAccountCollection(set: {score: 7}, atMost: 5) { affectedCount } }'),
    ).toEqual({ data: { updateAccountCollection: { affectedCount: 3 } } });
    expect(await env.gql('mutation { updateAccountCollection(set: {}) { affectedCount } }')).toEqual({
      data: null,
      errors: [{ message: 'At least one mapping must be provided to set argument' }],
    });
  });
  it('deletes with atMost, and runs several mutation fields in one transaction', async () => {
    expect(
      await env.gql(
        'mutation { deleteFromPostCollection(filter: {id: {eq: 2}}) { affectedCount records { title } } }',
      ),
    ).toEqual({ data: { deleteFromPostCollection: { affectedCount: 1, records: [{ title: 'p2' }] } } });
    const res = await env.gql(
      `mutation { a: deleteFromPostCollection(filter: {id: {eq: 1}}) { affectedCount } b: deleteFromPostCollection(atMost: 0, filter: {id: {eq: 3}}) { affectedCount } }`,
    );
    expect(res).toEqual({ data: null, errors: [{ message: 'delete impacts too many records' }] });
    expect(await env.gql('{ postCollection { edges { node { id } } } }')).toEqual({
      data: { postCollection: { edges: [{ node: { id: 1 } }, { node: { id: 3 } }] } },
    });
  });
});

describe('functions', () => {
  it('stable functions are Query fields, with argument defaults', async () => {
    expect(await env.gql('{ add(a: 1, b: 2) }')).toEqual({ data: { add: 3 } });
    expect(await env.gql('{ add(a: 1) }')).toEqual({ data: { add: 11 } });
    expect(await env.gql('{ add }')).toEqual({
      data: null,
      errors: [{ message: 'Invalid input for NonNull type' }],
    });
  });
  it('volatile functions are Mutation fields', async () => {
    expect(await env.gql('mutation { bump(amount: 4) }')).toEqual({ data: { bump: 5 } });
    expect(await env.gql('{ bump(amount: 4) }')).toEqual({
      data: null,
      errors: [{ message: 'Unknown field "bump" on type Query' }],
    });
  });
  it('setof functions are connections', async () => {
    expect(
      await env.gql('{ blogsNamed(prefix: "a", first: 5) { edges { node { name owner { id } } } } }'),
    ).toEqual({ data: { blogsNamed: { edges: [{ node: { name: 'alpha', owner: { id: 1 } } }] } } });
  });
  it('SQL errors become GraphQL errors and leave the transaction usable', async () => {
    expect(await env.gql('{ failNow }')).toEqual({ data: null, errors: [{ message: 'division by zero' }] });
    expect((await env.client.query('select 1 as one')).rows[0].one).toBe(1);
  });
});

describe('request errors', () => {
  it('uses pg_graphql shapes', async () => {
    expect(await env.gql('{ accountCollection { ')).toHaveProperty('errors');
    expect(await env.gql('query A { add(a: 1) } query A { add(a: 2) }')).toEqual({
      errors: [{ message: 'Operation names must be unique' }],
    });
    expect(await env.gql('query A { add(a: 1) }', null, 'B')).toEqual({
      errors: [{ message: 'Operation not found' }],
    });
    expect(await env.gql('{ add(a: 1) }', [] as never)).toEqual({
      errors: [{ message: 'variables must be an object' }],
    });
  });
});
