/**
 * Whether a policy reads rows of its own table other than the one it judges (policy-facts.ts
 * readsOtherRows): a subquery over the table itself does, the row's own columns do not. The texts
 * are as PostgreSQL 15 prints them with pg_get_expr under search_path pg_catalog.
 */
import { describe, expect, it } from 'vitest';
import { readsOtherRows } from '../../src/realtime/policy-facts.js';

const message = { schema: 'public', name: 'message' };
const user = { schema: 'public', name: 'user' };
const odd = { schema: 'My Sch', name: 'Odd"T' };

describe("a policy's reads of its own table", () => {
  it('no subquery: only the row', () => {
    expect(readsOtherRows("(org = ((auth.jwt() -> 'app_metadata'::text) ->> 'org_id'::text))", message)).toBe(
      false,
    );
  });

  it('a subquery over another table, with the row correlated in it: only the row', () => {
    expect(
      readsOtherRows('(room_id IN ( SELECT r.id\n   FROM public.room r\n  WHERE (r.id > 0)))', message),
    ).toBe(false);
    expect(
      readsOtherRows('(EXISTS ( SELECT 1\n   FROM public.room r\n  WHERE (r.id = "user".a)))', user),
    ).toBe(false);
    expect(
      readsOtherRows(
        '(EXISTS ( SELECT 1\n   FROM public.room r\n  WHERE (r.id = message.room_id)))',
        message,
      ),
    ).toBe(false);
  });

  it('a subquery over the table itself, however its name is quoted: other rows', () => {
    expect(
      readsOtherRows(
        '(EXISTS ( SELECT 1\n   FROM public.message m\n  WHERE (m.id = message.room_id)))',
        message,
      ),
    ).toBe(true);
    expect(
      readsOtherRows('(EXISTS ( SELECT 1\n   FROM public."user" u2\n  WHERE (u2.id = "user".a)))', user),
    ).toBe(true);
    expect(
      readsOtherRows('(EXISTS ( SELECT 1\n   FROM "My Sch"."Odd""T" o\n  WHERE (o.id = "Odd""T".a)))', odd),
    ).toBe(true);
    expect(readsOtherRows('(a IN ( SELECT m.id\n   FROM ONLY public.message m))', message)).toBe(true);
  });

  it('what cannot be read is a read (an unterminated literal; a temporary table)', () => {
    expect(readsOtherRows("(a = 'x)", message)).toBe(true);
    expect(
      readsOtherRows('(a IN ( SELECT r.id\n   FROM room r))', { schema: 'pg_temp_3', name: 'message' }),
    ).toBe(true);
  });
});
