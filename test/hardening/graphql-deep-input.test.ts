/**
 * Every walk over user input is bounded: deeply nested filters (and/or/not), selection sets,
 * inline fragments, list/object literals and variables get a clear GraphQL error (HTTP 200),
 * never a stack overflow, a 500 or a hang; input within the bounds still works.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settledCheckedOut, startGraphQLPlatform, type GraphQLPlatform } from './graphql-platform.js';

let gp: GraphQLPlatform;

beforeAll(async () => {
  // No selection-depth limit: the nesting bound below must hold on its own.
  gp = await startGraphQLPlatform({ graphqlMaxDepth: false });
});
afterAll(async () => {
  await gp?.close();
});

const NESTED_DOC = {
  errors: [{ message: 'Syntax Error: Document is nested more than 256 levels deep. Parsing aborted.' }],
};
const NESTED_VARS = { errors: [{ message: 'Variables are nested more than 256 levels deep' }] };

function nestedFilter(levels: number, op: 'and' | 'or' | 'not'): string {
  const open = op === 'not' ? '{not: ' : `{${op}: [`;
  const close = op === 'not' ? '}' : ']}';
  return `${open.repeat(levels)}{id: {eq: 1}}${close.repeat(levels)}`;
}

describe('nesting bounds', () => {
  it('filters nested 100,000 levels through and/or/not: a clear error', async () => {
    for (const op of ['and', 'or', 'not'] as const) {
      const r = await gp.post({
        query: `{ accountCollection(filter: ${nestedFilter(100_000, op)}) { totalCount } }`,
      });
      expect(r).toEqual({ status: 200, json: NESTED_DOC });
    }
  });

  it('filters nested within the bound are answered', async () => {
    for (const op of ['and', 'or'] as const) {
      const r = await gp.post({
        query: `{ accountCollection(filter: ${nestedFilter(60, op)}) { edges { node { email } } } }`,
      });
      expect(r).toEqual({
        status: 200,
        json: { data: { accountCollection: { edges: [{ node: { email: 'a@x.com' } }] } } },
      });
    }
    const r = await gp.post({
      query: `{ accountCollection(filter: ${nestedFilter(120, 'not')}) { totalCount } }`,
    });
    expect(r).toEqual({ status: 200, json: { data: { accountCollection: { totalCount: 1 } } } });
  });

  it('selection sets and inline fragments nested 50,000 levels: a clear error', async () => {
    const fields = `{ ${'blogCollection { edges { node { owner { '.repeat(12_500)}id${' } } } }'.repeat(12_500)} }`;
    expect(await gp.post({ query: fields })).toEqual({ status: 200, json: NESTED_DOC });
    const inline = `{ ${'... on Query { '.repeat(50_000)}__typename${' }'.repeat(50_000)} }`;
    expect(await gp.post({ query: inline })).toEqual({ status: 200, json: NESTED_DOC });
  });

  it('list and object literals nested 100,000 levels: a clear error', async () => {
    const list = `{ accountCollection(filter: {id: {in: ${'['.repeat(100_000)}1${']'.repeat(100_000)}}}) { totalCount } }`;
    expect(await gp.post({ query: list })).toEqual({ status: 200, json: NESTED_DOC });
  });

  it('variables nested 50,000 levels: a clear error', async () => {
    // JSON.stringify itself is recursive: the body is written by hand.
    const text = `{"query": "query Q($f: AccountFilter) { accountCollection(filter: $f) { totalCount } }", "variables": {"f": ${'{"and": ['.repeat(50_000)}{"id": {"eq": 1}}${']}'.repeat(50_000)}}}`;
    expect(await gp.post(text)).toEqual({ status: 200, json: NESTED_VARS });
  });

  it('a filter nested through variables within the bound is answered', async () => {
    let f: unknown = { id: { eq: 2 } };
    for (let i = 0; i < 60; i++) f = { or: [f] };
    const r = await gp.post({
      query: 'query Q($f: AccountFilter) { accountCollection(filter: $f) { edges { node { email } } } }',
      variables: { f },
    });
    expect(r).toEqual({
      status: 200,
      json: { data: { accountCollection: { edges: [{ node: { email: 'b@x.com' } }] } } },
    });
  });

  it('leaves the pool with no client lent out, and answers', async () => {
    expect(await settledCheckedOut(gp)).toBe(0);
    expect((await gp.post({ query: '{ __typename }' })).json).toEqual({ data: { __typename: 'Query' } });
  });
});
