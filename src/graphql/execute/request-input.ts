/**
 * What a request's variables must satisfy before anything else looks at them.
 *
 * - pg_graphql receives `variables` as `jsonb`, and PostgreSQL cannot make jsonb of a JSON text
 *   holding `\u0000` anywhere (key or value, used or not): the call fails with its error
 *   "unsupported Unicode escape sequence" before pg_graphql runs. Strata answers the same message
 *   in pg_graphql's shape for an SQL error (`data: null`).
 * - Values nested more than MAX_VARIABLES_NESTING levels (arrays and objects) are refused, so that
 *   no later walk over them (filters, input objects, JSON text) can exhaust the stack.
 * Both checks walk the value iteratively.
 */
import { MAX_DOCUMENT_NESTING } from './parse-document.js';

/** Deepest nesting of arrays/objects in `variables` (the same bound as a document's). */
export const MAX_VARIABLES_NESTING = MAX_DOCUMENT_NESTING;

export function variablesError(variables: unknown): Record<string, unknown> | undefined {
  if (variables === null || typeof variables !== 'object') {
    return typeof variables === 'string' && variables.includes('\u0000')
      ? { data: null, errors: [{ message: 'unsupported Unicode escape sequence' }] }
      : undefined;
  }
  const stack: [unknown, number][] = [[variables, 1]];
  let tooDeep = false;
  for (let top = stack.pop(); top; top = stack.pop()) {
    const [v, depth] = top;
    if (typeof v === 'string') {
      if (v.includes('\u0000'))
        return { data: null, errors: [{ message: 'unsupported Unicode escape sequence' }] };
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (depth > MAX_VARIABLES_NESTING) {
      // Keep looking for a NUL: PostgreSQL would refuse that first (while reading the JSON).
      tooDeep = true;
      continue;
    }
    if (Array.isArray(v)) for (const x of v) stack.push([x, depth + 1]);
    else
      for (const [k, x] of Object.entries(v)) {
        if (k.includes('\u0000'))
          return { data: null, errors: [{ message: 'unsupported Unicode escape sequence' }] };
        stack.push([x, depth + 1]);
      }
  }
  return tooDeep
    ? { errors: [{ message: `Variables are nested more than ${MAX_VARIABLES_NESTING} levels deep` }] }
    : undefined;
}
