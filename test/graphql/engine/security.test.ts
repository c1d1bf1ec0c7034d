/** SQL injection through every filter operator, orderBy and cursors; RLS on writes. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupEnv, type Env } from './harness.js';

let env: Env;
beforeAll(async () => {
  env = await setupEnv();
});
afterAll(() => env.close());

const PAYLOADS = [
  `'; drop table account; --`,
  `1' or '1'='1`,
  `") or true --`,
  `\\'; delete from account; --`,
  `$1; drop table blog`,
];

async function tablesIntact() {
  const { rows } = await env.client.query(
    'select (select count(*) from account)::int as a, (select count(*) from blog)::int as b',
  );
  expect(rows[0]).toEqual({ a: 3, b: 3 });
}

describe('SQL injection', () => {
  it('string operators bind their values', async () => {
    for (const p of PAYLOADS) {
      for (const op of [
        'eq',
        'neq',
        'lt',
        'lte',
        'gt',
        'gte',
        'like',
        'ilike',
        'startsWith',
        'regex',
        'iregex',
      ]) {
        const res = await env.gql(
          'query Q($v: String) { accountCollection(filter: {email: {' +
            op +
            ': $v}}) { edges { node { id } } } }',
          { v: p },
        );
        if (res.errors) expect(JSON.stringify(res.errors)).not.toMatch(/syntax error/);
      }
      const inRes = await env.gql(
        'query Q($v: [String!]) { accountCollection(filter: {email: {in: $v}}) { edges { node { id } } } }',
        { v: [p, 'a@x.com'] },
      );
      expect(inRes).toEqual({ data: { accountCollection: { edges: [{ node: { id: 1 } }] } } });
      const listRes = await env.gql(
        'query Q($v: [String!]) { accountCollection(filter: {tags: {contains: $v}}) { edges { node { id } } } }',
        { v: [p] },
      );
      expect(listRes).toEqual({ data: { accountCollection: { edges: [] } } });
    }
    await tablesIntact();
  });
  it('typed operators reject injected text with a type error, not a syntax error', async () => {
    for (const p of PAYLOADS) {
      for (const [col, op] of [
        ['born', 'eq'],
        ['extId', 'eq'],
        ['balance', 'gt'],
        ['big', 'lt'],
        ['createdAt', 'gte'],
        ['wakes', 'lte'],
      ]) {
        const res = await env.gql(
          `query Q($v: Opaque) { accountCollection(filter: {${col}: {${op}: $v}}) { edges { node { id } } } }`,
          { v: p },
        );
        expect(res.data ?? null).toBeNull();
        expect(JSON.stringify(res.errors)).toMatch(/invalid input syntax|Invalid input|out of range/);
      }
    }
    await tablesIntact();
  });
  it('orderBy keys, aliases and cursors cannot inject', async () => {
    expect(
      (
        await env.gql(
          `{ accountCollection(orderBy: [{id: "DescNullsLast; drop table account"}]) { edges { node { id } } } }`,
        )
      ).errors,
    ).toBeDefined();
    expect(
      (
        await env.gql(
          `{ accountCollection(orderBy: [{\\"id; drop table account\\": AscNullsLast}]) { edges { node { id } } } }`,
        )
      ).errors,
    ).toBeDefined();
    for (const p of PAYLOADS) {
      const cursor = Buffer.from(JSON.stringify([p])).toString('base64');
      const res = await env.gql(
        'query Q($c: Cursor) { accountCollection(after: $c) { edges { node { id } } } }',
        { c: cursor },
      );
      expect(JSON.stringify(res)).not.toMatch(/syntax error/);
      const res2 = await env.gql(
        'query Q($c: Cursor) { accountCollection(orderBy: [{email: AscNullsLast}], after: $c) { edges { node { id } } } }',
        { c: cursor },
      );
      expect(res2).toHaveProperty('data.accountCollection.edges');
    }
    const nodeId = Buffer.from(`["public", "account", "1; drop table account"]`).toString('base64');
    expect(JSON.stringify(await env.gql(`{ node(nodeId: "${nodeId}") { nodeId } }`))).not.toMatch(
      /syntax error/,
    );
    await tablesIntact();
  });
  it('mutation values are bound too', async () => {
    await env.client.query('begin');
    try {
      const res = await env.gql(
        'mutation M($e: String) { insertIntoAccountCollection(objects: [{email: $e}]) { records { email } } }',
        { e: PAYLOADS[0] },
      );
      expect(res).toEqual({ data: { insertIntoAccountCollection: { records: [{ email: PAYLOADS[0] }] } } });
    } finally {
      await env.client.query('rollback');
    }
    await tablesIntact();
  });
});

describe('row level security on writes', () => {
  it('an update blocked by RLS affects 0 rows; an insert rejected by a policy returns the Postgres error', async () => {
    await env.client.query('begin');
    try {
      await env.client.query(`
        create table note (id int primary key, owner text not null, body text);
        insert into note values (1, 'alice', 'a1'), (2, 'bob', 'b1');
        alter table note enable row level security;
        create policy sel on note for select using (true);
        create policy upd on note for update using (owner = 'alice');
        create policy ins on note for insert with check (owner = 'alice');
        grant select, insert, update on note to authenticated;
        set local role authenticated;`);
      expect(
        await env.gql(
          'mutation { updateNoteCollection(set: {body: "x"}, filter: {id: {eq: 2}}) { affectedCount } }',
        ),
      ).toEqual({ data: { updateNoteCollection: { affectedCount: 0 } } });
      expect(
        await env.gql(
          'mutation { updateNoteCollection(set: {body: "x"}, filter: {id: {eq: 1}}) { affectedCount } }',
        ),
      ).toEqual({ data: { updateNoteCollection: { affectedCount: 1 } } });
      const denied = await env.gql(
        'mutation { insertIntoNoteCollection(objects: [{id: 3, owner: "bob"}]) { affectedCount } }',
      );
      expect(denied.data).toBeNull();
      expect((denied.errors as { message: string }[])[0]!.message).toMatch(
        /^new row (for relation "note" )?violates row-level security policy for table "note"$/,
      );
      expect(await env.gql('{ noteCollection { edges { node { id body } } } }')).toEqual({
        data: {
          noteCollection: { edges: [{ node: { id: 1, body: 'x' } }, { node: { id: 2, body: 'b1' } }] },
        },
      });
    } finally {
      await env.client.query('rollback');
    }
  });
});
