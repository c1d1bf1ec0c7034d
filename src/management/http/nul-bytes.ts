/**
 * NUL characters (U+0000) cannot be stored in PostgreSQL text, so a request that carries one in a
 * JSON string or key, a path or a query parameter is refused up front with a 400 naming the field
 * (instead of failing later, half-way through a write). The walk is iterative and keeps only a
 * parent link per value: the depth of a JSON body is bounded only by the body size limit.
 */
import { badRequest } from './errors.js';

interface Node {
  v: unknown;
  key: string | number | undefined;
  parent: Node | undefined;
}

function label(node: Node): string {
  const parts: Array<string | number> = [];
  for (let n: Node | undefined = node; n && n.key !== undefined; n = n.parent) parts.push(n.key);
  return parts.length === 0 ? 'value' : parts.reverse().join('.');
}

/** 400 `<where><field> must not contain the NUL character (\u0000)` for the first NUL found. */
export function assertNoNul(value: unknown, where: string): void {
  const stack: Node[] = [{ v: value, key: undefined, parent: undefined }];
  for (let node = stack.pop(); node; node = stack.pop()) {
    const v = node.v;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) throw nulError(where, label(node));
      continue;
    }
    if (typeof v !== 'object' || v === null || ArrayBuffer.isView(v)) continue;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], key: i, parent: node });
      continue;
    }
    for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
      if (k.includes('\u0000')) throw nulError(where, `${label(node)} key`);
      stack.push({ v: child, key: k, parent: node });
    }
  }
}

function nulError(where: string, field: string) {
  return badRequest(`${where}${field} must not contain the NUL character (\\u0000)`);
}
