/**
 * Which JWT claims a row-level security policy reads, from its expression as pg_get_expr prints it
 * under `search_path = pg_catalog` (policy-facts.ts): every function outside pg_catalog is then
 * printed schema-qualified, every string constant as `'…'::type` with `''` for a quote.
 *
 * A claim is named by its path in the claims object (`["sub"]`, `["app_metadata", "org_id"]`).
 * Read as the claims they stand for — only when the function is the platform's own (policy-facts.ts
 * checks that from pg_depend before this is asked):
 * - `auth.uid()` → `sub`, `auth.role()` → `role`, `auth.email()` → `email`;
 * - `auth.jwt() -> 'k'` / `->> 'k'` → the claim `k`; `auth.jwt() -> 'k' ->> 'j'` → `k.j` (each
 *   `->` / `->>` with a constant key one step down; `->>` ends the path: its value is text);
 * - `(current_setting('request.jwt.claims'[, b]))::json[b]` followed by such steps, likewise;
 *   `current_setting('request.jwt.claim.k')` → `k` (the per-claim setting; Strata never sets it).
 * Any other use of the claims — `auth.jwt()` as a whole, another `request.jwt…` setting, a setting
 * whose name is not a constant, `set_config`, `pg_show_all_settings` — reads them all. Settings of
 * other names read no claim (a live query's transaction sets only the role and the claims).
 */

/** The claims an expression reads: their paths (claimPath), or every claim. */
export type ClaimsRead = Set<string> | 'all';

/** A claim's path as ClaimsRead holds it. */
export function claimPath(...keys: string[]): string {
  return JSON.stringify(keys);
}

/** Before a match: not part of a longer name or a qualified name. */
const BOUNDARY = '(?<![A-Za-z0-9_$."])';
/** A string constant after masking (its index into the literals). */
const LIT = '\'#(\\d+)\'::(?:text|character varying|"char"|name)';

const AUTH_CALL = new RegExp(`${BOUNDARY}auth\\.(uid|role|email|jwt)\\(\\)`, 'g');
/** One step down the claims: ` -> 'k'::text)` (the operator's parenthesis closing after it). */
const STEP = new RegExp(`^ (->>?) ${LIT}\\)`);
const SETTING_CALL = new RegExp(`${BOUNDARY}(?:pg_catalog\\.)?current_setting\\(`, 'g');
const SETTING_ARGS = new RegExp(`^${LIT}(?:, (?:true|false))?\\)`);
/** After `(current_setting('request.jwt.claims'…)`: the cast to json. */
const CLAIMS_CAST = /^\)::jsonb?/;
const OTHER_READERS = new RegExp(`${BOUNDARY}(?:pg_catalog\\.)?(?:set_config|pg_show_all_settings)\\(`);
/**
 * Built-in functions that run a query given as text (pg_depend does not see what it reads, and
 * the text is a constant this does not read).
 */
const QUERY_RUNNERS = new RegExp(
  `${BOUNDARY}(?:pg_catalog\\.)?(?:(?:query|cursor|table|schema|database)_to_xml\\w*|ts_stat|ts_rewrite)\\(`,
  'i',
);

/** Whether a policy expression runs a query given as text: it may read any table and any claim. */
export function runsQueryText(expr: string): boolean {
  const masked = maskLiterals(expr);
  return !masked || QUERY_RUNNERS.test(masked.code);
}

const CLAIM_OF: Record<string, string> = { uid: 'sub', role: 'role', email: 'email' };

/** The path the steps at the start of `code` go down (at least one step), else undefined. */
function pathAt(code: string, literals: string[]): string | undefined {
  const keys: string[] = [];
  let rest = code;
  for (let m = STEP.exec(rest); m; m = STEP.exec(rest)) {
    keys.push(literals[Number(m[2])] as string);
    rest = rest.slice(m[0].length);
    if (m[1] === '->>') break;
  }
  return keys.length ? claimPath(...keys) : undefined;
}

/**
 * The text with every string constant's content replaced by `#<index>` and every quoted name by
 * `"#"`, so that nothing inside a constant or a name is read as a call; null when the text holds
 * what this does not read safely (an escape-string constant, an unterminated quote).
 */
export function maskLiterals(text: string): { code: string; literals: string[] } | null {
  const literals: string[] = [];
  let code = '';
  let i = 0;
  while (i < text.length) {
    const ch = text[i] as string;
    if (ch === "'" || ch === '"') {
      // An E'…' constant may hide a quote behind a backslash.
      if (ch === "'" && /[Ee]$/.test(code) && !/[A-Za-z0-9_$][Ee]$/.test(code)) return null;
      let value = '';
      let j = i + 1;
      for (;;) {
        const end = text.indexOf(ch, j);
        if (end < 0) return null;
        value += text.slice(j, end);
        if (text[end + 1] === ch) {
          value += ch;
          j = end + 2;
          continue;
        }
        i = end + 1;
        break;
      }
      if (ch === "'") {
        code += `'#${literals.length}'`;
        literals.push(value);
      } else code += '"#"';
      continue;
    }
    code += ch;
    i++;
  }
  return { code, literals };
}

/** The claims that a policy expression (pg_get_expr under search_path pg_catalog) reads. */
export function claimsRead(expr: string): ClaimsRead {
  const masked = maskLiterals(expr);
  if (!masked) return 'all';
  const { code, literals } = masked;
  if (OTHER_READERS.test(code)) return 'all';
  const out = new Set<string>();
  for (const m of code.matchAll(AUTH_CALL)) {
    const fn = m[1] as string;
    if (fn !== 'jwt') {
      out.add(claimPath(CLAIM_OF[fn] as string));
      continue;
    }
    const path = pathAt(code.slice((m.index ?? 0) + m[0].length), literals);
    if (!path) return 'all';
    out.add(path);
  }
  for (const m of code.matchAll(SETTING_CALL)) {
    const at = m.index ?? 0;
    const after = code.slice(at + m[0].length);
    const args = SETTING_ARGS.exec(after);
    if (!args) return 'all';
    // Setting names are case-insensitive.
    const name = (literals[Number(args[1])] as string).toLowerCase();
    if (name.startsWith('request.jwt.claim.')) {
      out.add(claimPath(name.slice('request.jwt.claim.'.length)));
      continue;
    }
    if (!name.startsWith('request.jwt')) continue;
    if (name !== 'request.jwt.claims') return 'all';
    // `(current_setting(…))::json ->> 'k'`: the parenthesis before the call only groups it (no
    // function name before it, e.g. upper(…), could change what the member names).
    if (!/(?:^|[\s(,=<>!])\($/.test(code.slice(0, at))) return 'all';
    const rest = after.slice(args[0].length);
    const cast = CLAIMS_CAST.exec(rest);
    const path = cast ? pathAt(rest.slice(cast[0].length), literals) : undefined;
    if (!path) return 'all';
    out.add(path);
  }
  return out;
}

/** The union of what several expressions read. */
export function unionClaims(a: ClaimsRead, b: ClaimsRead): ClaimsRead {
  if (a === 'all' || b === 'all') return 'all';
  return new Set([...a, ...b]);
}
