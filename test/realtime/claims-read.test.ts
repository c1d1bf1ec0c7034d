/**
 * Which claims a policy reads, from pg_get_expr's text (src/realtime/claims-read.ts): the texts
 * here are as PostgreSQL 15 prints them under search_path pg_catalog.
 */
import { describe, expect, it } from 'vitest';
import { claimsRead, maskLiterals, runsQueryText } from '../../src/realtime/claims-read.js';

/** The paths read, dotted. */
const names = (expr: string) => {
  const r = claimsRead(expr);
  return r === 'all' ? 'all' : [...r].map((p) => (JSON.parse(p) as string[]).join('.')).sort();
};

describe('claims a policy reads', () => {
  it('reads the claims of auth.uid(), auth.role(), auth.email() and auth.jwt() members', () => {
    expect(names('(owner = auth.uid())')).toEqual(['sub']);
    expect(names("((auth.role() = 'authenticated'::text) AND (email = auth.email()))")).toEqual([
      'email',
      'role',
    ]);
    expect(names("(org = ((auth.jwt() -> 'app_metadata'::text) ->> 'org_id'::text))")).toEqual([
      'app_metadata.org_id',
    ]);
    expect(names("(x = ((auth.jwt() -> 'a'::text) -> 'b'::text))")).toEqual(['a.b']);
    // ->> ends the path (its value is text); -> with a number is no key.
    expect(names("(x = ((auth.jwt() ->> 'a'::text) || 'b'::text))")).toEqual(['a']);
    expect(names("(x = ((auth.jwt() -> 'arr'::text) -> 0))")).toEqual(['arr']);
    expect(names("(tenant = (auth.jwt() ->> 'tenant'::text))")).toEqual(['tenant']);
    expect(names("(name = (auth.jwt() ->> 'it''s'::text))")).toEqual(["it's"]);
    expect(names('true')).toEqual([]);
    expect(names("(body <> 'x'::text)")).toEqual([]);
  });

  it('reads request.jwt.claims members through current_setting', () => {
    expect(
      names("(owner = ((current_setting('request.jwt.claims'::text, true))::json ->> 'sub'::text))"),
    ).toEqual(['sub']);
    expect(names("(org = ((current_setting('request.jwt.claims'::text))::jsonb -> 'org'::text))")).toEqual([
      'org',
    ]);
    expect(
      names(
        "(org = (((current_setting('request.jwt.claims'::text, true))::jsonb -> 'app_metadata'::text) ->> 'org_id'::text))",
      ),
    ).toEqual(['app_metadata.org_id']);
    expect(names("(org = current_setting('request.jwt.claim.org'::text))")).toEqual(['org']);
    expect(names("(x = current_setting('app.tenant'::text))")).toEqual([]);
  });

  it('any other use reads every claim', () => {
    expect(names('(auth.jwt() @> \'{"a": 1}\'::jsonb)')).toBe('all');
    expect(names('(data = auth.jwt())')).toBe('all');
    expect(names("((auth.jwt() -> 'a'::text) IS NOT NULL)")).toEqual(['a']);
    expect(names("(x = current_setting('request.jwt.claims'::text, true))")).toBe('all');
    expect(names("(x = current_setting('request.jwt'::text, true))")).toBe('all');
    expect(names('(x = current_setting(name))')).toBe('all');
    // A function over the text before the member (upper() changes the keys it reads).
    expect(
      names("(owner = (upper(current_setting('request.jwt.claims'::text, true)))::json ->> 'SUB'::text)"),
    ).toBe('all');
    expect(names("(set_config('request.jwt.claims'::text, '{}'::text, true) IS NOT NULL)")).toBe('all');
    expect(names('(EXISTS ( SELECT 1 FROM pg_show_all_settings() s(name)))')).toBe('all');
    expect(names("(x = E'a\\\\'::text)")).toBe('all');
  });

  it('a built-in running a query given as text is seen (what its text reads is not)', () => {
    const viaXml =
      "(owner = ((xpath('/row/c/text()'::text, query_to_xml('select current_setting(''request.jwt.claims'') as c'::text, false, false, ''::text)))[1])::text)";
    expect(runsQueryText(viaXml)).toBe(true);
    expect(runsQueryText("(ts_stat('select v from t'::text) IS NOT NULL)")).toBe(true);
    expect(runsQueryText("(body = 'query_to_xml(x)'::text)")).toBe(false);
    expect(runsQueryText('(owner = auth.uid())')).toBe(false);
  });

  it('a call inside a constant or a quoted name is not a call', () => {
    expect(names("(body = 'auth.jwt() @> x'::text)")).toEqual([]);
    expect(names('("auth.uid()" = \'x\'::text)')).toEqual([]);
    expect(names("(body = 'current_setting(''request.jwt.claims'')'::text)")).toEqual([]);
    expect(maskLiterals("a = 'x''y' and \"q\"\"r\" = 'z'")).toEqual({
      code: "a = '#0' and \"#\" = '#1'",
      literals: ["x'y", 'z'],
    });
    expect(maskLiterals("a = 'unterminated")).toBeNull();
  });
});
