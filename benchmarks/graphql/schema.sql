-- Benchmark data set: accounts 1:N posts 1:N comments with row level security.
-- 1,000 accounts, 10,000 posts (10 each, every 7th unpublished), 50,000 comments (5 per post).
-- Loaded by the superuser into the `bench` database after the project bootstrap
-- (roles anon/authenticated/service_role/authenticator, auth.uid(), auth.jwt()).
-- Requests run as role `authenticated` with request.jwt.claims = {"role":"authenticated","sub":<user_id>}.
-- Strata's upsert and related_filters switches serve the `upsert` and `relatedFilter` operations;
-- they change no other operation's SQL.
comment on schema public is '@graphql({"inflect_names": true, "strata": {"upsert": true, "related_filters": true}})';

create table public.accounts (
  id         int generated always as identity primary key,
  user_id    uuid not null unique,
  email      text not null unique,
  name       text not null,
  created_at timestamptz not null default now()
);

create table public.posts (
  id         int generated always as identity primary key,
  author_id  int not null references public.accounts(id),
  title      text not null,
  body       text not null,
  published  boolean not null default true,
  created_at timestamptz not null default now()
);
create index posts_author_id_idx on public.posts(author_id);
create index posts_created_at_idx on public.posts(created_at);

-- The key's default comes from a sequence the column does not own: an identity (or serial) key
-- is "serial" to pg_graphql, which leaves it out of insert inputs, and the upsert scenario sets
-- the key of an existing comment.
create sequence public.comments_id_seq;
create table public.comments (
  id         int primary key default nextval('public.comments_id_seq'),
  post_id    int not null references public.posts(id),
  author_id  int not null references public.accounts(id),
  body       text not null,
  created_at timestamptz not null default now()
);
create index comments_post_id_idx on public.comments(post_id);
create index comments_author_id_idx on public.comments(author_id);

insert into public.accounts(user_id, email, name, created_at)
  select md5('account-' || i)::uuid, 'user' || i || '@example.com', 'User ' || i,
         timestamptz '2024-01-01 00:00:00+00' + i * interval '1 minute'
  from generate_series(1, 1000) i;
insert into public.posts(author_id, title, body, published, created_at)
  select 1 + (i - 1) % 1000, 'Post ' || i, repeat('lorem ipsum ', 10), i % 7 <> 0,
         timestamptz '2024-02-01 00:00:00+00' + i * interval '1 minute'
  from generate_series(1, 10000) i;
insert into public.comments(post_id, author_id, body, created_at)
  select 1 + (i - 1) % 10000, 1 + (i * 7) % 1000, 'Comment ' || i,
         timestamptz '2024-03-01 00:00:00+00' + i * interval '1 second'
  from generate_series(1, 50000) i;
-- Inserts by the benchmark get ids above the fixed data (see dataset.mjs resetMutations()).
select setval('public.comments_id_seq', 50000);

-- Helper outside the exposed schema (neither engine reflects it): the caller's account id,
-- from the JWT's `sub` claim through auth.uid().
create schema app_private;
create function app_private.current_account_id() returns int
  language sql stable
  as $$ select id from public.accounts where user_id = auth.uid() $$;
grant usage on schema app_private to anon, authenticated, service_role;
grant execute on function app_private.current_account_id() to anon, authenticated, service_role;

-- Privileges (the project bootstrap's default privileges already grant the API roles on public;
-- spelled out here so the data set does not depend on them).
grant select on public.accounts, public.posts, public.comments to authenticated;
grant insert, update, delete on public.posts, public.comments to authenticated;
grant usage on sequence public.comments_id_seq to authenticated;

-- RLS: a post is visible when published or when it is the caller's own; comments are readable
-- by everyone, writable by their author. `(select ...)` makes the claim lookup an init plan
-- (evaluated once per statement, as recommended for auth.uid() in policies).
alter table public.posts enable row level security;
create policy posts_read on public.posts for select
  using (published or author_id = (select app_private.current_account_id()));
create policy posts_write on public.posts for all
  using (author_id = (select app_private.current_account_id()));
alter table public.comments enable row level security;
create policy comments_read on public.comments for select using (true);
create policy comments_insert on public.comments for insert
  with check (author_id = (select app_private.current_account_id()));
create policy comments_write on public.comments for update
  using (author_id = (select app_private.current_account_id()));
create policy comments_delete on public.comments for delete
  using (author_id = (select app_private.current_account_id()));
analyze;
