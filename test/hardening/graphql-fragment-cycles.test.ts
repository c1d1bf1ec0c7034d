/**
 * Fragment cycles are pg_graphql's validation errors (errors only, HTTP 200) wherever they are:
 * directly, through relationship fields, inside fragments the operation never spreads. Walking
 * fragments costs the document's size even when fragments spread each other many times over.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settledCheckedOut, startGraphQLPlatform, type GraphQLPlatform } from './graphql-platform.js';

let gp: GraphQLPlatform;

beforeAll(async () => {
  gp = await startGraphQLPlatform();
});
afterAll(async () => {
  await gp?.close();
});

const CYCLE = { errors: [{ message: 'Found a cycle between fragments' }] };
const TOO_DEEP = { errors: [{ message: 'Fragment cycle depth is greater than 50' }] };

async function expectAnswer(query: string, expected: unknown, operationName?: string): Promise<void> {
  const r = await gp.post({ query, operationName });
  expect(r).toEqual({ status: 200, json: expected });
}

describe('fragment cycles (pg_graphql resolve.rs detect_fragment_cycles)', () => {
  it('a direct cycle on the root type', async () => {
    await expectAnswer(
      '{ ...A } fragment A on Query { __typename ...B } fragment B on Query { __typename ...A }',
      CYCLE,
    );
  });

  it('a fragment spreading itself', async () => {
    await expectAnswer('{ ...A } fragment A on Query { __typename ...A }', CYCLE);
  });

  it('cycles that exist only through relationship fields', async () => {
    await expectAnswer(
      `{ blogCollection { edges { node { ...blogFragment } } } }
       fragment blogFragment on Blog { owner { ...accountFragment } }
       fragment accountFragment on Account { blogCollection { edges { node { ...blogFragment } } } }`,
      CYCLE,
    );
    await expectAnswer(
      `{ blogCollection { edges { node { ...blogFragment } } } }
       fragment blogFragment on Blog { owner { blogCollection { edges { node { ... on Blog { ...blogFragment } } } } } }`,
      CYCLE,
    );
  });

  it('a cycle inside fragments the operation never uses', async () => {
    await expectAnswer(
      `{ blogCollection { edges { node { id } } } }
       fragment blogFragment on Blog { owner { blogCollection { edges { node { ...blogFragment } } } } }`,
      CYCLE,
    );
    await expectAnswer(
      `query Used { accountCollection { totalCount } }
       fragment Unused on Account { blogCollection { edges { node { owner { ...Unused } } } } }`,
      CYCLE,
      'Used',
    );
  });

  it('is checked after the operation-name rules and before "Operation not found"', async () => {
    const cycle = 'fragment A on Query { ...A }';
    await expectAnswer(`{ __typename } query B { __typename } ${cycle}`, {
      errors: [{ message: 'Anonymous operations must be the only defined operation' }],
    });
    await expectAnswer(`query B { __typename } query B { __typename } ${cycle}`, {
      errors: [{ message: 'Operation names must be unique' }],
    });
    await expectAnswer(`query B { __typename } ${cycle}`, CYCLE, 'Missing');
    await expectAnswer(
      'query B { __typename } fragment A on Query { __typename }',
      {
        errors: [{ message: 'Operation not found' }],
      },
      'Missing',
    );
  });

  it("fragments nested past 50 levels: pg_graphql's depth error, not a stack overflow", async () => {
    // A chain of 60 fragments, each spreading the next.
    const chain = Array.from({ length: 60 }, (_, i) =>
      i < 59
        ? `fragment F${i} on Query { __typename ...F${i + 1} }`
        : `fragment F${i} on Query { __typename }`,
    ).join('\n');
    await expectAnswer(`{ ...F0 }\n${chain}`, TOO_DEEP);
    // Field nesting inside a fragment counts too (each selection set is a level).
    const nested = `${'owner { blogCollection { edges { node { '.repeat(13)}id${' } } } }'.repeat(13)}`;
    await expectAnswer(
      `{ blogCollection { edges { node { id } } } } fragment Deep on Blog { ${nested} }`,
      TOO_DEEP,
    );
  });

  it('inline fragments nested deeper than 50 in the operation are no cycle (pg_graphql walks fragments only)', async () => {
    const nested = `{ ${'... on Query { '.repeat(80)}__typename${' }'.repeat(80)} }`;
    await expectAnswer(nested, { data: { __typename: 'Query' } });
  });

  it('shared fragments spread many times over cost the document, not its expansion', {
    timeout: 20_000,
  }, async () => {
    // F0 spreads F1 three times, F1 spreads F2 three times, ...: 3^23 paths (within pg_graphql's
    // depth of 50: each hop is two levels); an unmemoized walk never ends.
    const defs = Array.from({ length: 24 }, (_, i) =>
      i < 23
        ? `fragment F${i} on Query { a${i}: __typename ...F${i + 1} ...F${i + 1} ...F${i + 1} }`
        : `fragment F${i} on Query { __typename }`,
    ).join('\n');
    // Unused by the operation: the cycle check still walks them all (and finds no cycle).
    await expectAnswer(`{ __typename }\n${defs}`, { data: { __typename: 'Query' } });
  });

  it('leaves the pool with no client lent out', async () => {
    expect(await settledCheckedOut(gp)).toBe(0);
  });
});
