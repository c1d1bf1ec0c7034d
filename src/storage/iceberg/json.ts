/**
 * JSON for the Iceberg catalog. Snapshot ids are 64-bit integers, which `JSON.parse` would round
 * (past 2^53): `parseJson` reads every integer outside the safe range as a BigInt, and
 * `stringifyJson` writes BigInts back as plain digits, so an id round-trips exactly through the
 * request, the stored metadata and the reply. Unpaired surrogates become U+FFFD (as elsewhere in
 * the Storage API) and NUL is refused; nesting is bounded, so hostile input cannot exhaust the stack.
 */
export type Json = null | boolean | number | bigint | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

const MAX_DEPTH = 128;
const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;

export class JsonSyntaxError extends Error {}

type WellFormed = string & { toWellFormed(): string };

export function parseJson(text: string): Json {
  let i = 0;
  const fail = (what: string): never => {
    throw new JsonSyntaxError(`${what} at position ${i}`);
  };
  const skip = () => {
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
      i++;
    }
  };
  const str = (): string => {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    if (i >= text.length) fail('Unterminated string');
    i++;
    let s: string;
    try {
      s = JSON.parse(text.slice(start, i)) as string;
    } catch {
      return fail('Invalid string');
    }
    if (s.includes('\u0000')) fail('NUL in a string');
    return (s as WellFormed).toWellFormed();
  };
  const value = (depth: number): Json => {
    if (depth > MAX_DEPTH) fail('Nesting too deep');
    skip();
    const c = text[i];
    if (c === '"') return str();
    if (c === '{') {
      i++;
      const obj: JsonObject = {};
      skip();
      if (text[i] === '}') {
        i++;
        return obj;
      }
      for (;;) {
        skip();
        if (text[i] !== '"') fail('Expected a property name');
        const key = str();
        skip();
        if (text[i] !== ':') fail("Expected ':'");
        i++;
        // defineProperty: a "__proto__" key is an ordinary property, never the prototype.
        Object.defineProperty(obj, key, {
          value: value(depth + 1),
          enumerable: true,
          writable: true,
          configurable: true,
        });
        skip();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return obj;
        }
        fail("Expected ',' or '}'");
      }
    }
    if (c === '[') {
      i++;
      const arr: Json[] = [];
      skip();
      if (text[i] === ']') {
        i++;
        return arr;
      }
      for (;;) {
        arr.push(value(depth + 1));
        skip();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return arr;
        }
        fail("Expected ',' or ']'");
      }
    }
    for (const [word, v] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return v;
      }
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (!m) return fail('Unexpected token');
    i += m[0].length;
    if (m[1] === undefined && m[2] === undefined) {
      const n = Number(m[0]);
      return Number.isSafeInteger(n) ? n : BigInt(m[0]);
    }
    return Number(m[0]);
  };
  const out = value(0);
  skip();
  if (i !== text.length) fail('Unexpected data after the JSON value');
  return out;
}

export function stringifyJson(v: Json | undefined): string {
  if (v === null || v === undefined) return 'null';
  switch (typeof v) {
    case 'bigint':
      return v.toString();
    case 'number':
      return Number.isFinite(v) ? JSON.stringify(v) : 'null';
    case 'string':
    case 'boolean':
      return JSON.stringify(v);
  }
  if (Array.isArray(v)) return `[${v.map((x) => stringifyJson(x)).join(',')}]`;
  const parts: string[] = [];
  for (const [k, x] of Object.entries(v)) {
    if (x !== undefined) parts.push(`${JSON.stringify(k)}:${stringifyJson(x)}`);
  }
  return `{${parts.join(',')}}`;
}

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A 64-bit integer id (number or BigInt), as a canonical decimal string for comparisons. */
export function idKey(v: unknown): string | undefined {
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number' && Number.isSafeInteger(v)) return String(v);
  return undefined;
}
