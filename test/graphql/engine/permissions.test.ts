/** Privileges shape the schema: column SELECT/INSERT/UPDATE, table DELETE, function EXECUTE. */
import { afterAll, beforeAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setupEnv, type Env } from './harness.js';

let env: Env;
beforeAll(async () => {
  env = await setupEnv(`
    comment on schema public is '@graphql({"inflect_names": true, "introspection": true})';
    create table member (id serial primary key, name text, secret text);
    insert into member (name, secret) values ('ann', 's1');
    create function shout(t text) returns text stable language sql as $$ select upper(t) $$;
    revoke all on member from anon;
    revoke execute on function shout(text) from public, anon;
    grant select (id, name), insert (name), update (name) on member to anon;
    grant usage on sequence member_id_seq to anon;
  `);
});
afterAll(() => env.close());
beforeEach(() => env.client.query('begin; set local role anon'));
afterEach(() => env.client.query('rollback'));

const fieldsOf = async (type: string) => {
  const res = (await env.gql(`{ __type(name: "${type}") { fields { name } inputFields { name } } }`)) as {
    data: { __type: { fields: { name: string }[] | null; inputFields: { name: string }[] | null } | null };
  };
  const t = res.data.__type;
  return t ? (t.fields ?? t.inputFields ?? []).map((f) => f.name) : null;
};

describe('privileges', () => {
  it('columns without SELECT are not fields, and reading permitted ones works', async () => {
    expect(await fieldsOf('Member')).toEqual(['nodeId', 'id', 'name']);
    expect(await env.gql('{ memberCollection { edges { node { id name } } } }')).toEqual({
      data: { memberCollection: { edges: [{ node: { id: 1, name: 'ann' } }] } },
    });
    expect(await env.gql('{ memberCollection { edges { node { secret } } } }')).toEqual({
      data: null,
      errors: [{ message: "Unknown field 'secret' on type 'Member'" }],
    });
  });
  it('insert and update inputs follow column privileges; records return permitted columns', async () => {
    expect(await fieldsOf('MemberInsertInput')).toEqual(['name']);
    expect(await fieldsOf('MemberUpdateInput')).toEqual(['name']);
    expect(
      await env.gql(
        'mutation { insertIntoMemberCollection(objects: [{name: "bob"}]) { records { id name } } }',
      ),
    ).toEqual({ data: { insertIntoMemberCollection: { records: [{ id: 2, name: 'bob' }] } } });
    expect(
      await env.gql(
        'mutation { updateMemberCollection(set: {name: "ann2"}, filter: {id: {eq: 1}}) { records { name } } }',
      ),
    ).toEqual({ data: { updateMemberCollection: { records: [{ name: 'ann2' }] } } });
  });
  it('no DELETE privilege: no delete field; no EXECUTE: no function field', async () => {
    const m = (await env.gql('{ __type(name: "Mutation") { fields { name } } }')) as {
      data: { __type: { fields: { name: string }[] } };
    };
    expect(m.data.__type.fields.map((f) => f.name)).toEqual([
      'insertIntoMemberCollection',
      'updateMemberCollection',
    ]);
    expect(await env.gql('{ shout(t: "x") }')).toEqual({
      data: null,
      errors: [{ message: 'Unknown field "shout" on type Query' }],
    });
  });
  it('a table without SELECT disappears', async () => {
    await env.client.query('reset role; revoke select on member from anon; set local role anon');
    expect(await env.gql('{ memberCollection { edges { node { id } } } }')).toEqual({
      data: null,
      errors: [{ message: 'Unknown field "memberCollection" on type Query' }],
    });
  });
});
