/** Turns a plan plus its statements' results into the response document. */
import type { GraphQLSchema } from 'graphql';
import { isDatabaseUnavailable } from '../../db/connection-errors.js';
import { NulInTextError } from '../../db/sql-text.js';
import { runIntrospectionField } from './introspection.js';
import type { Plan } from './plan.js';

type RunnablePlan = Extract<Plan, { kind: 'plan' }>;

export function sqlItems(plan: RunnablePlan) {
  return plan.items.filter(
    (i): i is Extract<RunnablePlan['items'][number], { kind: 'sql' }> => i.kind === 'sql',
  );
}

/** Marks a SQL item's value in the data object built by respondWith (its JSON text, unparsed). */
class RawJson {
  constructor(readonly text: string) {}
}

/** The response document, each SQL item's value given by `sqlValue(i)` (the i-th SQL item). */
async function respondWith(
  plan: RunnablePlan,
  sqlValue: (i: number) => unknown,
  schema: () => GraphQLSchema,
): Promise<{ data: Record<string, unknown> | null; errors?: { message: string }[] }> {
  const data: Record<string, unknown> = {};
  const errors = plan.errors.map((message) => ({ message }));
  let i = 0;
  for (const item of plan.items) {
    if (item.kind === 'sql') data[item.alias] = sqlValue(i++);
    else if (item.kind === 'value') data[item.alias] = item.value;
    else if (item.kind === 'introspect') {
      try {
        data[item.alias] = await runIntrospectionField(schema(), plan.op, item.node, plan.op.vars);
      } catch (e) {
        errors.push({ message: (e as Error).message });
      }
    }
  }
  const ok = plan.items.some((x) => x.kind !== 'error');
  const out: { data: Record<string, unknown> | null; errors?: { message: string }[] } = {
    data: ok && Object.keys(data).length ? data : errors.length ? null : data,
  };
  if (errors.length) out.errors = errors;
  return out;
}

/** `results[i]` is the JSON of the i-th SQL item. */
export async function respond(
  plan: RunnablePlan,
  results: unknown[],
  schema: () => GraphQLSchema,
): Promise<Record<string, unknown>> {
  return respondWith(plan, (i) => results[i] ?? null, schema);
}

/**
 * The response's JSON text, `texts[i]` being the i-th SQL item's JSON text as PostgreSQL wrote it
 * (json-text.ts): the value of `respond(...)`, without parsing the statements' results or
 * stringifying them again.
 */
export async function respondText(
  plan: RunnablePlan,
  texts: string[],
  schema: () => GraphQLSchema,
): Promise<string> {
  const out = await respondWith(plan, (i) => new RawJson(texts[i] ?? 'null'), schema);
  const errors = out.errors ? `,"errors":${JSON.stringify(out.errors)}` : '';
  if (out.data === null) return `{"data":null${errors}}`;
  let body = '';
  for (const key of Object.keys(out.data)) {
    const value = out.data[key];
    const text = value instanceof RawJson ? value.text : JSON.stringify(value);
    // As JSON.stringify: a property whose value has no JSON (undefined) is left out.
    if (text === undefined) continue;
    body += `${body ? ',' : ''}${JSON.stringify(key)}:${text}`;
  }
  return `{"data":{${body}}${errors}}`;
}

/** PostgreSQL's error for the first statement parameter it could not take as text, if any. */
export function textParamsError(
  items: ReadonlyArray<{ compiled: { params: readonly (string | null)[] } }>,
): NulInTextError | undefined {
  for (const it of items)
    for (const p of it.compiled.params) if (p?.includes('\u0000')) return new NulInTextError();
  return undefined;
}

/**
 * A statement's error as a GraphQL result (status 200). A database that cannot be reached is not
 * the request's fault: it is rethrown, and the HTTP layer answers 503 (http/core.ts transientFailure).
 */
export function sqlErrorResponse(e: unknown): Record<string, unknown> {
  if (isDatabaseUnavailable(e)) throw e;
  return { data: null, errors: [{ message: (e as Error).message }] };
}
