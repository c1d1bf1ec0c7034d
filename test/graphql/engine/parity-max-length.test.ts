/**
 * pg_graphql parity: a String input's length limit comes from the column's type modifier
 * (load_sql_context.sql: `max_characters` = atttypmod - 4, for varchar(n), char(n) and arrays of
 * them); a column without one (text, varchar, a domain: its modifier is the domain's) has no
 * limit. The catalog reads the modifier, not format_type's text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupEnv, type Env } from './harness.js';

let env: Env;

beforeAll(async () => {
  env = await setupEnv(`
    comment on schema public is '@graphql({"inflect_names": true})';
    create domain short_name as varchar(2);
    create table memo (
      id int primary key,
      vc varchar(3),
      ch char(2),
      tags varchar(3)[],
      free varchar,
      dom short_name
    );
  `);
});
afterAll(async () => {
  await env.close();
});

const insert = (fields: string) =>
  env.gql(`mutation { insertIntoMemoCollection(objects: [{id: 1, ${fields}}]) { affectedCount } }`);
const message = (r: unknown) => (r as { errors?: { message: string }[] }).errors?.[0]?.message;

describe('length limits from the type modifier', () => {
  it('varchar(n) and char(n) refuse longer strings with pg_graphql message', async () => {
    expect(message(await insert('vc: "abcd"'))).toBe(
      'Invalid input for String type. Maximum character length 3',
    );
    expect(message(await insert('ch: "abc"'))).toBe(
      'Invalid input for String type. Maximum character length 2',
    );
  });

  it('an array of varchar(n) limits each element', async () => {
    expect(message(await insert('tags: ["ab", "abcd"]'))).toBe(
      'Invalid input for String type. Maximum character length 3',
    );
  });

  it('varchar without a length, or a domain over varchar(n), has no limit in the engine', async () => {
    for (const fields of [`vc: "abc", ch: "ab", tags: ["abc"], free: "${'x'.repeat(500)}"`, 'dom: "ab"']) {
      await env.client.query('begin');
      try {
        expect(await insert(fields)).toEqual({ data: { insertIntoMemoCollection: { affectedCount: 1 } } });
      } finally {
        await env.client.query('rollback');
      }
    }
  });
});
