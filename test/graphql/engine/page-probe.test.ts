/**
 * pageInfo's "rows beyond the page" (hasNextPage forward, hasPreviousPage backward) is read from
 * the page query fetching one row more than the page (transpile/connection.ts), not a second scan.
 * Every combination of first/last, offset and cursor position is checked against the rows
 * themselves, nested under a relationship as well as at the root, with row-level security on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupEnv, type Env } from './harness.js';

let env: Env;
const N = 7;

beforeAll(async () => {
  env = await setupEnv(`
    create table shelf (id int primary key);
    create table book (id int primary key, shelf_id int not null references shelf(id), rank int not null, hidden boolean not null default false);
    insert into shelf values (1);
    -- ranks repeat, so the order needs the key as a tie-breaker; hidden rows are filtered by RLS.
    insert into book select i, 1, i % 3, false from generate_series(1, ${N}) i;
    insert into book values (100, 1, 0, true), (101, 1, 2, true);
    alter table book enable row level security;
    create policy visible on book for select using (not hidden);
    grant select on shelf, book to anon;
    set role anon;
  `);
});
afterAll(async () => {
  await env.close();
});

/** Visible books in the order rank desc, id asc. */
const ordered = Array.from({ length: N }, (_, i) => ({ id: i + 1, rank: (i + 1) % 3 })).sort(
  (a, b) => b.rank - a.rank || a.id - b.id,
);
const cursorOf = (b: { id: number; rank: number }) => Buffer.from(`[${b.rank}, ${b.id}]`).toString('base64');

interface Case {
  args: string;
  ids: number[];
  hasNextPage: boolean;
  hasPreviousPage: boolean;
}

function cases(): Case[] {
  const out: Case[] = [];
  const ids = ordered.map((b) => b.id);
  for (const first of [0, 1, 2, 3, N, N + 1])
    for (const offset of [0, 1, 3])
      for (const at of [-1, 0, 2, N - 1]) {
        const start = at + 1 + offset;
        const page = ids.slice(start, start + first);
        const anyAfterCursor = ids.length > at + 1;
        out.push({
          args: `first: ${first}${offset ? `, offset: ${offset}` : ''}${at >= 0 ? `, after: "${cursorOf(ordered[at]!)}"` : ''}`,
          ids: page,
          hasNextPage: ids.length > start + first,
          hasPreviousPage: offset > 0 ? anyAfterCursor || at >= 0 : at >= 0,
        });
      }
  for (const last of [1, 2, 3, N, N + 1])
    for (const at of [N, N - 1, 3, 0]) {
      const before = ids.slice(0, at);
      const page = before.slice(Math.max(0, before.length - last));
      out.push({
        args: `last: ${last}${at < N ? `, before: "${cursorOf(ordered[at]!)}"` : ''}`,
        ids: page,
        hasNextPage: at < N,
        hasPreviousPage: before.length > last,
      });
    }
  return out;
}

describe('pageInfo from one row more than the page', () => {
  it('matches the rows for every first/last/offset/cursor combination, at the root and nested', async () => {
    for (const c of cases()) {
      const sel = `(${c.args}, orderBy: [{rank: DescNullsLast}, {id: AscNullsLast}]) { edges { node { id } } pageInfo { hasNextPage hasPreviousPage } }`;
      const root = (await env.gql(`{ bookCollection${sel} }`)) as {
        data: { bookCollection: { edges: { node: { id: number } }[]; pageInfo: unknown } };
      };
      const expected = {
        ids: c.ids,
        pageInfo: { hasNextPage: c.hasNextPage, hasPreviousPage: c.hasPreviousPage },
      };
      const got = (conn: { edges: { node: { id: number } }[]; pageInfo: unknown }) => ({
        ids: conn.edges.map((e) => e.node.id),
        pageInfo: conn.pageInfo,
      });
      expect({ args: c.args, ...got(root.data.bookCollection) }).toEqual({ args: c.args, ...expected });
      const nested = (await env.gql(`{ shelfCollection { edges { node { bookCollection${sel} } } } }`)) as {
        data: {
          shelfCollection: {
            edges: { node: { bookCollection: { edges: { node: { id: number } }[]; pageInfo: unknown } } }[];
          };
        };
      };
      const inner = nested.data.shelfCollection.edges[0]?.node.bookCollection;
      expect({ args: c.args, nested: true, ...got(inner as NonNullable<typeof inner>) }).toEqual({
        args: c.args,
        nested: true,
        ...expected,
      });
    }
  });
});
