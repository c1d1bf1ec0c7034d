/** Plan reuse across variable values: string variables are templated, everything value-shaped is not. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ids, setupEnv, type Env } from './harness.js';
import { planFor, getEntry } from '../../../src/graphql/execute/cache.js';
import { entryFor } from '../../../src/graphql/execute/run-client.js';

let env: Env;
beforeAll(async () => {
  env = await setupEnv();
});
afterAll(() => env.close());

describe('plans across variable values', () => {
  it('reuses one template for string filter values and binds each request its own', async () => {
    const q =
      'query Q($name: String, $prefix: String) { blogCollection(filter: {or: [{name: {eq: $name}}, {name: {startsWith: $prefix}}]}) { edges { node { id } } } }';
    expect(ids(await env.gql(q, { name: 'alpha', prefix: 'zzz' }), 'blogCollection')).toEqual([1]);
    expect(ids(await env.gql(q, { name: 'gamma', prefix: 'b' }), 'blogCollection')).toEqual([2, 3]);
    expect(ids(await env.gql(q, { name: "x' or '1'='1", prefix: 'q' }), 'blogCollection')).toEqual([]);
    const entry = await entryFor(env.client);
    const a = planFor(entry, { query: q, variables: { name: 'a', prefix: 'b' } });
    const b = planFor(entry, { query: q, variables: { name: 'c', prefix: 'd' } });
    expect(a.kind === 'plan' && b.kind === 'plan').toBe(true);
    if (a.kind === 'plan' && b.kind === 'plan') {
      const [ia, ib] = [a.items[0]!, b.items[0]!];
      expect(ia.kind === 'sql' && ib.kind === 'sql' && ia.compiled.sql === ib.compiled.sql).toBe(true);
      if (ia.kind === 'sql' && ib.kind === 'sql') expect(ib.compiled.params).toContain('c');
    }
    expect(getEntry(entry.key)).toBe(entry);
  });
  it('keeps value-dependent validation: length-checked strings, cursors, numbers', async () => {
    const q =
      'query Q($e: String) { accountCollection(filter: {email: {eq: $e}}) { edges { node { id } } } }';
    expect(ids(await env.gql(q, { e: 'b@x.com' }), 'accountCollection')).toEqual([2]);
    expect(await env.gql(q, { e: 'x'.repeat(41) })).toEqual({
      data: null,
      errors: [{ message: 'Invalid input for String type. Maximum character length 40' }],
    });
    const page =
      'query P($after: Cursor, $n: Int) { accountCollection(first: $n, after: $after) { edges { node { id } } } }';
    expect(
      ids(await env.gql(page, { after: Buffer.from('[1]').toString('base64'), n: 1 }), 'accountCollection'),
    ).toEqual([2]);
    expect(
      ids(await env.gql(page, { after: Buffer.from('[2]').toString('base64'), n: 5 }), 'accountCollection'),
    ).toEqual([3]);
    expect(await env.gql(page, { after: 'not a cursor', n: 1 })).toEqual({
      data: null,
      errors: [{ message: 'Failed to decode cursor, error 1' }],
    });
  });
  it('templates integer values that are parameters, never limits or atMost', async () => {
    const byPk = 'query Q($id: Int!) { accountByPk(id: $id) { email } }';
    expect(await env.gql(byPk, { id: 1 })).toEqual({ data: { accountByPk: { email: 'a@x.com' } } });
    expect(await env.gql(byPk, { id: 3 })).toEqual({ data: { accountByPk: { email: 'c@x.com' } } });
    const firstN = 'query Q($n: Int) { accountCollection(first: $n) { edges { node { id } } } }';
    expect(ids(await env.gql(firstN, { n: 1 }), 'accountCollection')).toEqual([1]);
    expect(ids(await env.gql(firstN, { n: 2 }), 'accountCollection')).toEqual([1, 2]);
    const both =
      'query Q($n: Int) { accountCollection(first: $n, filter: {id: {gte: $n}}) { edges { node { id } } } }';
    expect(ids(await env.gql(both, { n: 1 }), 'accountCollection')).toEqual([1]);
    expect(ids(await env.gql(both, { n: 2 }), 'accountCollection')).toEqual([2, 3]);
    const literal =
      'query Q($id: Int) { accountCollection(filter: {or: [{id: {eq: $id}}, {id: {eq: 1900000001}}]}) { edges { node { id } } } }';
    expect(ids(await env.gql(literal, { id: 2 }), 'accountCollection')).toEqual([2]);
    await env.client.query('begin');
    try {
      const del =
        'mutation M($m: Int!, $t: String) { deleteFromPostCollection(atMost: $m, filter: {title: {neq: $t}}) { affectedCount } }';
      expect(await env.gql(del, { m: 1, t: 'none' })).toEqual({
        data: null,
        errors: [{ message: 'delete impacts too many records' }],
      });
      expect(await env.gql(del, { m: 3, t: 'none' })).toEqual({
        data: { deleteFromPostCollection: { affectedCount: 3 } },
      });
    } finally {
      await env.client.query('rollback');
    }
  });
  it('names the variable of each templated parameter; a variable read as a limit is not templated', async () => {
    const entry = await entryFor(env.client);
    const q =
      'query Q($name: String) { blogCollection(filter: {name: {eq: $name}}) { edges { node { id } } } }';
    const a = planFor(entry, { query: q, variables: { name: 'alpha' } });
    const b = planFor(entry, { query: q, variables: { name: 'gamma' } });
    if (a.kind !== 'plan' || b.kind !== 'plan') throw new Error('expected plans');
    const [ia, ib] = [a.items[0], b.items[0]];
    if (ia?.kind !== 'sql' || ib?.kind !== 'sql') throw new Error('expected SQL items');
    expect(ib.compiled.sql).toBe(ia.compiled.sql);
    const slot = ia.compiled.variables.indexOf('name');
    expect(slot).toBeGreaterThanOrEqual(0);
    expect([ia.compiled.params[slot], ib.compiled.params[slot]]).toEqual(['alpha', 'gamma']);
    const limited = 'query Q($n: Int) { blogCollection(first: $n) { edges { node { id } } } }';
    const one = planFor(entry, { query: limited, variables: { n: 1 } });
    const two = planFor(entry, { query: limited, variables: { n: 2 } });
    if (one.kind !== 'plan' || two.kind !== 'plan') throw new Error('expected plans');
    const [i1, i2] = [one.items[0], two.items[0]];
    if (i1?.kind !== 'sql' || i2?.kind !== 'sql') throw new Error('expected SQL items');
    expect(i1.compiled.sql).toContain('limit 1');
    expect(i2.compiled.sql).toContain('limit 2');
    expect([...i1.compiled.variables, ...i2.compiled.variables].every((v) => v === undefined)).toBe(true);
  });
});
