// Turns what the proxy recorded during one Strata request into the floor's SQL for that document:
// the statement(s) Strata sent, minus its role prelude (begin / set local role / set_config of the
// claims / commit), with bound parameters inlined as literals, plus how Strata wraps the
// statement's JSON into the HTTP response ({"data":{"<field>": ...}} or otherwise) — found by
// running each candidate statement as the same principal and comparing canonical data.
import pg from 'pg';
import { dist } from './paths.mjs';
import { jsonEqual } from './util.mjs';

const LIT = String.raw`(?:\s?E?'(?:[^']|'')*')`;
// Either db/with-role.ts form: `set local role` + a claims select, or one select setting both
// (rolePreludeStatement, prepared: expanded by expandPrelude first), which may also evaluate the
// schema-version guard (group 2).
const PRELUDE = new RegExp(
  String.raw`^\s*begin\s*;\s*(?:set local role ("(?:[^"]|"")*"|\w+)\s*;\s*select set_config\('request\.jwt\.claims',\s*${LIT},\s*true\)|select set_config\('role',\s*${LIT},\s*true\),\s*set_config\('request\.jwt\.claims',\s*${LIT},\s*true\)(?:,\s*([^;]+))?)\s*;?\s*`,
  'i',
);
// `begin; execute <prelude>(<args>)`: Strata's prepared prelude.
const PRELUDE_EXECUTE = /^\s*begin\s*;\s*execute\s+(\w+)\s*\(((?:[^')]|'(?:[^']|'')*')*)\)\s*;\s*/i;
const TRAILER = /;\s*commit\s*;?\s*$/i;
// Strata's schema-version guard (select graphql.strata_assert_schema_version('N'::int)): part of its
// cache design, not of the request's work; kept out of the floor's SQL and listed in otherStatements.
const GUARD =
  /^\s*(select\s+(?:graphql\.\w+\(\s*'?\d*'?(?:::int)?\s*\)|case\s+when\s+pg_sequence_last_value\([^;]*?\bend))\s*;\s*/i;
const CONTROL = /^\s*(begin|commit|rollback|set local role|select set_config\()/i;

// Strata's prepared-statement form: `prepare <name> as <sql>; ...; begin; ...; execute <name>('lit', ...); commit`.
const PRELUDE_START = /(?:^|;\s*)(?=begin\s*;\s*(?:set local role\b|select set_config\('role'|execute\s))/i;
const PREPARE = /^\s*prepare\s+(\w+)\s+as\s+([\s\S]*?)\s*;?\s*$/i;
const EXECUTE = /^\s*execute\s+(\w+)\s*(?:\(([\s\S]*)\))?\s*$/i;

/** `prepare` statements sent ahead of the transaction: name → SQL (with $n placeholders). */
function preparedIn(text, into) {
  const m = PRELUDE_START.exec(text);
  const head = m ? text.slice(0, m.index) : /^\s*prepare\s/i.test(text) ? text : '';
  for (const seg of head.split(/;\s*(?=prepare\s+\w+\s+as\s|deallocate\s)/i)) {
    const p = PREPARE.exec(seg);
    if (p) into.set(p[1], p[2]);
  }
  return m ? text.slice(m.index).replace(/^;\s*/, '') : head ? '' : text;
}

/** The literal arguments of `execute name('a', E'b', NULL, ...)`, as SQL literal texts. */
function executeArgs(list) {
  const out = [];
  let i = 0;
  while (i < list.length) {
    while (list[i] === ' ' || list[i] === ',') i++;
    if (i >= list.length) break;
    const start = i;
    if (/^null/i.test(list.slice(i, i + 4))) i += 4;
    else {
      if (list[i] === 'E' || list[i] === 'e') i++;
      i++; // opening quote
      const backslash = list[start] === 'E' || list[start] === 'e';
      for (; i < list.length; i++) {
        if (backslash && list[i] === '\\') {
          i++;
          continue;
        }
        if (list[i] === "'") {
          if (list[i + 1] === "'") {
            i++;
            continue;
          }
          i++;
          break;
        }
      }
    }
    out.push(list.slice(start, i).trim());
  }
  return out;
}

/** `begin; execute <prelude>(args); ...` → `begin; <the prelude's select, args inlined>; ...`. */
function expandPrelude(text, prepared) {
  const m = PRELUDE_EXECUTE.exec(text);
  if (!m || !prepared.has(m[1]) || !/^\s*select set_config\('role'/i.test(prepared.get(m[1]))) return text;
  const args = executeArgs(m[2]);
  const select = prepared.get(m[1]).replace(/\$(\d+)(?:::int)?/g, (whole, n) => args[Number(n) - 1] ?? whole);
  return `begin; ${select}; ${text.slice(m[0].length)}`;
}

/**
 * Recorded round trips → candidate statements, in order: { sql } with values inlined, plus
 * { prepared: { text, args } } when Strata ran it as `execute <name>(<args>)` of a prepared statement.
 */
export async function statementsOf(roundTrips, preparingMessages = []) {
  const { inlineParams } = await import(dist('db/sql-text.js'));
  const prepared = new Map();
  for (const text of preparingMessages) preparedIn(text, prepared);
  const out = [];
  for (const rt of roundTrips) {
    if (rt.kind === 'simple') {
      let text = expandPrelude(preparedIn(rt.text, prepared), prepared);
      const m = PRELUDE.exec(text);
      if (m) text = text.slice(m[0].length);
      if (m?.[2]) out.push({ sql: `select ${m[2]}` });
      text = text.replace(TRAILER, '');
      const g = GUARD.exec(text);
      if (g) {
        out.push({ sql: g[1] });
        text = text.slice(g[0].length);
      }
      const ex = EXECUTE.exec(text);
      let prep;
      if (ex && prepared.has(ex[1])) {
        const args = executeArgs(ex[2] ?? '');
        prep = { text: prepared.get(ex[1]), args };
        text = prep.text.replace(/\$(\d+)/g, (whole, n) => args[Number(n) - 1] ?? whole);
      }
      if (text.trim() && !CONTROL.test(text)) out.push({ sql: text.trim(), prepared: prep });
    } else {
      rt.parses.forEach((p, i) => {
        const bind = rt.binds[i] ?? rt.binds[rt.binds.length - 1];
        const values = (bind?.values ?? []).map((v) => (v && typeof v === 'object' ? null : v));
        const text = inlineParams(p.text, values);
        if (text.trim() && !CONTROL.test(text)) out.push({ sql: text.trim() });
      });
    }
  }
  return out;
}

/**
 * Picks the statement whose result, wrapped, gives Strata's answer. Returns a floor entry
 * { query, sql, prefix, suffix, source: 'captured', otherStatements } or undefined.
 */
export async function floorEntryFromCapture({
  q,
  roundTrips,
  preparingMessages,
  strataJson,
  apiUrl,
  principal,
}) {
  const { rolePrelude } = await import(dist('db/with-role.js'));
  const all = await statementsOf(roundTrips, preparingMessages);
  // One candidate per SQL text; prefer the prepared form (Strata's steady state) when seen.
  const bySql = new Map();
  for (const c of all) if (!bySql.has(c.sql) || c.prepared) bySql.set(c.sql, c);
  const cands = [...bySql.values()];
  const candidates = cands.map((c) => c.sql);
  const want = q.canon('strata', strataJson.data);
  const client = new pg.Client({
    connectionString: apiUrl,
    types: {
      getTypeParser: (oid, fmt) =>
        oid === 114 || oid === 3802 ? (v) => v : pg.types.getTypeParser(oid, fmt),
    },
  });
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
      for (const [prefix, suffix] of [
        [`{"data":{${JSON.stringify(q.strata.rootKey)}:`, '}}'],
        ['{"data":', '}'],
        ['', ''],
      ]) {
        let parsed;
        try {
          parsed = JSON.parse(prefix + text + suffix);
        } catch {
          continue;
        }
        let same = false;
        try {
          same =
            parsed &&
            typeof parsed === 'object' &&
            'data' in parsed &&
            jsonEqual(q.canon('strata', parsed.data), want);
        } catch {}
        if (same) {
          const otherStatements = candidates.filter((_, j) => j !== i);
          return {
            query: q.strata.query,
            sql,
            prepared: cands[i].prepared,
            prefix,
            suffix,
            source: cands[i].prepared ? 'captured (prepared)' : 'captured',
            otherStatements,
            guard: otherStatements.filter((x) => GUARD.test(`${x};`)),
          };
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
  return {
    query: q.strata.query,
    sql,
    prefix: `{"data":{${JSON.stringify(q.strata.rootKey)}:`,
    suffix: '}}',
    source: json ? 'hand-written (json_*)' : 'hand-written',
  };
}
