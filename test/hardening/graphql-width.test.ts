/**
 * The width limit (STRATA_GRAPHQL_MAX_SELECTIONS, default 5,000 field selections per operation,
 * fragments expanded): 20,000 aliases, or a few fragments that multiply into millions of fields,
 * are refused with a clear GraphQL error before any compilation or SQL; an operation at the limit
 * is answered. Times are printed (measured, not asserted).
 */
import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configFromEnv } from '../../src/config.js';
import { settledCheckedOut, startGraphQLPlatform, type GraphQLPlatform } from './graphql-platform.js';

let gp: GraphQLPlatform;

beforeAll(async () => {
  gp = await startGraphQLPlatform();
});
afterAll(async () => {
  await gp?.close();
});

function aliases(n: number, field = '__typename'): string {
  return `{ ${Array.from({ length: n }, (_, i) => `a${i}: ${field}`).join(' ')} }`;
}

const refused = (count: number, max = 5000) => ({
  errors: [
    { message: `Query selection count ${count} exceeds the maximum allowed selection count of ${max}` },
  ],
});

describe('width limit', () => {
  it('reads STRATA_GRAPHQL_MAX_SELECTIONS and STRATA_GRAPHQL_MAX_DEPTH in config.ts', () => {
    expect(configFromEnv({}).graphqlMaxSelections).toBe(5000);
    expect(configFromEnv({}).graphqlMaxDepth).toBe(20);
    expect(configFromEnv({ STRATA_GRAPHQL_MAX_SELECTIONS: '0' }).graphqlMaxSelections).toBe(false);
    expect(configFromEnv({ STRATA_GRAPHQL_MAX_SELECTIONS: '123' }).graphqlMaxSelections).toBe(123);
    expect(configFromEnv({ STRATA_GRAPHQL_MAX_DEPTH: '0' }).graphqlMaxDepth).toBe(false);
    expect(() => configFromEnv({ STRATA_GRAPHQL_MAX_SELECTIONS: 'lots' })).toThrow(
      'STRATA_GRAPHQL_MAX_SELECTIONS must be a whole number (got "lots")',
    );
  });

  it('20,000 aliases of a field: refused with a clear error', async () => {
    for (const field of [
      '__typename',
      'accountCollection { totalCount }',
      'accountCollection { __typename }',
    ]) {
      const query = aliases(field === '__typename' ? 20_000 : 15_000, field);
      const started = performance.now();
      const r = await gp.post({ query });
      const ms = performance.now() - started;
      console.log(`aliases of ${field}: ${r.status} in ${ms.toFixed(0)} ms (${query.length} bytes)`);
      expect(r).toEqual({ status: 200, json: refused(field === '__typename' ? 20_000 : 30_000) });
    }
    // Past 100,000 tokens the parser stops reading: 20,000 aliases of a field with a selection set.
    expect(await gp.post({ query: aliases(20_000, 'accountCollection { totalCount }') })).toEqual({
      status: 200,
      json: {
        errors: [{ message: 'Syntax Error: Document contains more than 100000 tokens. Parsing aborted.' }],
      },
    });
  });

  it('fragments that multiply fields count as what they expand to', async () => {
    // Each fragment spreads the next twice: 2^30 selections from a document of 30 lines.
    const defs = Array.from({ length: 30 }, (_, i) =>
      i < 29
        ? `fragment F${i} on Query { ...F${i + 1} ... on Query { ...F${i + 1} } }`
        : `fragment F${i} on Query { __typename }`,
    ).join('\n');
    const started = performance.now();
    const r = await gp.post({ query: `{ ...F0 }\n${defs}` });
    console.log(
      `2^30 selections through fragments: refused in ${(performance.now() - started).toFixed(0)} ms`,
    );
    expect(r).toEqual({ status: 200, json: refused(2 ** 29) });
  });

  it('an operation at the limit is answered', { timeout: 30_000 }, async () => {
    const r = await gp.post({ query: aliases(5000) });
    expect(r.status).toBe(200);
    expect(Object.keys(r.json.data)).toHaveLength(5000);
    expect(r.json.data.a4999).toBe('Query');
    expect(await gp.post({ query: aliases(5001) })).toEqual({ status: 200, json: refused(5001) });
  });

  it('introspection that multiplies along nested lists is refused; the standard query is answered', async () => {
    const standard = await gp.post({
      query: getIntrospectionQuery({ descriptions: true, inputValueDeprecation: true }),
    });
    expect(standard.status).toBe(200);
    expect(standard.json.data.__schema.queryType).toMatchObject({ name: 'Query' });
    // types × fields × fields × fields × ...: each level multiplies the answer.
    const amplifying = `{ __schema { types { ${'fields { type { '.repeat(6)}name${' } }'.repeat(6)} } } }`;
    const started = performance.now();
    const r = await gp.post({ query: amplifying });
    console.log(`amplifying introspection: refused in ${(performance.now() - started).toFixed(0)} ms`);
    expect(r).toEqual({
      status: 200,
      json: {
        errors: [{ message: 'Introspection nests 7 list fields, more than the maximum allowed of 3' }],
      },
    });
    // Through fragments too.
    const viaFragment = await gp.post({
      query: `{ __type(name: "Account") { ...F } }
        fragment F on __Type { fields { type { fields { type { fields { type { fields { name } } } } } } } }`,
    });
    expect(viaFragment.json).toEqual({
      errors: [{ message: 'Introspection nests 4 list fields, more than the maximum allowed of 3' }],
    });
  });

  it('leaves the pool with no client lent out', async () => {
    expect(await settledCheckedOut(gp)).toBe(0);
  });
});
