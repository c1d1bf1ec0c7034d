/**
 * Plans that do not depend on the values of scalar variables, so that a document requested again
 * with other variable values skips compilation.
 *
 * The document is compiled once with a unique sentinel in place of every string and integer
 * variable. When each sentinel that was read reaches the SQL only as whole bound parameters (never
 * in the SQL text, never in an error), the compiled plan is a template: later requests with the
 * same variable *shape* (which variables are strings or integers; every other value as it is)
 * reuse it, putting their own values in those parameters. Anything else (a cursor, a nodeId, an
 * enum name, a length-checked string, a limit/offset/atMost number, an error) makes the document
 * fall back to per-value compilation.
 */
import { INT_SENTINEL_BASE, READS, SENTINEL_PREFIX } from '../compile/values.js';
import type { Plan, Request } from './plan.js';

type RunnablePlan = Extract<Plan, { kind: 'plan' }>;

export interface Template {
  plan: RunnablePlan;
  /** Per SQL item, per parameter: the variable it takes its value from (or undefined). */
  slots: (string | undefined)[][];
}

function kindOf(v: unknown): 'S' | 'I' | undefined {
  if (typeof v === 'string') return 'S';
  if (typeof v === 'number' && Number.isSafeInteger(v)) return 'I';
  return undefined;
}

/** The variables' shape: templatable values reduced to their kind, the rest kept whole. */
export function shapeKey(variables: Record<string, unknown> | null | undefined): string | undefined {
  if (!variables || typeof variables !== 'object' || Array.isArray(variables)) return undefined;
  const names = Object.keys(variables);
  if (!names.some((n) => kindOf(variables[n]))) return undefined;
  return JSON.stringify(names.sort().map((n) => [n, kindOf(variables[n]) ?? variables[n] ?? null]));
}

/**
 * Variables with sentinels in place of strings and integers, and the sentinel → name map; undefined
 * when a sentinel already occurs in the request (it could not be told apart).
 */
export function sentinelVariables(
  req: Request,
): { vars: Record<string, unknown>; names: Map<string, string> } | undefined {
  const variables = req.variables ?? {};
  const vars: Record<string, unknown> = {};
  const names = new Map<string, string>();
  let i = 0;
  for (const [n, v] of Object.entries(variables)) {
    const k = kindOf(v);
    i++;
    if (k === 'S') {
      const s = `${SENTINEL_PREFIX}${i}\u0001`;
      vars[n] = s;
      names.set(s, n);
    } else if (k === 'I') {
      const s = INT_SENTINEL_BASE + i;
      vars[n] = s;
      names.set(String(s), n);
    } else vars[n] = v;
  }
  const text = JSON.stringify([req.query, req.operationName ?? null, variables]);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the sentinels are made of U+0001 on purpose
  for (const s of names.keys()) if (text.includes(s.replace(/\u0001/g, '\\u0001'))) return undefined;
  return { vars, names };
}

/** The template of a plan compiled with sentinels, or undefined when values shaped the SQL. */
export function templateOf(plan: Plan, names: Map<string, string>): Template | undefined {
  if (plan.kind !== 'plan' || plan.errors.length || plan.items.some((i) => i.kind !== 'sql'))
    return undefined;
  const slots: (string | undefined)[][] = [];
  const used = new Set<string>();
  for (const item of plan.items) {
    if (item.kind !== 'sql') return undefined;
    if (
      item.compiled.sql.includes(SENTINEL_PREFIX) ||
      [...names.keys()].some((s) => item.compiled.sql.includes(s))
    )
      return undefined;
    const row: (string | undefined)[] = [];
    for (const p of item.compiled.params) {
      const name = p === null ? undefined : names.get(p);
      if (name === undefined && p !== null && [...names.keys()].some((s) => p.includes(s))) return undefined;
      if (name !== undefined) used.add(name);
      row.push(name);
    }
    slots.push(row);
  }
  // Every string variable the compilation read must have become a parameter (and nothing else).
  for (const name of plan.op.vars[READS] ?? [])
    if (names.has(String(plan.op.vars[name])) && !used.has(name)) return undefined;
  return { plan, slots };
}

/** The template's plan with this request's values in the sentinel parameters. */
export function fillTemplate(t: Template, req: Request): RunnablePlan | undefined {
  const vars = req.variables ?? {};
  const items = t.plan.items.map((item, i) => {
    if (item.kind !== 'sql') return item;
    const row = t.slots[i];
    if (row === undefined) throw new Error(`internal error: template has no slots for item ${i}`);
    const params = item.compiled.params.map((p, j) => {
      const name = row[j];
      return name === undefined ? p : String(vars[name]);
    });
    return { ...item, compiled: { sql: item.compiled.sql, params } };
  });
  return { ...t.plan, items, op: { ...t.plan.op, vars: { ...t.plan.op.vars, ...vars } } };
}
