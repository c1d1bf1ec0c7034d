/** Connections: filters (every operator per type, and/or/not), orderBy, cursor and offset pagination, totalCount, aggregates. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ids, setupEnv, type Env } from './harness.js';

let env: Env;
beforeAll(async () => {
  env = await setupEnv();
});
afterAll(() => env.close());

const accounts = async (filter: string) =>
  ids(
    await env.gql(`{ accountCollection(filter: ${filter}) { edges { node { id } } } }`),
    'accountCollection',
  );

describe('filters', () => {
  it('Int operators', async () => {
    expect(await accounts('{id: {eq: 2}}')).toEqual([2]);
    expect(await accounts('{id: {neq: 2}}')).toEqual([1, 3]);
    expect(await accounts('{id: {lt: 2}}')).toEqual([1]);
    expect(await accounts('{id: {lte: 2}}')).toEqual([1, 2]);
    expect(await accounts('{id: {gt: 2}}')).toEqual([3]);
    expect(await accounts('{id: {gte: 2}}')).toEqual([2, 3]);
    expect(await accounts('{id: {in: [1, 3]}}')).toEqual([1, 3]);
    expect(await accounts('{id: {in: []}}')).toEqual([]);
    expect(await accounts('{id: {lt: null}}')).toEqual([]);
  });
  it('String operators', async () => {
    expect(await accounts('{email: {eq: "b@x.com"}}')).toEqual([2]);
    expect(await accounts('{email: {startsWith: "c"}}')).toEqual([3]);
    expect(await accounts('{email: {like: "%b@%"}}')).toEqual([2]);
    expect(await accounts('{email: {ilike: "A@%"}}')).toEqual([1]);
    expect(await accounts('{email: {regex: "^[ab]"}}')).toEqual([1, 2]);
    expect(await accounts('{email: {iregex: "^C"}}')).toEqual([3]);
    expect(await accounts('{email: {gt: "b"}}')).toEqual([2, 3]);
  });
  it('Float, BigFloat, BigInt, Boolean, Date, Time, Datetime, UUID', async () => {
    expect(await accounts('{score: {gte: 2}}')).toEqual([2]);
    expect(await accounts('{balance: {eq: "20.25"}}')).toEqual([2]);
    expect(await accounts('{big: {eq: "9007199254740993"}}')).toEqual([1]);
    expect(await accounts('{isAdmin: {eq: true}}')).toEqual([1]);
    expect(await accounts('{born: {lt: "2001-01-01"}}')).toEqual([1]);
    expect(await accounts('{wakes: {gt: "07:30"}}')).toEqual([2]);
    expect(await accounts('{createdAt: {eq: "2024-01-01T00:00:00"}}')).toEqual([1, 2, 3]);
    expect(await accounts('{extId: {in: ["22222222-2222-2222-2222-222222222222"]}}')).toEqual([2]);
  });
  it('is NULL / NOT_NULL and list operators', async () => {
    expect(await accounts('{score: {is: NULL}}')).toEqual([3]);
    expect(await accounts('{score: {is: NOT_NULL}}')).toEqual([1, 2]);
    expect(await accounts('{tags: {contains: "red"}}')).toEqual([1]);
    expect(await accounts('{tags: {containedBy: ["blue", "red"]}}')).toEqual([1, 2]);
    expect(await accounts('{tags: {overlaps: ["blue"]}}')).toEqual([1, 2]);
    expect(await accounts('{tags: {eq: ["blue"]}}')).toEqual([2]);
  });
  it('enum filters use the mapped names', async () => {
    const res = await env.gql(
      '{ postCollection(filter: {status: {eq: PUBLISHED}}) { edges { node { id status } } } }',
    );
    expect(res).toEqual({
      data: {
        postCollection: {
          edges: [{ node: { id: 1, status: 'PUBLISHED' } }, { node: { id: 3, status: 'PUBLISHED' } }],
        },
      },
    });
    expect(
      ids(
        await env.gql('{ postCollection(filter: {status: {in: [DRAFT]}}) { edges { node { id } } } }'),
        'postCollection',
      ),
    ).toEqual([2]);
  });
  it('and / or / not, and no-op forms', async () => {
    expect(await accounts('{or: [{id: {eq: 1}}, {id: {eq: 3}}]}')).toEqual([1, 3]);
    expect(await accounts('{and: [{id: {gt: 1}}, {isAdmin: {eq: false}}]}')).toEqual([2, 3]);
    expect(await accounts('{not: {id: {eq: 1}}}')).toEqual([2, 3]);
    expect(await accounts('{or: [], and: [], not: {}}')).toEqual([1, 2, 3]);
    expect(await accounts('null')).toEqual([1, 2, 3]);
  });
  it('filter errors use pg_graphql wording', async () => {
    expect(await env.gql('{ accountCollection(filter: {nope: {eq: 1}}) { edges { node { id } } } }')).toEqual(
      {
        data: null,
        errors: [{ message: 'Input for type AccountFilter contains extra keys ["nope"]' }],
      },
    );
    expect(await env.gql('{ accountCollection(filter: {id: {eq: "x"}}) { edges { node { id } } } }')).toEqual(
      {
        data: null,
        errors: [{ message: 'Invalid input for Int type' }],
      },
    );
    expect(
      await env.gql('{ accountCollection(filter: {score: {is: null}}) { edges { node { id } } } }'),
    ).toEqual({
      data: null,
      errors: [{ message: 'Error transpiling Is filter value type' }],
    });
  });
  it('filters through variables', async () => {
    const res = await env.gql(
      'query Q($f: AccountFilter) { accountCollection(filter: $f) { edges { node { id } } } }',
      { f: { id: { in: [2, 3] } } },
    );
    expect(ids(res, 'accountCollection')).toEqual([2, 3]);
  });
});

describe('orderBy and pagination', () => {
  it('orders by columns with the pk as tiebreaker', async () => {
    const res = await env.gql(
      '{ accountCollection(orderBy: [{score: DescNullsFirst}]) { edges { node { id } } } }',
    );
    expect(ids(res, 'accountCollection')).toEqual([3, 2, 1]);
    const res2 = await env.gql(
      '{ accountCollection(orderBy: [{isAdmin: AscNullsLast}, {id: DescNullsLast}]) { edges { node { id } } } }',
    );
    expect(ids(res2, 'accountCollection')).toEqual([3, 2, 1]);
    expect(
      await env.gql('{ accountCollection(orderBy: [{id: Sideways}]) { edges { node { id } } } }'),
    ).toEqual({
      data: null,
      errors: [{ message: 'Invalid input for OrderByDirection type' }],
    });
  });
  it('pages forward with cursors and pageInfo', async () => {
    const q = `query P($after: Cursor) { accountCollection(first: 2, after: $after) { edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`;
    const p1 = (await env.gql(q)) as {
      data: {
        accountCollection: {
          edges: { cursor: string; node: { id: number } }[];
          pageInfo: Record<string, unknown>;
        };
      };
    };
    expect(p1.data.accountCollection.edges.map((e) => e.node.id)).toEqual([1, 2]);
    expect(p1.data.accountCollection.edges[0]!.cursor).toBe(Buffer.from('[1]').toString('base64'));
    expect(p1.data.accountCollection.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    const p2 = (await env.gql(q, { after: p1.data.accountCollection.pageInfo.endCursor })) as typeof p1;
    expect(p2.data.accountCollection.edges.map((e) => e.node.id)).toEqual([3]);
    expect(p2.data.accountCollection.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
  });
  it('pages backward with last/before', async () => {
    const before = Buffer.from('[3]').toString('base64');
    const res = await env.gql(
      `{ accountCollection(last: 1, before: "${before}") { edges { node { id } } pageInfo { hasNextPage hasPreviousPage } } }`,
    );
    expect(res).toEqual({
      data: {
        accountCollection: {
          edges: [{ node: { id: 2 } }],
          pageInfo: { hasNextPage: true, hasPreviousPage: true },
        },
      },
    });
  });
  it('supports offset and validates pagination arguments', async () => {
    expect(
      ids(
        await env.gql('{ accountCollection(first: 1, offset: 1) { edges { node { id } } } }'),
        'accountCollection',
      ),
    ).toEqual([2]);
    expect(await env.gql('{ accountCollection(first: 1, last: 1) { edges { node { id } } } }')).toEqual({
      data: null,
      errors: [{ message: 'only one of "first" and "last" may be provided' }],
    });
    expect(await env.gql('{ accountCollection(first: -1) { edges { node { id } } } }')).toEqual({
      data: null,
      errors: [{ message: '`first` must be an unsigned integer' }],
    });
  });
  it('totalCount and aggregates respect the filter, not the page', async () => {
    const res = await env.gql(
      `{ accountCollection(first: 1, filter: {id: {lt: 3}}) { totalCount aggregate { count sum { score } min { email } max { balance } } } }`,
    );
    expect(res).toEqual({
      data: {
        accountCollection: {
          totalCount: 2,
          aggregate: { count: 2, sum: { score: 4 }, min: { email: 'a@x.com' }, max: { balance: 20.25 } },
        },
      },
    });
  });
});
