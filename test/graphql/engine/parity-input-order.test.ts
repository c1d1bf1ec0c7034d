/**
 * pg_graphql parity (issue 13, class 11): the order in which an input object's fields are checked.
 * pg_graphql validates an argument before building anything (parser_util.rs
 * validate_arg_from_input_object): extra keys first, then each field in the order of the input
 * TYPE's fields, not the order the client wrote them; a list is checked element after element, each
 * element whole. So with several bad fields, the error is the one of the field first in the type.
 * Also fragments whose names repeat: a spread takes the first definition of that name on its type
 * (parser_util.rs normalize_selection), and the HTTP limits measure the largest of them.
 */
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryShape } from '../../../src/graphql/http/query-shape.js';
import { setupEnv, type Env } from './harness.js';

let env: Env;
beforeAll(async () => {
  env = await setupEnv();
});
afterAll(() => env?.close());

const errorOf = async (query: string, variables?: Record<string, unknown>) => {
  const r = await env.gql(query, variables ?? null);
  return (r.errors as { message: string }[] | undefined)?.[0]?.message;
};

describe('filters', () => {
  it('two bad column filters: the column first in the type is reported, whatever the written order', async () => {
    // Type order: id (Int) before email (String).
    const q = 'query($f: AccountFilter) { accountCollection(filter: $f) { edges { node { id } } } }';
    expect(await errorOf(q, { f: { email: { eq: 1 }, id: { eq: 'x' } } })).toBe('Invalid input for Int type');
    expect(await errorOf(q, { f: { id: { eq: 'x' }, email: { eq: 1 } } })).toBe('Invalid input for Int type');
  });

  it('two bad operators of one column: the operator first in the filter type is reported', async () => {
    // StringFilter's fields are sorted: eq before is.
    const q = 'query($f: AccountFilter) { accountCollection(filter: $f) { edges { node { id } } } }';
    expect(await errorOf(q, { f: { email: { is: 'BAD', eq: 1 } } })).toBe('Invalid input for String type');
  });

  it('a bad column filter comes before a bad `and` entry (columns precede and/or/not in the type)', async () => {
    const q = 'query($f: AccountFilter) { accountCollection(filter: $f) { edges { node { id } } } }';
    expect(await errorOf(q, { f: { and: [{ id: { eq: 'x' } }], email: { eq: 1 } } })).toBe(
      'Invalid input for String type',
    );
  });

  it('good filters still give the same rows in any written order', async () => {
    const q = 'query($f: AccountFilter) { accountCollection(filter: $f) { edges { node { email } } } }';
    for (const f of [
      { isAdmin: { eq: false }, email: { startsWith: 'b' } },
      { email: { startsWith: 'b' }, isAdmin: { eq: false } },
    ]) {
      const r = await env.gql(q, { f });
      expect(r).toEqual({ data: { accountCollection: { edges: [{ node: { email: 'b@x.com' } }] } } });
    }
  });
});

describe('mutations', () => {
  it('insert: the first bad record is reported whole before a later record is looked at', async () => {
    const q = `mutation($o: [PostInsertInput!]!) { insertIntoPostCollection(objects: $o) { affectedCount } }`;
    // The first record's value is wrong, the second has an extra key: pg_graphql reports the first.
    expect(await errorOf(q, { o: [{ blogId: 1, title: 5 }, { bogus: 1 }] })).toBe(
      'Invalid input for String type',
    );
    // Within one record, the field first in the type (blogId before title).
    expect(await errorOf(q, { o: [{ title: 5, blogId: 'x' }] })).toBe('Invalid input for Int type');
    const { rows } = await env.client.query('select count(*)::int as n from post');
    expect(rows[0].n).toBe(3);
  });

  it('update set: the field first in the type is reported, and good sets apply in any order', async () => {
    const q = `mutation($s: PostUpdateInput!) {
      updatePostCollection(set: $s, filter: {id: {eq: 1}}) { records { title blogId } }
    }`;
    expect(await errorOf(q, { s: { title: 5, blogId: 'x' } })).toBe('Invalid input for Int type');
    const r = await env.gql(q, { s: { title: 'renamed', blogId: 1 } });
    expect(r).toEqual({ data: { updatePostCollection: { records: [{ title: 'renamed', blogId: 1 }] } } });
    await env.client.query("update post set title = 'p1' where id = 1");
  });
});

describe('fragments of one name', () => {
  it('one name on two types: each spread takes the definition on its own type', async () => {
    const r = await env.gql(`{
      accountCollection(first: 1) { edges { node { ...F } } }
      blogCollection(first: 1) { edges { node { ...F } } }
    }
    fragment F on Account { email }
    fragment F on Blog { name }`);
    expect(r).toEqual({
      data: {
        accountCollection: { edges: [{ node: { email: 'a@x.com' } }] },
        blogCollection: { edges: [{ node: { name: 'alpha' } }] },
      },
    });
  });

  it('one name twice on the same type: the first definition is used', async () => {
    const r = await env.gql(`{ accountCollection(first: 1) { edges { node { ...F } } } }
    fragment F on Account { email }
    fragment F on Account { id }`);
    expect(r).toEqual({ data: { accountCollection: { edges: [{ node: { email: 'a@x.com' } }] } } });
  });

  it('the depth and width limits see the largest definition, so a small twin cannot hide a big one', () => {
    const doc = parse(`{ accountCollection { edges { node { ...F } } } }
    fragment F on Account { blogCollection { edges { node { postCollection { edges { node { id title } } } } } } }
    fragment F on Blog { id }`);
    const shape = queryShape(doc, undefined);
    expect(shape.depth).toBeGreaterThanOrEqual(9);
    expect(shape.selections).toBeGreaterThanOrEqual(10);
  });
});

describe('atMost', () => {
  // pg_graphql reads `atMost: Int! = 1` and takes 1 for any value that fails Int! (read_argument_at_most).
  const del = (atMost: string) =>
    `mutation($m: Int) { deleteFromPostCollection(filter: {blogId: {eq: 1}}, atMost: ${atMost}) { affectedCount } }`;

  it('null, a string, a float: the default 1, so deleting two records is refused', async () => {
    for (const [atMost, variables] of [
      ['null', undefined],
      ['$m', { m: '5' }],
      ['2.5', undefined],
      ['$m', { m: null }],
    ] as const) {
      const r = await env.gql(del(atMost), variables ?? null);
      expect(r, atMost).toEqual({ data: null, errors: [{ message: 'delete impacts too many records' }] });
    }
    const { rows } = await env.client.query('select count(*)::int as n from post where blog_id = 1');
    expect(rows[0].n).toBe(2);
  });

  it('an integer is taken as it is: 2 allows two records, -1 refuses even none', async () => {
    const upd = `mutation { updatePostCollection(set: {title: "t"}, filter: {blogId: {eq: 1}}, atMost: 2) { affectedCount } }`;
    expect(await env.gql(upd)).toEqual({ data: { updatePostCollection: { affectedCount: 2 } } });
    await env.client.query("update post set title = 'p' || id where blog_id = 1");
    const none = `mutation { deleteFromPostCollection(filter: {id: {eq: -7}}, atMost: -1) { affectedCount } }`;
    expect(await env.gql(none)).toEqual({
      data: null,
      errors: [{ message: 'delete impacts too many records' }],
    });
  });
});
