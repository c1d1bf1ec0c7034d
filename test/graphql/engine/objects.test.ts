/** Relationships both ways, ByPk, node/nodeId, computed fields, views, enums, scalars, naming, directives, introspection. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupEnv, type Env } from './harness.js';
import { buildGraphQLSchema } from '../../../src/graphql/engine.js';
import { printSchema } from 'graphql';

let env: Env;
beforeAll(async () => {
  env = await setupEnv();
});
afterAll(() => env.close());

const nodeId = (...parts: unknown[]) =>
  Buffer.from(JSON.stringify(parts).replace(/,/g, ', ')).toString('base64');

describe('objects', () => {
  it('resolves relationships in both directions, one-to-one included', async () => {
    const res = await env.gql(
      `{ blogCollection(filter: {id: {eq: 1}}) { edges { node { name owner { email profile { bio } blogCollection { edges { node { id } } } } postCollection { edges { node { title } } } } } } }`,
    );
    expect(res).toEqual({
      data: {
        blogCollection: {
          edges: [
            {
              node: {
                name: 'alpha',
                owner: {
                  email: 'a@x.com',
                  profile: { bio: 'hello' },
                  blogCollection: { edges: [{ node: { id: 1 } }, { node: { id: 2 } }] },
                },
                postCollection: { edges: [{ node: { title: 'p1' } }, { node: { title: 'p2' } }] },
              },
            },
          ],
        },
      },
    });
  });
  it('ByPk and node(nodeId:)', async () => {
    expect(await env.gql('{ accountByPk(id: 2) { email nodeId } }')).toEqual({
      data: { accountByPk: { email: 'b@x.com', nodeId: nodeId('public', 'account', 2) } },
    });
    expect(await env.gql('{ accountByPk(id: 99) { email } }')).toEqual({ data: { accountByPk: null } });
    const res = await env.gql(
      `{ node(nodeId: "${nodeId('public', 'blog', 3)}") { nodeId ... on Blog { name } ... on Account { email } } }`,
    );
    expect(res).toEqual({ data: { node: { nodeId: nodeId('public', 'blog', 3), name: 'gamma' } } });
    expect(
      await env.gql(
        `{ accountCollection(filter: {nodeId: {eq: "${nodeId('public', 'account', 3)}"}}) { edges { node { id } } } }`,
      ),
    ).toEqual({ data: { accountCollection: { edges: [{ node: { id: 3 } }] } } });
    expect(await env.gql('{ node(nodeId: "") { nodeId } }')).toEqual({
      data: null,
      errors: [{ message: 'Invalid value passed to nodeId argument. Error 4' }],
    });
  });
  it('computed fields (leading underscore stripped)', async () => {
    expect(await env.gql('{ accountByPk(id: 1) { display blogCount } }')).toEqual({
      data: { accountByPk: { display: 'a@x.com!', blogCount: '2' } },
    });
  });
  it('views with a directive primary key', async () => {
    expect(await env.gql('{ adminAccountCollection { edges { node { id email nodeId } } } }')).toEqual({
      data: {
        adminAccountCollection: {
          edges: [{ node: { id: 1, email: 'a@x.com', nodeId: nodeId('public', 'admin_account', 1) } }],
        },
      },
    });
  });
  it('serializes scalars like pg_graphql', async () => {
    const res = await env.gql(
      '{ accountByPk(id: 1) { score balance big born wakes createdAt extId meta tags isAdmin } }',
    );
    expect(res).toEqual({
      data: {
        accountByPk: {
          score: 1.5,
          balance: '10.50',
          big: '9007199254740993',
          born: '2000-01-01',
          wakes: '07:00:00',
          createdAt: '2024-01-01T00:00:00',
          extId: '11111111-1111-1111-1111-111111111111',
          meta: '{"k": 1}',
          tags: ['red', 'blue'],
          isAdmin: true,
        },
      },
    });
  });
  it('aliases, fragments, @skip/@include and __typename', async () => {
    const res = await env.gql(
      `query { a: accountByPk(id: 1) { ...F __typename x: email @include(if: true) y: id @skip(if: true) } } fragment F on Account { id }`,
    );
    expect(res).toEqual({ data: { a: { id: 1, __typename: 'Account', x: 'a@x.com' } } });
  });
  it('reports unknown fields', async () => {
    expect(await env.gql('{ nope { id } }')).toEqual({
      data: null,
      errors: [{ message: 'Unknown field "nope" on type Query' }],
    });
    expect(await env.gql('{ accountCollection { edges { node { nope } } } }')).toEqual({
      data: null,
      errors: [{ message: "Unknown field 'nope' on type 'Account'" }],
    });
  });
});

describe('naming and directives', () => {
  it('uses SQL names without inflection, and honours name overrides', async () => {
    await env.client.query('begin');
    try {
      await env.client.query(`create schema raw; comment on schema raw is '@graphql({"introspection": true})'; set local search_path = raw;
        create table raw.account_holder (id int primary key, full_name text); insert into raw.account_holder values (1, 'Ann');
        create table raw.thing (id int primary key, label text); comment on table raw.thing is '@graphql({"name": "Widget"})';
        comment on column raw.thing.label is '@graphql({"name": "title"})'; insert into raw.thing values (5, 'w')`);
      expect(await env.gql('{ account_holderCollection { edges { node { full_name } } } }')).toEqual({
        data: { account_holderCollection: { edges: [{ node: { full_name: 'Ann' } }] } },
      });
      expect(await env.gql('{ widgetCollection { edges { node { __typename title } } } }')).toEqual({
        data: { widgetCollection: { edges: [{ node: { __typename: 'Widget', title: 'w' } }] } },
      });
    } finally {
      await env.client.query('rollback');
    }
  });
  it('introspection is opt-in per schema', async () => {
    expect(await env.gql('{ __type(name: "Account") { name kind } }')).toEqual({
      data: { __type: { name: 'Account', kind: 'OBJECT' } },
    });
    await env.client.query('begin');
    try {
      await env.client.query(`comment on schema public is '@graphql({"inflect_names": true})'`);
      expect(await env.gql('{ __schema { types { name } } }')).toEqual({
        data: null,
        errors: [{ message: 'Unknown field "__schema" on type Query' }],
      });
    } finally {
      await env.client.query('rollback');
    }
  });
  it('enum types, mappings and the reflected SDL', async () => {
    const res = await env.gql('{ __type(name: "PostStatus") { enumValues { name } } }');
    expect(res).toEqual({ data: { __type: { enumValues: [{ name: 'DRAFT' }, { name: 'PUBLISHED' }] } } });
    const sdl = printSchema(await buildGraphQLSchema(env.client));
    expect(sdl).toContain('type Account implements Node');
    expect(sdl).toContain('accountCollection(');
    expect(sdl).toContain('insertIntoPostCollection(objects: [PostInsertInput!]!): PostInsertResponse');
  });
  it('comment changes are visible on the next request', async () => {
    await env.client.query(`comment on column account.email is '@graphql({"name": "mail"})'`);
    try {
      expect(await env.gql('{ accountByPk(id: 1) { mail } }')).toEqual({
        data: { accountByPk: { mail: 'a@x.com' } },
      });
    } finally {
      await env.client.query('comment on column account.email is null');
    }
    expect(await env.gql('{ accountByPk(id: 1) { email } }')).toEqual({
      data: { accountByPk: { email: 'a@x.com' } },
    });
  });
});
