/**
 * pg_graphql parity for validation messages (issue 13, class 6), derived from pg_graphql's own rules:
 * - merging (merge.rs): fields of one response key are merged after the selection set is expanded;
 *   different names give "Fields `<later>` and `<earlier>` are different", different arguments
 *   "Two fields named `<field name>` have different arguments"; arguments compare as written
 *   (variables by name, object fields in any order, argument order free);
 * - normalize errors of the top-level selection answer the whole request without `data`
 *   (resolve.rs); below a top-level field they are that field's error;
 * - @skip/@include (parser_util.rs selection_is_skipped): other directives are refused, exactly one
 *   argument named `if`, a non-boolean literal is ignored, a variable is read as sent (no default);
 * - unknown arguments are listed all together, as Rust prints a list (restrict_allowed_arguments);
 *   a repeated argument or variable declaration: the first one is read;
 * - variables: a declared type is not checked; an absent variable is absent unless it has a default
 *   (to_gson); a missing element of a `[T!]` list is "Invalid input for NonNull type";
 * - a fragment applies on its own type only (parser_util.rs normalize_selection): an inline one on
 *   another type is left out, a spread of one is "no fragment named F on type T", as is a spread of
 *   a missing fragment;
 * - a top-level selection set that is empty once expanded: "Selection set must not be empty";
 * - operations (resolve_inner): anonymous, then unique names, then fragment cycles, then the
 *   operation named (an empty operationName names none).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupEnv, type Env } from './harness.js';

let env: Env;
beforeAll(async () => {
  env = await setupEnv();
});
afterAll(() => env?.close());

const emails = (r: Record<string, unknown>) =>
  (r.data as { accountCollection: { edges: { node: { email: string } }[] } }).accountCollection.edges.map(
    (e) => e.node.email,
  );

describe('field merging', () => {
  it('different names under one key: the later field is named first; nested → that field fails', async () => {
    const r = await env.gql(`{
      accountCollection { edges { node { email } } }
      accountCollection { edges { node { email: id } } }
    }`);
    expect(r).toEqual({ data: null, errors: [{ message: 'Fields `id` and `email` are different' }] });
  });

  it('a conflict among top-level fields answers the request without data', async () => {
    expect(await env.gql('{ a: accountCollection { __typename } a: blogCollection { __typename } }')).toEqual(
      {
        errors: [{ message: 'Fields `blogCollection` and `accountCollection` are different' }],
      },
    );
    expect(
      await env.gql(
        '{ x: accountCollection(first: 1) { __typename } x: accountCollection(first: 2) { __typename } }',
      ),
    ).toEqual({ errors: [{ message: 'Two fields named `accountCollection` have different arguments' }] });
  });

  it('different arguments below a top-level field are that field’s error; other fields still answer', async () => {
    const r = await env.gql(`{
      __typename
      accountCollection(first: 1) { edges { node {
        blogCollection(first: 1) { totalCount: __typename }
        blogCollection(first: 2) { __typename }
      } } }
    }`);
    expect(r).toEqual({
      data: { __typename: 'Query' },
      errors: [{ message: 'Two fields named `blogCollection` have different arguments' }],
    });
  });

  it('arguments compare as written: order free, object fields in any order, variables by name', async () => {
    const same = await env.gql(`{
      accountCollection(first: 2, filter: { id: { gt: 0 }, email: { neq: "x" } }) { edges { node { email } } }
      accountCollection(filter: { email: { neq: "x" }, id: { gt: 0 } }, first: 2) { edges { node { id } } }
    }`);
    expect(emails(same)).toEqual(['a@x.com', 'b@x.com']);
    const q = `query($a: Int, $b: Int) {
      accountCollection(first: $a) { edges { node { email } } }
      accountCollection(first: $b) { edges { node { email } } }
    }`;
    expect(await env.gql(q, { a: 1, b: 1 })).toEqual({
      errors: [{ message: 'Two fields named `accountCollection` have different arguments' }],
    });
    const literalVsVariable = `query($a: Int) {
      accountCollection(first: 1) { __typename }
      accountCollection(first: $a) { __typename }
    }`;
    expect(await env.gql(literalVsVariable, { a: 1 })).toEqual({
      errors: [{ message: 'Two fields named `accountCollection` have different arguments' }],
    });
  });

  it('the selection set is expanded before merging: a directive error later in it comes first', async () => {
    const r = await env.gql(`query($s: Boolean) {
      accountCollection { edges { node { email email: id id @skip(if: $s) } } }
    }`);
    expect(r).toEqual({ data: null, errors: [{ message: 'Value for "if" in @skip directive is required' }] });
  });
});

describe('fragments by type', () => {
  const inNode = (s: string, frags = '') =>
    `{ accountCollection(first: 1) { edges { node { id ${s} } } } } ${frags}`;

  it('a spread needs a fragment of that name on that very type', async () => {
    expect(await env.gql(inNode('...F', 'fragment F on Blog { id }'))).toEqual({
      data: null,
      errors: [{ message: 'no fragment named F on type Account' }],
    });
    expect(await env.gql(inNode('...Missing'))).toEqual({
      data: null,
      errors: [{ message: 'no fragment named Missing on type Account' }],
    });
    expect(await env.gql(inNode('...F', 'fragment F on Node { nodeId }'))).toEqual({
      data: null,
      errors: [{ message: 'no fragment named F on type Account' }],
    });
    expect(await env.gql('{ ...F } fragment F on Account { id }')).toEqual({
      errors: [{ message: 'no fragment named F on type Query' }],
    });
    expect(emails(await env.gql(inNode('...F', 'fragment F on Account { email }')))).toEqual(['a@x.com']);
  });

  it('an inline fragment on another type, an interface included, is left out', async () => {
    const r = await env.gql(inNode('... on Blog { name } ... on Node { nodeId } ... { email }'));
    expect(r).toEqual({ data: { accountCollection: { edges: [{ node: { id: 1, email: 'a@x.com' } }] } } });
  });
});

describe('empty selections', () => {
  it('a top-level selection set left empty is refused: a query without data, a mutation with data null', async () => {
    expect(await env.gql('{ __typename @skip(if: true) }')).toEqual({
      errors: [{ message: 'Selection set must not be empty' }],
    });
    expect(await env.gql('mutation { __typename @include(if: false) }')).toEqual({
      data: null,
      errors: [{ message: 'Selection set must not be empty' }],
    });
  });
});

describe('directives', () => {
  const inNode = (d: string) => `{ accountCollection(first: 1) { edges { node { id email ${d} } } } }`;

  it('only @skip and @include; exactly one argument, named `if`', async () => {
    expect(await env.gql(inNode('@deprecated'))).toEqual({
      data: null,
      errors: [{ message: 'Unknown directive deprecated' }],
    });
    expect(await env.gql(inNode('@skip(if: true, also: true)'))).toEqual({
      data: null,
      errors: [{ message: 'Incorrect arguments to directive @skip' }],
    });
    expect(await env.gql(inNode('@include(when: true)'))).toEqual({
      data: null,
      errors: [{ message: 'Unknown argument to @include: when' }],
    });
    expect(await env.gql('{ accountCollection @foo { __typename } }')).toEqual({
      errors: [{ message: 'Unknown directive foo' }],
    });
  });

  it('a non-boolean literal is ignored; a variable is read as sent, its default not counted', async () => {
    expect(emails(await env.gql(inNode('@skip(if: "yes")')))).toEqual(['a@x.com']);
    const q = `query($s: Boolean = true) { accountCollection(first: 1) { edges { node { id email @skip(if: $s) } } } }`;
    expect(await env.gql(q)).toEqual({
      data: null,
      errors: [{ message: 'Value for "if" in @skip directive is required' }],
    });
    expect(await env.gql(q, { s: false })).toMatchObject({
      data: { accountCollection: { edges: [{ node: { id: 1 } }] } },
    });
  });
});

describe('arguments and variables', () => {
  it('unknown arguments are listed together, in document order', async () => {
    expect(await env.gql('{ accountCollection(foo: 1, first: 1, bar: 2) { __typename } }')).toEqual({
      data: null,
      errors: [{ message: 'Input contains extra keys ["foo", "bar"]' }],
    });
    expect(await env.gql('{ add(a: 1, c: 2) }')).toEqual({
      data: null,
      errors: [{ message: 'Input contains extra keys ["c"]' }],
    });
  });

  it('a declared variable type is not checked: an absent `Int!` is absent, a default fills in', async () => {
    const q = 'query($n: Int!) { accountCollection(first: $n) { edges { node { email } } } }';
    expect(emails(await env.gql(q))).toEqual(['a@x.com', 'b@x.com', 'c@x.com']);
    const d = 'query($n: Int = 1) { accountCollection(first: $n) { edges { node { email } } } }';
    expect(emails(await env.gql(d))).toEqual(['a@x.com']);
    expect(emails(await env.gql(d, { n: 2 }))).toEqual(['a@x.com', 'b@x.com']);
    // The value is checked against the argument's type where it is used.
    expect(
      await env.gql('query($n: String) { accountCollection(first: $n) { __typename } }', { n: 'x' }),
    ).toEqual({
      data: null,
      errors: [{ message: 'Invalid input for Int type' }],
    });
  });

  it('a function argument without a default is required: absent or null is refused', async () => {
    for (const q of ['{ add }', '{ add(a: null) }', '{ add(b: 1) }'])
      expect(await env.gql(q)).toEqual({
        data: null,
        errors: [{ message: 'Invalid input for NonNull type' }],
      });
    expect(await env.gql('{ add(a: 1, b: null) }')).toEqual({ data: { add: null } });
  });

  it('a repeated argument or variable declaration: the first one counts', async () => {
    const twice = '{ accountCollection(first: 1, first: 2) { edges { node { email } } } }';
    expect(emails(await env.gql(twice))).toEqual(['a@x.com']);
    const declaredTwice =
      'query($n: Int, $n: Int = 2) { accountCollection(first: $n) { edges { node { email } } } }';
    expect(emails(await env.gql(declaredTwice))).toEqual(['a@x.com', 'b@x.com', 'c@x.com']);
  });

  it('a missing element of a list of non-null inputs is refused', async () => {
    expect(await env.gql('{ accountCollection(orderBy: [null]) { __typename } }')).toEqual({
      data: null,
      errors: [{ message: 'Invalid input for NonNull type' }],
    });
    expect(
      await env.gql(
        'query($o: AccountOrderBy) { accountCollection(orderBy: [{ id: DescNullsLast }, $o]) { __typename } }',
      ),
    ).toEqual({ data: null, errors: [{ message: 'Invalid input for NonNull type' }] });
    const filters = [
      '{ id: { in: [1, null] } }',
      '{ and: [null] }',
      '{ or: [{ id: { eq: 1 } }, null] }',
      '{ tags: { contains: [null] } }',
    ];
    for (const filter of filters)
      expect(await env.gql(`{ accountCollection(filter: ${filter}) { __typename } }`)).toEqual({
        data: null,
        errors: [{ message: 'Invalid input for NonNull type' }],
      });
    expect(await env.gql('mutation { insertIntoBlogCollection(objects: [null]) { affectedCount } }')).toEqual(
      {
        data: null,
        errors: [{ message: 'Invalid input for NonNull type' }],
      },
    );
  });
});

describe('operations', () => {
  it('checks in pg_graphql’s order: anonymous, unique names, fragment cycles, the operation named', async () => {
    const cycle = 'fragment A on Account { ...B } fragment B on Account { ...A }';
    expect(await env.gql(`{ __typename } query Q { __typename } query Q { __typename } ${cycle}`)).toEqual({
      errors: [{ message: 'Anonymous operations must be the only defined operation' }],
    });
    expect(await env.gql(`query Q { __typename } query Q { __typename } ${cycle}`, null, 'Nope')).toEqual({
      errors: [{ message: 'Operation names must be unique' }],
    });
    expect(await env.gql(`query Q { __typename } ${cycle}`, null, 'Nope')).toEqual({
      errors: [{ message: 'Found a cycle between fragments' }],
    });
    expect(await env.gql('query P { __typename } query Q { __typename }')).toEqual({
      errors: [{ message: 'Operation not found' }],
    });
  });

  it('a named subscription counts as anonymous; an empty operationName names no operation', async () => {
    expect(await env.gql('subscription S { __typename } query Q { __typename }', null, 'Q')).toEqual({
      errors: [{ message: 'Anonymous operations must be the only defined operation' }],
    });
    expect(await env.gql('{ __typename }', null, '')).toEqual({
      errors: [{ message: 'Operation not found' }],
    });
    expect(await env.gql('query Q { __typename }', null, 'Q')).toEqual({ data: { __typename: 'Query' } });
  });
});
