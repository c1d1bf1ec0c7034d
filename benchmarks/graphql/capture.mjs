// Turns what the proxy recorded during one Strata request into the floor's SQL for that document:
// the statement(s) Strata sent, minus its role prelude (begin / set local role / set_config of the
// claims / commit), with bound parameters inlined as literals, plus how Strata wraps the
// statement's JSON into the HTTP response ({"data":{"<field>": ...}} or otherwise) — found by
// running each candidate statement as the same principal and comparing canonical data.
import pg from 'pg';
import { dist } from './paths.mjs';
import { jsonEqual } from './util.mjs';

const LIT = String.raw`(?:\s?E?'(?:[^']|'')*')`;
const PRELUDE = new RegExp(String.raw`^\s*begin\s*;\s*set local role ("(?:[^"]|"")*"|\w+)\s*;\s*select set_config\('request\.jwt\.claims',\s*${LIT},\s*true\)\s*;?\s*`, 'i');
const TRAILER = /;\s*commit\s*;?\s*$/i;
// Strata's schema-version guard (select graphql.strata_assert_schema_version('N'::int)): part of its
// cache design, not of the request's work; kept out of the floor's SQL and listed in otherStatements.
const GUARD = /^\s*(select\s+graphql\.\w+\(\s*'?\d*'?(?:::int)?\s*\))\s*;\s*/i;
const CONTROL = /^\s*(begin|commit|rollback|set local role|select set_config\()/i;

/** Recorded round trips → candidate statements (strings), in order. */
export async function statementsOf(roundTrips) {
  const { inlineParams } = await import(dist('db/sql-text.js'));
  const out = [];
  for (const rt of roundTrips) {
    if (rt.kind === 'simple') {
      let text = rt.text;
      const m = PRELUDE.exec(text);
      if (m) text = text.slice(m[0].length);
      text = text.replace(TRAILER, '');
      const g = GUARD.exec(text);
      if (g) {
        out.push(g[1]);
        text = text.slice(g[0].length);
      }
      if (text.trim() && !CONTROL.test(text)) out.push(text.trim());
    } else {
      rt.parses.forEach((p, i) => {
        const bind = rt.binds[i] ?? rt.binds[rt.binds.length - 1];
        const values = (bind?.values ?? []).map((v) => (v && typeof v === 'object' ? null : v));
        const text = inlineParams(p.text, values);
        if (text.trim() && !CONTROL.test(text)) out.push(text.trim());
      });
    }
  }
  return out;
}

/**
 * Picks the statement whose result, wrapped, gives Strata's answer. Returns a floor entry
 * { query, sql, prefix, suffix, source: 'captured', otherStatements } or undefined.
 */
export async function floorEntryFromCapture({ q, roundTrips, strataJson, apiUrl, principal }) {
  const { rolePrelude } = await import(dist('db/with-role.js'));
  const candidates = await statementsOf(roundTrips);
  const want = q.canon('strata', strataJson.data);
  const client = new pg.Client({ connectionString: apiUrl, types: { getTypeParser: (oid, fmt) => (oid === 114 || oid === 3802 ? (v) => v : pg.types.getTypeParser(oid, fmt)) } });
  await client.connect();
  try {
    for (let i = candidates.length - 1; i >= 0; i--) {
      const sql = candidates[i];
      let value;
      try {
        const results = await client.query(`${rolePrelude(principal)}; ${sql}; commit`);
        const r = results[3];
        value = r.rows.length ? r.rows[0][r.fields[0].name] : null;
      } catch {
        await client.query('rollback').catch(() => {});
        continue;
      }
      const text = value === null ? 'null' : typeof value === 'string' ? value : JSON.stringify(value);
      for (const [prefix, suffix] of [[`{"data":{${JSON.stringify(q.strata.rootKey)}:`, '}}'], ['{"data":', '}'], ['', '']]) {
        let parsed;
        try {
          parsed = JSON.parse(prefix + text + suffix);
        } catch {
          continue;
        }
        if (parsed && typeof parsed === 'object' && 'data' in parsed && jsonEqual(q.canon('strata', parsed.data), want)) {
          const otherStatements = candidates.filter((_, j) => j !== i);
          return { query: q.strata.query, sql, prefix, suffix, source: 'captured', otherStatements, guard: otherStatements.filter((x) => GUARD.test(`${x};`)) };
        }
      }
    }
  } finally {
    await client.end().catch(() => {});
  }
  return undefined;
}

export function handwrittenEntry(q, json = false) {
  const sql = json ? q.floorSql.replaceAll('jsonb_', 'json_').replaceAll('::jsonb', '::json') : q.floorSql;
  return { query: q.strata.query, sql, prefix: `{"data":{${JSON.stringify(q.strata.rootKey)}:`, suffix: '}}', source: json ? 'hand-written (json_*)' : 'hand-written' };
}
