// The benchmark operations, written once per API dialect (Strata speaks pg_graphql's schema with
// inflect_names on; PostGraphile 5 the Amber preset's), with a function that turns each engine's
// answer into one canonical form so the three servers can be checked for equal data, and a
// hand-written SQL version of each (pg_graphql-shaped JSON built in PostgreSQL) that the floor
// uses only when Strata's own compiled SQL could not be captured.
//
// Every request runs as account 7 (role `authenticated`, JWT sub = its user_id), so RLS filters:
// post 7 is account 7's unpublished post (visible to it only), posts whose id is a multiple of 7
// are hidden from everyone else.

export const NESTED_FIRST = Number(process.env.BENCH_NESTED_FIRST ?? 2);
export const BENCH_ACCOUNT = 7;
export const INSERT_POST_ID = 1;
/** A fixed comment of the bench account's (comment i is by account 1 + 7i mod 1000), on post 858. */
export const UPSERT_COMMENT_ID = 858;

const pgDateToMs = (v) => (typeof v === 'string' ? Date.parse(v) : v);
const connNodes = (c) => (c == null ? c : c.edges ? c.edges.map((e) => e.node) : c.nodes);

export const QUERIES = [
  {
    name: 'byKey',
    title: 'single row by key',
    strata: {
      query: 'query ByKey($id: Int!) { postsByPk(id: $id) { id title published authorId createdAt } }',
      variables: { id: 7 },
      rootKey: 'postsByPk',
    },
    postgraphile: {
      query:
        'query ByKey($id: Int!) { postByRowId(rowId: $id) { rowId title published authorId createdAt } }',
      variables: { id: 7 },
    },
    canon(engine, data) {
      const p = engine === 'postgraphile' ? data.postByRowId : data.postsByPk;
      if (!p) return p;
      return {
        id: p.id ?? p.rowId,
        title: p.title,
        published: p.published,
        authorId: p.authorId,
        createdAt: pgDateToMs(p.createdAt),
      };
    },
    // Post 7 is account 7's own unpublished post: visible only through RLS's "own" branch.
    rlsCheck: (c) =>
      c?.id === 7 && c.published === false ? null : 'post 7 (own, unpublished) should be visible',
    floorSql: `select (select jsonb_build_object('id', p.id, 'title', p.title, 'published', p.published, 'authorId', p.author_id, 'createdAt', p.created_at)
  from public.posts p where p.id = 7)::text as body`,
  },
  {
    name: 'list20',
    title: 'flat list of 20',
    strata: {
      query:
        'query List($first: Int!) { postsCollection(first: $first) { edges { node { id title published authorId } } } }',
      variables: { first: 20 },
      rootKey: 'postsCollection',
    },
    postgraphile: {
      query:
        'query List($first: Int!) { allPosts(first: $first, orderBy: PRIMARY_KEY_ASC) { edges { node { rowId title published authorId } } } }',
      variables: { first: 20 },
    },
    canon(engine, data) {
      const c = engine === 'postgraphile' ? data.allPosts : data.postsCollection;
      return connNodes(c).map((p) => ({
        id: p.id ?? p.rowId,
        title: p.title,
        published: p.published,
        authorId: p.authorId,
      }));
    },
    // Post 14 (account 14's, unpublished) must be filtered out; post 7 (own) kept.
    rlsCheck: (c) =>
      c.some((p) => p.id === 14)
        ? 'post 14 (unpublished, not own) should be hidden by RLS'
        : c.some((p) => p.id === 7)
          ? null
          : 'post 7 (own) should be listed',
    floorSql: `select jsonb_build_object('edges', coalesce(jsonb_agg(jsonb_build_object('node', jsonb_build_object(
    'id', p.id, 'title', p.title, 'published', p.published, 'authorId', p.author_id)) order by p.id), '[]'))::text as body
  from (select id, title, published, author_id from public.posts order by id limit 20) p`,
  },
  {
    name: 'nested',
    title: 'nested 3 levels',
    strata: {
      query: `query Nested($first: Int!) {
  accountsCollection(first: $first, orderBy: [{id: AscNullsLast}]) {
    pageInfo { hasNextPage endCursor }
    edges {
      cursor
      node {
        id
        name
        postsCollection(first: 3, orderBy: [{id: DescNullsLast}]) {
          edges { node { id title commentsCollection(first: 2, orderBy: [{id: AscNullsLast}]) { edges { node { id body } } } } }
        }
      }
    }
  }
}`,
      variables: { first: NESTED_FIRST },
      rootKey: 'accountsCollection',
    },
    postgraphile: {
      query: `query Nested($first: Int!) {
  allAccounts(first: $first, orderBy: PRIMARY_KEY_ASC) {
    pageInfo { hasNextPage endCursor }
    edges {
      cursor
      node {
        rowId
        name
        postsByAuthorId(first: 3, orderBy: PRIMARY_KEY_DESC) {
          edges { node { rowId title commentsByPostId(first: 2, orderBy: PRIMARY_KEY_ASC) { edges { node { rowId body } } } } }
        }
      }
    }
  }
}`,
      variables: { first: NESTED_FIRST },
    },
    canon(engine, data) {
      const pgl = engine === 'postgraphile';
      const c = pgl ? data.allAccounts : data.accountsCollection;
      return {
        hasNextPage: c.pageInfo.hasNextPage,
        hasEndCursor: c.pageInfo.endCursor != null,
        accounts: connNodes(c).map((a) => ({
          id: a.id ?? a.rowId,
          name: a.name,
          posts: connNodes(pgl ? a.postsByAuthorId : a.postsCollection).map((p) => ({
            id: p.id ?? p.rowId,
            title: p.title,
            comments: connNodes(pgl ? p.commentsByPostId : p.commentsCollection).map((x) => ({
              id: x.id ?? x.rowId,
              body: x.body,
            })),
          })),
        })),
      };
    },
    floorSql: `with a as (select id, name from public.accounts order by id limit ${NESTED_FIRST} + 1)
select jsonb_build_object(
  'pageInfo', jsonb_build_object(
    'hasNextPage', (select count(*) from a) > ${NESTED_FIRST},
    'endCursor', (select translate(encode(convert_to(jsonb_build_array(max(x.id))::text, 'utf8'), 'base64'), E'\\n', '')
                  from (select id from a order by id limit ${NESTED_FIRST}) x)),
  'edges', coalesce((
    select jsonb_agg(jsonb_build_object(
      'cursor', translate(encode(convert_to(jsonb_build_array(a.id)::text, 'utf8'), 'base64'), E'\\n', ''),
      'node', jsonb_build_object(
        'id', a.id,
        'name', a.name,
        'postsCollection', jsonb_build_object('edges', coalesce((
          select jsonb_agg(jsonb_build_object('node', jsonb_build_object(
            'id', p.id,
            'title', p.title,
            'commentsCollection', jsonb_build_object('edges', coalesce((
              select jsonb_agg(jsonb_build_object('node', jsonb_build_object('id', c.id, 'body', c.body)) order by c.id)
              from (select id, body from public.comments c where c.post_id = p.id order by id limit 2) c
            ), '[]'::jsonb))
          )) order by p.id desc)
          from (select id, title from public.posts p where p.author_id = a.id order by id desc limit 3) p
        ), '[]'::jsonb))
      )) order by a.id)
    from (select id, name from a order by id limit ${NESTED_FIRST}) a
  ), '[]'::jsonb))::text as body`,
  },
  {
    name: 'page',
    title: 'filtered + ordered page',
    strata: {
      query: `query Page($author: Int!, $first: Int!) {
  postsCollection(filter: {authorId: {eq: $author}}, orderBy: [{createdAt: DescNullsLast}], first: $first) {
    pageInfo { hasNextPage endCursor }
    edges { node { id title published createdAt } }
  }
}`,
      variables: { author: 14, first: 5 },
      rootKey: 'postsCollection',
    },
    postgraphile: {
      query: `query Page($author: Int!, $first: Int!) {
  allPosts(condition: {authorId: $author}, orderBy: [CREATED_AT_DESC], first: $first) {
    pageInfo { hasNextPage endCursor }
    edges { node { rowId title published createdAt } }
  }
}`,
      variables: { author: 14, first: 5 },
    },
    canon(engine, data) {
      const c = engine === 'postgraphile' ? data.allPosts : data.postsCollection;
      return {
        hasNextPage: c.pageInfo.hasNextPage,
        hasEndCursor: c.pageInfo.endCursor != null,
        posts: connNodes(c).map((p) => ({
          id: p.id ?? p.rowId,
          title: p.title,
          published: p.published,
          createdAt: pgDateToMs(p.createdAt),
        })),
      };
    },
    floorSql: `with p as (select id, title, published, created_at from public.posts where author_id = 14 order by created_at desc, id limit 6)
select jsonb_build_object(
  'pageInfo', jsonb_build_object(
    'hasNextPage', (select count(*) from p) > 5,
    'endCursor', (select translate(encode(convert_to(jsonb_build_array(x.created_at, x.id)::text, 'utf8'), 'base64'), E'\\n', '')
                  from (select * from p order by created_at desc, id limit 5) x order by x.created_at asc, x.id desc limit 1)),
  'edges', coalesce((select jsonb_agg(jsonb_build_object('node', jsonb_build_object(
      'id', x.id, 'title', x.title, 'published', x.published, 'createdAt', x.created_at)) order by x.created_at desc, x.id)
    from (select * from p order by created_at desc, id limit 5) x), '[]'::jsonb))::text as body`,
  },
  {
    // A larger answer (issue: "the gap widens with larger results"): 10 accounts x 5 posts x 5
    // comments, each comment with its author (to-one): 4 levels, 560 objects.
    name: 'large',
    title: 'nested 4 levels, 560 objects',
    strata: {
      query: `query Large($first: Int!) {
  accountsCollection(first: $first, orderBy: [{id: AscNullsLast}]) {
    edges {
      node {
        id
        name
        postsCollection(first: 5, orderBy: [{id: DescNullsLast}]) {
          edges { node { id title commentsCollection(first: 5, orderBy: [{id: AscNullsLast}]) { edges { node { id body author { id name } } } } } }
        }
      }
    }
  }
}`,
      variables: { first: 10 },
      rootKey: 'accountsCollection',
    },
    postgraphile: {
      query: `query Large($first: Int!) {
  allAccounts(first: $first, orderBy: PRIMARY_KEY_ASC) {
    edges {
      node {
        rowId
        name
        postsByAuthorId(first: 5, orderBy: PRIMARY_KEY_DESC) {
          edges { node { rowId title commentsByPostId(first: 5, orderBy: PRIMARY_KEY_ASC) { edges { node { rowId body accountByAuthorId { rowId name } } } } } }
        }
      }
    }
  }
}`,
      variables: { first: 10 },
    },
    canon(engine, data) {
      const pgl = engine === 'postgraphile';
      const c = pgl ? data.allAccounts : data.accountsCollection;
      return connNodes(c).map((a) => ({
        id: a.id ?? a.rowId,
        name: a.name,
        posts: connNodes(pgl ? a.postsByAuthorId : a.postsCollection).map((p) => ({
          id: p.id ?? p.rowId,
          title: p.title,
          comments: connNodes(pgl ? p.commentsByPostId : p.commentsCollection).map((x) => {
            const au = pgl ? x.accountByAuthorId : x.author;
            return { id: x.id ?? x.rowId, body: x.body, author: { id: au.id ?? au.rowId, name: au.name } };
          }),
        })),
      }));
    },
    floorSql: `select jsonb_build_object('edges', coalesce((
  select jsonb_agg(jsonb_build_object('node', jsonb_build_object(
    'id', a.id,
    'name', a.name,
    'postsCollection', jsonb_build_object('edges', coalesce((
      select jsonb_agg(jsonb_build_object('node', jsonb_build_object(
        'id', p.id,
        'title', p.title,
        'commentsCollection', jsonb_build_object('edges', coalesce((
          select jsonb_agg(jsonb_build_object('node', jsonb_build_object('id', c.id, 'body', c.body,
            'author', (select jsonb_build_object('id', u.id, 'name', u.name) from public.accounts u where u.id = c.author_id))) order by c.id)
          from (select id, body, author_id from public.comments c where c.post_id = p.id order by id limit 5) c
        ), '[]'::jsonb))
      )) order by p.id desc)
      from (select id, title from public.posts p where p.author_id = a.id order by id desc limit 5) p
    ), '[]'::jsonb))
  )) order by a.id)
  from (select id, name from public.accounts order by id limit 10) a
), '[]'::jsonb))::text as body`,
  },
  {
    name: 'insert',
    title: 'insert mutation',
    mutation: true,
    strata: {
      query: `mutation Insert($postId: Int!, $body: String!) {
  insertIntoCommentsCollection(objects: [{postId: $postId, authorId: ${BENCH_ACCOUNT}, body: $body}]) {
    affectedCount
    records { id postId authorId body }
  }
}`,
      variables: { postId: INSERT_POST_ID, body: 'bench comment' },
      rootKey: 'insertIntoCommentsCollection',
    },
    postgraphile: {
      query: `mutation Insert($postId: Int!, $body: String!) {
  createComment(input: {comment: {postId: $postId, authorId: ${BENCH_ACCOUNT}, body: $body}}) {
    comment { rowId postId authorId body }
  }
}`,
      variables: { postId: INSERT_POST_ID, body: 'bench comment' },
    },
    canon(engine, data) {
      const r =
        engine === 'postgraphile'
          ? data.createComment?.comment
          : data.insertIntoCommentsCollection?.records?.[0];
      if (!r) return r;
      return { newId: (r.id ?? r.rowId) > 50000, postId: r.postId, authorId: r.authorId, body: r.body };
    },
    floorSql: `with ins as (insert into public.comments(post_id, author_id, body) values (${INSERT_POST_ID}, ${BENCH_ACCOUNT}, 'bench comment')
  returning id, post_id, author_id, body)
select jsonb_build_object('affectedCount', (select count(*) from ins), 'records', coalesce((select jsonb_agg(jsonb_build_object(
  'id', id, 'postId', post_id, 'authorId', author_id, 'body', body)) from ins), '[]'::jsonb))::text as body`,
  },
  // Strata extensions (schema.sql turns them on for `public`). PostGraphile 5's core has neither an
  // upsert nor filters through relationships (plugins do), so these two run Strata and the floor
  // only, and the floor always runs the hand-written SQL below, never Strata's captured statement.
  {
    // One existing comment of account 7's (858: on post 858) updated on conflict, one new comment
    // inserted (its id from the identity): both paths of ON CONFLICT in one statement. Every
    // request updates row 858, so under load the requests also wait for its row lock, for every
    // engine alike.
    name: 'upsert',
    title: 'upsert mutation (one update, one insert)',
    mutation: true,
    handwrittenFloor: true,
    strata: {
      query: `mutation Upsert($id: Int!, $postId: Int!, $body: String!) {
  insertIntoCommentsCollection(
    objects: [{id: $id, postId: $postId, authorId: ${BENCH_ACCOUNT}, body: $body}, {postId: $postId, authorId: ${BENCH_ACCOUNT}, body: $body}]
    onConflict: {constraint: comments_pkey, updateColumns: [body]}
  ) {
    affectedCount
    records { id postId authorId body }
  }
}`,
      variables: { id: UPSERT_COMMENT_ID, postId: UPSERT_COMMENT_ID, body: 'bench upsert' },
      rootKey: 'insertIntoCommentsCollection',
    },
    canon(engine, data) {
      const r = data.insertIntoCommentsCollection;
      if (!r) return r;
      return {
        affectedCount: r.affectedCount,
        records: r.records
          .map((x) => ({
            id: x.id > 50000 ? 'new' : x.id,
            postId: x.postId,
            authorId: x.authorId,
            body: x.body,
          }))
          .sort((a, b) => String(a.id).localeCompare(String(b.id))),
      };
    },
    floorSql: `with ins as (insert into public.comments as c (id, post_id, author_id, body)
  values (${UPSERT_COMMENT_ID}, ${UPSERT_COMMENT_ID}, ${BENCH_ACCOUNT}, 'bench upsert'), (default, ${UPSERT_COMMENT_ID}, ${BENCH_ACCOUNT}, 'bench upsert')
  on conflict (id) do update set body = excluded.body
  returning id, post_id, author_id, body)
select jsonb_build_object('affectedCount', (select count(*) from ins), 'records', coalesce((select jsonb_agg(jsonb_build_object(
  'id', id, 'postId', post_id, 'authorId', author_id, 'body', body)) from ins), '[]'::jsonb))::text as body`,
  },
  {
    // Posts filtered through a to-one relationship (their author's name) and a to-many one (some
    // comment by account 7): account 858's posts 858, 1858, …, 9858 all have account 7's comments;
    // RLS hides 4858 (unpublished, not the caller's).
    name: 'relatedFilter',
    title: 'filter through a to-one and a to-many relationship',
    handwrittenFloor: true,
    strata: {
      query: `query Related($name: String!, $commenter: Int!, $first: Int!) {
  postsCollection(
    first: $first
    orderBy: [{id: AscNullsLast}]
    filter: {author: {name: {eq: $name}}, commentsCollection: {some: {authorId: {eq: $commenter}}}}
  ) {
    edges { node { id title authorId } }
  }
}`,
      variables: { name: 'User 858', commenter: BENCH_ACCOUNT, first: 5 },
      rootKey: 'postsCollection',
    },
    canon(engine, data) {
      return connNodes(data.postsCollection).map((p) => ({ id: p.id, title: p.title, authorId: p.authorId }));
    },
    rlsCheck: (c) =>
      c.some((p) => p.id === 4858)
        ? 'post 4858 (unpublished, not own) should be hidden by RLS'
        : c.map((p) => p.id).join() === '858,1858,2858,3858,5858'
          ? null
          : 'expected posts 858, 1858, 2858, 3858, 5858',
    floorSql: `select jsonb_build_object('edges', coalesce(jsonb_agg(jsonb_build_object('node', jsonb_build_object(
    'id', p.id, 'title', p.title, 'authorId', p.author_id)) order by p.id), '[]'))::text as body
  from (select p.id, p.title, p.author_id from public.posts p join public.accounts a on a.id = p.author_id
    where a.name = 'User 858'
      and exists (select 1 from public.comments c where c.post_id = p.id and c.author_id = ${BENCH_ACCOUNT})
    order by p.id limit 5) p`,
  },
];

export function selectQueries(names) {
  if (!names) return QUERIES;
  const want = names.split(',').map((s) => s.trim());
  return QUERIES.filter((q) => want.includes(q.name));
}

/** The request body an engine gets for a query (undefined: the engine has no such operation). */
export function requestBody(engine, q) {
  const d = engine === 'postgraphile' ? q.postgraphile : q.strata;
  if (!d) return undefined;
  return JSON.stringify({ query: d.query, variables: d.variables });
}
