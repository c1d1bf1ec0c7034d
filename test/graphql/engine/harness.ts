/** Shared setup for the engine tests: a fresh database with the engine installed and a sample schema. */
import type pg from 'pg';
import { connect, createTestDatabase, type TestDatabase } from '../../support/database.js';
import { installSchema, resolve } from '../../../src/graphql/engine.js';

export const SAMPLE_SCHEMA = `
comment on schema public is '@graphql({"inflect_names": true, "introspection": true})';
create type post_status as enum ('draft', 'published');
comment on type post_status is '@graphql({"mappings": {"draft": "DRAFT", "published": "PUBLISHED"}})';
create table account (
  id serial primary key,
  email varchar(40) not null unique,
  is_admin boolean not null default false,
  score float8,
  balance numeric(10, 2),
  big bigint,
  born date,
  wakes time,
  created_at timestamp not null default '2024-01-01 00:00',
  ext_id uuid,
  meta jsonb,
  tags text[]
);
comment on table account is '@graphql({"totalCount": {"enabled": true}, "aggregate": {"enabled": true}})';
create table blog (
  id serial primary key,
  owner_id int not null references account(id),
  name text not null
);
create table post (
  id serial primary key,
  blog_id int not null references blog(id),
  title text not null,
  status post_status not null default 'draft'
);
create table profile (
  id serial primary key,
  account_id int not null unique references account(id),
  bio text
);
create function _display(a account) returns text stable language sql as $$ select a.email || '!' $$;
create function blog_count(a account) returns bigint stable language sql as $$ select count(*) from blog b where b.owner_id = a.id $$;
create function add(a int, b int default 10) returns int immutable language sql as $$ select a + b $$;
create function bump(amount int) returns int volatile language sql as $$ select amount + 1 $$;
create function blogs_named(prefix text) returns setof blog stable language sql as $$ select * from blog where name like prefix || '%' $$;
create function fail_now() returns int stable language sql as $$ select 1 / 0 $$;
create view admin_account as select id, email from account where is_admin;
comment on view admin_account is '@graphql({"primary_key_columns": ["id"]})';
insert into account (email, is_admin, score, balance, big, born, wakes, ext_id, meta, tags) values
  ('a@x.com', true, 1.5, 10.50, 9007199254740993, '2000-01-01', '07:00', '11111111-1111-1111-1111-111111111111', '{"k": 1}', '{red,blue}'),
  ('b@x.com', false, 2.5, 20.25, 2, '2001-02-03', '08:30', '22222222-2222-2222-2222-222222222222', null, '{blue}'),
  ('c@x.com', false, null, null, null, null, null, null, null, null);
insert into blog (owner_id, name) values (1, 'alpha'), (1, 'beta'), (2, 'gamma');
insert into post (blog_id, title, status) values (1, 'p1', 'published'), (1, 'p2', 'draft'), (3, 'p3', 'published');
insert into profile (account_id, bio) values (1, 'hello');
`;

/** `n` items owned by u0, u1, u2 in turn, each visible to the `authenticated` user whose `sub` owns it. */
export const ownedItems = (n: number) => `
create table item (id serial primary key, name text not null, owner text);
insert into item (name, owner) select 'item' || n, 'u' || (n % 3) from generate_series(1, ${n}) n;
alter table item enable row level security;
create policy mine on item for select to authenticated
  using (owner = current_setting('request.jwt.claims', true)::jsonb ->> 'sub');
`;

export interface Env {
  db: TestDatabase;
  client: pg.Client;
  gql: (
    query: string,
    variables?: Record<string, unknown> | null,
    operationName?: string | null,
  ) => Promise<Record<string, unknown>>;
  close: () => Promise<void>;
}

export async function setupEnv(schemaSql: string = SAMPLE_SCHEMA): Promise<Env> {
  const db = await createTestDatabase({ prefix: 'gqlengine' });
  const client = await connect(db.url);
  await installSchema(client);
  await client.query(schemaSql);
  return {
    db,
    client,
    gql: (query, variables = null, operationName = null) =>
      resolve(client, { query, variables, operationName }),
    close: async () => {
      await client.end();
      await db.drop();
    },
  };
}

/** The ids of a connection's nodes. */
export function ids(res: Record<string, unknown>, field: string): unknown[] {
  const data = res.data as Record<string, { edges: { node: { id: unknown } }[] }>;
  return data[field]!.edges.map((e) => e.node.id);
}
