/**
 * The conformance cases' steps the runner cannot compare: a `graphql.resolve(...)` call wrapped in
 * other SQL (`jsonb_path_query(graphql.resolve($$…$$), '$.data…')`), and plain SQL whose rows
 * pg_graphql's run printed (`select * from account` after mutations). Each is pg_graphql's own
 * output at the cases' commit, so this test replays every such case against the engine: the
 * wrapped call runs through `resolve`, its answer replaces the call as a jsonb literal, PostgreSQL
 * runs the wrapper, and the rows are compared as JSON values (cells as text for plain SQL).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { inTransaction } from '../../src/db/transaction-status.js';
import { installSchema, resolve } from '../../src/graphql/engine.js';
import { connect, createTestDatabase, type TestDatabase } from '../support/database.js';

interface Step {
  sql?: string;
  graphql?: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
  expected_rows?: string;
  unparsed_reason?: string;
  psql_meta?: string;
  line: number;
}

const casesDir = join(dirname(fileURLToPath(import.meta.url)), 'cases');
const read = (name: string) =>
  JSON.parse(readFileSync(join(casesDir, `${name}.json`), 'utf8')) as { steps: Step[] };
const fixtures = read('_fixtures').steps;

/** The runner's replacements for pg_graphql's own extension statements. */
function adapt(sql: string): string | undefined {
  const s = sql.replace(/^(\s*--[^\n]*\n)*\s*/, '');
  if (/^drop\s+extension\s+(if\s+exists\s+)?"?pg_graphql"?/i.test(s)) return undefined;
  if (/^create\s+extension\s+(if\s+not\s+exists\s+)?"?pg_graphql"?/i.test(s))
    return 'create schema if not exists graphql';
  if (/^(grant|revoke)\b[\s\S]*\bon\s+function\s+graphql\.resolve\b/i.test(s)) return undefined;
  return sql;
}

function literal(s: string, pos: number): { value: string; end: number } | undefined {
  const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(s.slice(pos))?.[0];
  if (tag) {
    const end = s.indexOf(tag, pos + tag.length);
    return end < 0 ? undefined : { value: s.slice(pos + tag.length, end), end: end + tag.length };
  }
  if (s[pos] !== "'") return undefined;
  let value = '';
  for (let i = pos + 1; i < s.length; i++) {
    if (s[i] !== "'") value += s[i];
    else if (s[i + 1] === "'") value += s[i++];
    else return { value, end: i + 1 };
  }
  return undefined;
}

/** `graphql.resolve(<literal>[, <literal>])` in `sql`: its span and arguments. */
function resolveCall(sql: string) {
  const m = /graphql\.resolve\s*\(\s*/i.exec(sql);
  if (!m) return undefined;
  let pos = m.index + m[0].length;
  const args: string[] = [];
  for (;;) {
    const lit = literal(sql, pos);
    if (!lit) return undefined;
    args.push(lit.value);
    pos = lit.end + (/^\s*::\s*(jsonb|json|text)/i.exec(sql.slice(lit.end))?.[0].length ?? 0);
    const sep = /^\s*,\s*/.exec(sql.slice(pos));
    if (sep) {
      pos += sep[0].length;
      continue;
    }
    const close = /^\s*\)/.exec(sql.slice(pos));
    if (!close || args[0] === undefined) return undefined;
    return {
      start: m.index,
      end: pos + close[0].length,
      query: args[0],
      variables: args[1] === undefined ? null : (JSON.parse(args[1]) as Record<string, unknown>),
    };
  }
}

/** The values of psql's aligned output (`+` continues a value on the next line). */
function printedValues(text: string): string[] {
  const lines = text.split('\n');
  const out: string[] = [];
  let cur: string[] = [];
  for (const l of lines.slice(lines.findIndex((x) => /^-+(\+-+)*\s*$/.test(x)) + 1)) {
    if (/^\(\d+ rows?\)$/.test(l)) break;
    const body = l.startsWith(' ') ? l.slice(1) : l;
    cur.push(body.replace(/\s*\+\s*$/, '').trimEnd());
    if (!/\+\s*$/.test(body)) {
      out.push(cur.join('\n'));
      cur = [];
    }
  }
  return out;
}

const asJson = (v: unknown) => {
  if (typeof v !== 'string') return JSON.stringify(v);
  try {
    return JSON.stringify(JSON.parse(v));
  } catch {
    return v;
  }
};

interface Check {
  line: number;
  expected: string[];
  actual: string[];
}

async function replay(client: pg.Client, steps: Step[]): Promise<Check[]> {
  const checks: Check[] = [];
  const guarded = async (sql: string) => {
    const tx = /^(begin|start|rollback|commit|end|savepoint|release|abort)\b/i.test(
      sql.replace(/^(\s*--[^\n]*\n)*\s*/, ''),
    );
    if (tx) return client.query(sql).catch(() => undefined);
    if (!inTransaction(client))
      return client
        .query({ text: sql, rowMode: 'array', types: { getTypeParser: () => (v: string) => v } })
        .catch(() => undefined);
    await client.query('savepoint wrapped_step');
    try {
      const r = await client.query({
        text: sql,
        rowMode: 'array',
        types: { getTypeParser: () => (v: string) => v },
      });
      await client.query('release savepoint wrapped_step');
      return r;
    } catch {
      await client.query('rollback to savepoint wrapped_step');
      return undefined;
    }
  };
  for (const s of steps) {
    if (s.graphql !== undefined) {
      await resolve(client, {
        query: s.graphql,
        variables: s.variables ?? null,
        operationName: s.operationName ?? null,
      });
      continue;
    }
    if (s.sql === undefined || s.psql_meta !== undefined) continue;
    const call = s.unparsed_reason !== undefined ? resolveCall(s.sql) : undefined;
    if (s.unparsed_reason !== undefined && !call) continue;
    if (call) {
      const answer = await resolve(client, {
        query: call.query,
        variables: call.variables,
        operationName: null,
      });
      const sql = `${s.sql.slice(0, call.start)}'${JSON.stringify(answer).replace(/'/g, "''")}'::jsonb${s.sql.slice(call.end)}`;
      const r = await guarded(sql);
      if (s.expected_rows !== undefined)
        checks.push({
          line: s.line,
          expected: printedValues(s.expected_rows).map(asJson),
          // psql prints booleans as t/f.
          actual: (r?.rows ?? []).map((row: unknown[]) =>
            row[0] === true ? 't' : row[0] === false ? 'f' : asJson(row[0]),
          ),
        });
      continue;
    }
    const sql = adapt(s.sql);
    if (sql === undefined) continue;
    const r = await guarded(sql);
    // graphql.encode is the suite's own helper; its rows say nothing about the engine.
    if (s.expected_rows !== undefined && !/graphql\.encode/.test(sql)) {
      const lines = s.expected_rows.split('\n');
      const expected: string[] = [];
      for (const l of lines.slice(lines.findIndex((x) => /^-+(\+-+)*\s*$/.test(x)) + 1)) {
        if (/^\(\d+ rows?\)$/.test(l)) break;
        expected.push(
          l
            .split('|')
            .map((x) => x.trim())
            .join(' | '),
        );
      }
      const actual = (r?.rows ?? []).map((row: unknown[]) =>
        row.map((v) => (v === null ? '' : v === true ? 't' : v === false ? 'f' : String(v))).join(' | '),
      );
      checks.push({ line: s.line, expected, actual });
    }
  }
  return checks;
}

const names = readdirSync(casesDir)
  .filter((f) => f.endsWith('.json') && !f.startsWith('_'))
  .map((f) => f.slice(0, -5))
  .filter((n) =>
    read(n).steps.some(
      (s) =>
        s.expected_rows !== undefined &&
        s.sql !== undefined &&
        (s.unparsed_reason === undefined ? !/graphql\.encode/.test(s.sql) : resolveCall(s.sql) !== undefined),
    ),
  )
  .sort();

const dbs: TestDatabase[] = [];
afterAll(async () => {
  for (const db of dbs) await db.drop();
});

describe('conformance steps the runner cannot compare (wrapped resolve calls, printed rows)', () => {
  it.each(names)('%s', async (name) => {
    const db = await createTestDatabase({ prefix: 'wrapped', bootstrap: false });
    dbs.push(db);
    const client = await connect(db.url);
    try {
      await client.query(`set timezone = 'PST8PDT'; set datestyle = 'Postgres, MDY'`);
      await installSchema(client);
      for (const s of fixtures) {
        const sql = s.sql === undefined ? undefined : adapt(s.sql);
        if (sql !== undefined) await client.query(sql);
      }
      const checks = await replay(client, read(name).steps);
      expect(checks.length).toBeGreaterThan(0);
      for (const c of checks)
        expect({ line: c.line, rows: c.actual }).toEqual({ line: c.line, rows: c.expected });
    } finally {
      await client.end();
    }
  });
});
