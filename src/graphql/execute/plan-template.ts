/**
 * Plans that do not depend on the values of string and integer variables, so that a document
 * requested again with other values of them skips building and transpiling.
 *
 * The first request of a document with such variables is planned for reuse: the builder reads
 * those variables as VarScalar (plan/values.ts), and a parameter that takes one as it is names
 * its variable (CompiledField.variables). When every such read became a parameter (nothing else
 * looked at the value: not a limit, a cursor, a nodeId, an enum name, a length-checked string)
 * and the plan has no error, it is a template: later requests with the same variable *shape*
 * (which variables are strings or integers; every other value as it is) reuse its SQL with their
 * own values in those parameters. Otherwise the document is planned per value.
 */
import type { TemplateReads } from '../plan/values.js';
import type { Plan, Request } from './plan.js';

type RunnablePlan = Extract<Plan, { kind: 'plan' }>;

export interface Template {
  plan: RunnablePlan;
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

/** What a build for reuse records: the request's string and integer variables, read as VarScalar. */
export function templateReads(req: Request): TemplateReads {
  const variables = req.variables ?? {};
  return { names: new Set(Object.keys(variables).filter((n) => kindOf(variables[n]))), reads: [] };
}

/**
 * Whether a build with `reads` may serve other values: no error, every top-level field a SQL
 * statement, and every read became a parameter.
 */
export function reusableBuild(
  fields: ReadonlyArray<{ kind: string }>,
  errors: readonly string[],
  reads: TemplateReads,
  sqlKind: string,
): boolean {
  return !errors.length && fields.every((f) => f.kind === sqlKind) && reads.reads.every((r) => r.used);
}

/** The template of a plan built with `reads`, or undefined when values shaped more than parameters. */
export function templateOf(plan: Plan, reads: TemplateReads): Template | undefined {
  if (plan.kind !== 'plan' || !reusableBuild(plan.items, plan.errors, reads, 'sql')) return undefined;
  return { plan };
}

/** The template's plan with this request's values in its variables' parameters. */
export function fillTemplate(t: Template, req: Request): RunnablePlan {
  const vars = req.variables ?? {};
  const items = t.plan.items.map((item) => {
    if (item.kind !== 'sql') return item;
    const { sql, params, variables } = item.compiled;
    const filled = params.map((p, j) => {
      const name = variables[j];
      return name === undefined ? p : String(vars[name]);
    });
    return { ...item, compiled: { sql, params: filled, variables } };
  });
  return { ...t.plan, items, op: { ...t.plan.op, vars: { ...t.plan.op.vars, ...vars } } };
}
