/** The golden tests' fixed schema and documents: one snapshot pair (name.json, name.sql) per document. */

export const GOLDEN_SCHEMA = `
comment on schema public is '@graphql({"inflect_names": true})';
create type genre as enum ('fiction', 'poetry');
create table author (
  id serial primary key,
  name text not null,
  born date
);
comment on table author is '@graphql({"totalCount": {"enabled": true}})';
create table book (
  id serial primary key,
  author_id int not null references author(id),
  title varchar(80) not null,
  genre genre not null default 'fiction',
  pages int
);
comment on table book is '@graphql({"totalCount": {"enabled": true}, "aggregate": {"enabled": true}})';
create table review (
  book_id int not null references book(id),
  n int not null,
  stars int not null,
  primary key (book_id, n)
);
create function author_books_over(min_pages int) returns setof book stable language sql
  as $$ select * from book where pages > min_pages $$;
create function double_it(x int) returns int immutable language sql as $$ select x * 2 $$;
insert into author (name, born) values ('Ann', '1970-01-01'), ('Bo', null);
insert into book (author_id, title, genre, pages) values
  (1, 'First', 'fiction', 120), (1, 'Second', 'poetry', 60), (2, 'Third', 'fiction', 300);
insert into review (book_id, n, stars) values (1, 1, 5), (1, 2, 3), (3, 1, 4);
`;

export interface GoldenDocument {
  name: string;
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
}

/** A cursor as the engine writes it: base64 of the sort key values' JSON array. */
const cursor = (...values: unknown[]) => Buffer.from(JSON.stringify(values)).toString('base64');

export const DOCUMENTS: GoldenDocument[] = [
  {
    name: 'list-filter-order-first',
    query: `{ bookCollection(filter: {pages: {gte: 50}, title: {like: "%i%"}}, orderBy: [{pages: DescNullsLast}], first: 2) {
      edges { node { id title pages } } } }`,
  },
  {
    name: 'nested-to-one',
    query: '{ bookCollection { edges { node { title author { name born } } } } }',
  },
  {
    name: 'nested-to-many',
    query: `{ authorCollection(orderBy: [{name: AscNullsFirst}]) { edges { node { name
      bookCollection(filter: {genre: {eq: fiction}}) { edges { node { title reviewCollection { edges { node { stars } } } } } } } } } }`,
  },
  {
    name: 'connection-cursor-forward',
    query: `query Page($after: Cursor) { bookCollection(first: 1, after: $after) {
      edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`,
    variables: { after: cursor(1) },
  },
  {
    name: 'connection-cursor-backward',
    query: `{ bookCollection(last: 2, before: "${cursor(3)}") { edges { cursor node { id } } pageInfo { hasPreviousPage } } }`,
  },
  {
    name: 'aggregate-total-count',
    query: `{ bookCollection(filter: {genre: {eq: fiction}}) { totalCount
      aggregate { count sum { pages } avg { pages } min { title } max { pages } } } }`,
  },
  {
    name: 'by-pk-and-node',
    query: '{ bookByPk(id: 2) { nodeId title } reviewByPk(bookId: 1, n: 2) { stars } }',
  },
  {
    name: 'node',
    query: `{ node(nodeId: "${Buffer.from('["public", "author", 1]').toString('base64')}") { nodeId ... on Author { name } } }`,
  },
  {
    name: 'insert',
    query: `mutation Add($t: String!) { insertIntoBookCollection(objects: [{authorId: 2, title: $t, pages: 10}, {authorId: 1, title: "Lit", genre: poetry}]) {
      affectedCount records { id title genre author { name } } } }`,
    variables: { t: 'New' },
  },
  {
    name: 'update',
    query: `mutation { updateBookCollection(set: {pages: 99}, filter: {id: {eq: 1}}, atMost: 1) {
      affectedCount records { id pages } } }`,
  },
  {
    name: 'delete',
    query: `mutation { deleteFromReviewCollection(filter: {stars: {lt: 4}}, atMost: 5) { affectedCount records { bookId n } } }`,
  },
  {
    name: 'function-calls',
    query: `{ doubleIt(x: 21) authorBooksOver(minPages: 100, first: 5) { edges { node { title } } } }`,
  },
  {
    name: 'fragments-variables',
    query: `query Books($genre: Genre!, $n: Int = 2, $withAuthor: Boolean!) {
      bookCollection(filter: {genre: {eq: $genre}}, first: $n) { ...Page }
    }
    fragment Page on BookConnection { edges { node { ...BookFields author @include(if: $withAuthor) { name } } } }
    fragment BookFields on Book { id title }`,
    variables: { genre: 'fiction', withAuthor: true },
    operationName: 'Books',
  },
];
