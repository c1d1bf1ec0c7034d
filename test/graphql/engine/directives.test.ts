/** Comment directives: max_rows, foreign_keys on views, relationship names, descriptions, bad directives. */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ids, setupEnv, type Env } from './harness.js';

let env: Env;
beforeAll(async () => {
  env = await setupEnv();
});
afterAll(() => env.close());
beforeEach(() => env.client.query('begin'));
afterEach(() => env.client.query('rollback'));

describe('comment directives', () => {
  it('max_rows caps page sizes per schema and per table', async () => {
    await env.client.query(
      `comment on schema public is '@graphql({"inflect_names": true, "introspection": true, "max_rows": 2})'`,
    );
    expect(
      ids(await env.gql('{ accountCollection(first: 10) { edges { node { id } } } }'), 'accountCollection'),
    ).toEqual([1, 2]);
    await env.client.query(`comment on table blog is '@graphql({"max_rows": 1})'`);
    expect(ids(await env.gql('{ blogCollection { edges { node { id } } } }'), 'blogCollection')).toEqual([1]);
  });
  it('foreign_keys on a view create relationships; local_name/foreign_name rename them', async () => {
    await env.client.query(`
      create view blog_view as select id, owner_id, name from blog;
      comment on view blog_view is '@graphql({"primary_key_columns": ["id"], "foreign_keys": [{"local_name": "viewBlogs", "local_columns": ["owner_id"], "foreign_name": "writer", "foreign_schema": "public", "foreign_table": "account", "foreign_columns": ["id"]}]})';
      comment on constraint post_blog_id_fkey on post is '@graphql({"foreign_name": "parentBlog", "local_name": "entries"})'`);
    expect(
      await env.gql(
        '{ blogViewCollection(first: 1) { edges { node { name writer { email viewBlogs { edges { node { id } } } } } } } }',
      ),
    ).toEqual({
      data: {
        blogViewCollection: {
          edges: [
            {
              node: {
                name: 'alpha',
                writer: {
                  email: 'a@x.com',
                  viewBlogs: { edges: [{ node: { id: 1 } }, { node: { id: 2 } }] },
                },
              },
            },
          ],
        },
      },
    });
    expect(
      await env.gql('{ postByPk(id: 3) { parentBlog { name entries { edges { node { title } } } } } }'),
    ).toEqual({
      data: { postByPk: { parentBlog: { name: 'gamma', entries: { edges: [{ node: { title: 'p3' } }] } } } },
    });
  });
  it('descriptions appear in introspection', async () => {
    await env.client.query(
      `comment on table blog is '@graphql({"description": "A blog"})'; comment on column blog.name is '@graphql({"description": "Its title"})'`,
    );
    const res = (await env.gql('{ __type(name: "Blog") { description fields { name description } } }')) as {
      data: { __type: { description: string; fields: { name: string; description: string | null }[] } };
    };
    expect(res.data.__type.description).toBe('A blog');
    expect(res.data.__type.fields.find((f) => f.name === 'name')!.description).toBe('Its title');
  });
  it('an invalid directive fails the schema load with pg_graphql wording', async () => {
    await env.client.query(`comment on schema public is '@graphql({"inflect_names": true, "max_rows": -1})'`);
    expect(await env.gql('{ accountCollection { edges { node { id } } } }')).toEqual({
      errors: [
        {
          message:
            'Error while loading schema, check comment directives. invalid value: integer `-1`, expected u64',
        },
      ],
    });
  });
});
