/**
 * Strata `related_filters` (opt-in per schema): filtering through relationships (to-one; to-many
 * some/every/none) and ordering by a to-one related row's column, under each API role with RLS.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Env } from './harness.js';
import { strataSuite } from './strata-suite.js';
import { work } from './wire-tap.js';

const suite = strataSuite(`
    comment on schema public is '@graphql({"inflect_names": true, "introspection": true, "strata": {"related_filters": true}})';
    create schema plain;
    comment on schema plain is '@graphql({"inflect_names": true, "introspection": true})';
    create table plain.writer (id serial primary key, name text);
    create table plain.essay (id serial primary key, writer_id int references plain.writer(id), title text);
    create table author (id serial primary key, name text not null, country text);
    create table book (
      id serial primary key,
      author_id int references author(id),
      title text not null,
      owner text not null
    );
    insert into author (name, country) values ('ann', 'fr'), ('bob', null), ('cy', 'de');
    insert into book (author_id, title, owner) values
      (1, 'A1', 'alice'), (1, 'secret', 'bob'), (2, 'secret', 'bob'), (null, 'orphan', 'alice'), (3, 'C1', 'alice');
    alter table book enable row level security;
    create policy own on book for all to authenticated
      using (owner = current_setting('request.jwt.claims', true)::jsonb ->> 'sub')
      with check (owner = current_setting('request.jwt.claims', true)::jsonb ->> 'sub');
    create policy everything on book for all to service_role using (true) with check (true);
    grant usage on schema plain to anon, authenticated, service_role;
    grant all on all tables in schema public, plain to anon, authenticated, service_role;
    grant usage on all sequences in schema public to anon, authenticated, service_role;
  `);
const { sent, as } = suite;
let env: Env;
beforeAll(() => {
  env = suite.env();
});

type Conn = { edges: { node: Record<string, unknown> }[] };
const nodes = (res: Record<string, unknown>, field: string) =>
  ((res.data as Record<string, Conn>)[field] as Conn).edges.map((e) => e.node);

const SOME_SECRET = `{ authorCollection(filter: {bookCollection: {some: {title: {eq: "secret"}}}}, orderBy: {id: AscNullsLast}) { edges { node { name } } } }`;
const NONE_SECRET = `{ authorCollection(filter: {bookCollection: {none: {title: {eq: "secret"}}}}) { edges { node { name } } } }`;
const EVERY_A = `{ authorCollection(filter: {bookCollection: {every: {title: {startsWith: "A"}}}}) { edges { node { name } } } }`;

describe('schema', () => {
  it('Filter and OrderBy gain relationship fields only in the opted-in schema', async () => {
    await as('service_role');
    const fields = async (type: string) => {
      const r = (await env.gql(`{ __type(name: "${type}") { inputFields { name type { name } } } }`)) as {
        data: { __type: { inputFields: { name: string; type: { name: string | null } }[] } | null };
      };
      return r.data.__type?.inputFields.map((f) => `${f.name}:${f.type.name}`);
    };
    expect(await fields('AuthorFilter')).toContain('bookCollection:BookToManyFilter');
    expect(await fields('BookFilter')).toContain('author:AuthorFilter');
    expect(await fields('BookOrderBy')).toContain('author:AuthorOrderBy');
    expect(await fields('BookToManyFilter')).toEqual([
      'every:BookFilter',
      'none:BookFilter',
      'some:BookFilter',
    ]);
    expect(await fields('EssayFilter')).not.toContain('writer:WriterFilter');
    expect(await fields('EssayOrderBy')).toEqual([
      'id:OrderByDirection',
      'writerId:OrderByDirection',
      'title:OrderByDirection',
    ]);
    expect(
      await env.gql('{ essayCollection(filter: {writer: {name: {eq: "x"}}}) { edges { node { id } } } }'),
    ).toEqual({
      data: null,
      errors: [{ message: 'Input for type EssayFilter contains extra keys ["writer"]' }],
    });
  });
});

describe('the switch', () => {
  it('a bad strata value fails the schema load like any bad directive', async () => {
    await env.client.query('begin');
    await env.client.query(
      `comment on schema public is '@graphql({"strata": {"related_filters": "yes", "upsert": true}})'`,
    );
    expect(await env.gql('{ authorCollection { edges { node { id } } } }')).toEqual({
      errors: [
        {
          message:
            'Error while loading schema, check comment directives. invalid type: string "yes", expected a boolean',
        },
      ],
    });
    await env.client.query(`comment on schema public is '@graphql({"strata": {"upserts": true}})'`);
    expect(await env.gql('{ authorCollection { edges { node { id } } } }')).toEqual({
      errors: [
        {
          message:
            'Error while loading schema, check comment directives. unknown strata feature `upserts`, expected one of upsert, nested_mutations, related_filters, partitioned_tables, setof_scalars, detailed_errors, domain_base_types, subscriptions',
        },
      ],
    });
  });
});

describe('to-many some / none / every: rows hidden by RLS do not count', () => {
  it('authenticated (alice sees only her books)', async () => {
    await as('authenticated', 'alice');
    expect(nodes(await env.gql(SOME_SECRET), 'authorCollection')).toEqual([]);
    expect(nodes(await env.gql(NONE_SECRET), 'authorCollection')).toEqual([
      { name: 'ann' },
      { name: 'bob' },
      { name: 'cy' },
    ]);
    // every over the visible rows: bob has none visible (vacuously true), cy's C1 fails.
    expect(nodes(await env.gql(EVERY_A), 'authorCollection')).toEqual([{ name: 'ann' }, { name: 'bob' }]);
  });
  it('authenticated as bob sees the secret books', async () => {
    await as('authenticated', 'bob');
    expect(nodes(await env.gql(SOME_SECRET), 'authorCollection')).toEqual([{ name: 'ann' }, { name: 'bob' }]);
    expect(nodes(await env.gql(NONE_SECRET), 'authorCollection')).toEqual([{ name: 'cy' }]);
  });
  it('service_role sees every book', async () => {
    await as('service_role');
    expect(nodes(await env.gql(SOME_SECRET), 'authorCollection')).toEqual([{ name: 'ann' }, { name: 'bob' }]);
    expect(nodes(await env.gql(EVERY_A), 'authorCollection')).toEqual([]);
  });
  it('anon (no policy: no book visible)', async () => {
    await as('anon');
    expect(nodes(await env.gql(SOME_SECRET), 'authorCollection')).toEqual([]);
    expect(nodes(await env.gql(NONE_SECRET), 'authorCollection')).toHaveLength(3);
  });
});

describe('to-one filters', () => {
  it('through the foreign key, in and/or/not, on nested collections', async () => {
    await as('service_role');
    const q = `{ bookCollection(filter: {author: {country: {eq: "fr"}}, not: {title: {eq: "secret"}}}) { edges { node { title } } } }`;
    expect(nodes(await env.gql(q), 'bookCollection')).toEqual([{ title: 'A1' }]);
    const nested = `{ authorCollection(filter: {name: {eq: "ann"}}) { edges { node { bookCollection(filter: {or: [{author: {country: {is: NULL}}}, {title: {eq: "A1"}}]}) { edges { node { title } } } } } } }`;
    const res = (await env.gql(nested)) as {
      data: { authorCollection: { edges: { node: { bookCollection: Conn } }[] } };
    };
    expect(res.data.authorCollection.edges[0]?.node.bookCollection.edges).toEqual([
      { node: { title: 'A1' } },
    ]);
  });
  it('update and deleteFrom filters; nothing changes for rows RLS hides', async () => {
    await as('authenticated', 'alice');
    const upd = await env.gql(
      `mutation { updateBookCollection(set: {title: "x"}, filter: {author: {name: {eq: "bob"}}}, atMost: 5) { affectedCount } }`,
    );
    expect(upd).toEqual({ data: { updateBookCollection: { affectedCount: 0 } } });
    const del = await env.gql(
      `mutation { deleteFromBookCollection(filter: {author: {name: {eq: "cy"}}}) { records { title } } }`,
    );
    expect(del).toEqual({ data: { deleteFromBookCollection: { records: [{ title: 'C1' }] } } });
  });
  it('a depth over the limit is an error', async () => {
    await as('service_role');
    let f = '{title: {eq: "x"}}';
    for (let i = 0; i < 5; i++) f = `{author: {bookCollection: {some: ${f}}}}`;
    const res = await env.gql(`{ bookCollection(filter: ${f}) { edges { node { id } } } }`);
    expect(res).toEqual({
      data: null,
      errors: [{ message: 'Filter nests relationships deeper than the limit of 8' }],
    });
  });
});

describe('order by a related column', () => {
  const Q = (dir: string, extra = '') =>
    `{ bookCollection(orderBy: [{author: {country: ${dir}}}, {id: AscNullsLast}]${extra}) { edges { cursor node { id } } pageInfo { hasNextPage } } }`;
  const idsOf = (res: Record<string, unknown>) => nodes(res, 'bookCollection').map((n) => n.id);
  it('NULLs (no author, an author without a country) follow the direction', async () => {
    await as('service_role');
    // country: b1 fr, b2 fr, b3 null (bob), b4 null (no author), b5 de
    expect(idsOf(await env.gql(Q('AscNullsFirst')))).toEqual([3, 4, 5, 1, 2]);
    expect(idsOf(await env.gql(Q('AscNullsLast')))).toEqual([5, 1, 2, 3, 4]);
    expect(idsOf(await env.gql(Q('DescNullsFirst')))).toEqual([3, 4, 1, 2, 5]);
    expect(idsOf(await env.gql(Q('DescNullsLast')))).toEqual([1, 2, 5, 3, 4]);
  });
  it('cursors page through the related order; one statement', async () => {
    await as('service_role');
    const first = (await env.gql(Q('AscNullsFirst', ', first: 2'))) as {
      data: { bookCollection: { edges: { cursor: string }[]; pageInfo: { hasNextPage: boolean } } };
    };
    expect(first.data.bookCollection.pageInfo.hasNextPage).toBe(true);
    const cursor = first.data.bookCollection.edges[1]?.cursor;
    sent.length = 0;
    const next = await env.gql(Q('AscNullsFirst', `, first: 2, after: "${cursor}"`));
    expect(idsOf(next)).toEqual([5, 1]);
    expect(work(sent)).toHaveLength(1);
  });
  it('authenticated and anon: the related table is read under the role', async () => {
    await as('authenticated', 'alice');
    expect(idsOf(await env.gql(Q('AscNullsLast')))).toEqual([5, 1, 4]);
    await env.client.query('rollback');
    await as('anon');
    expect(idsOf(await env.gql(Q('AscNullsLast')))).toEqual([]);
  });
  it('a related filter is one statement', async () => {
    await as('authenticated', 'bob');
    sent.length = 0;
    await env.gql(SOME_SECRET);
    expect(work(sent)).toHaveLength(1);
  });
});
