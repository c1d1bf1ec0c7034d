/**
 * The 400 message for a request that failed its route schema, worded as the reference API words
 * it (class-validator's messages: "name must be a string", "property x should not exist", ...).
 * Ajv reports every error (schemas.ts); the one named is the first the reference API checks:
 * unknown keys of an object before its fields, fields in the order the schema lists them, array
 * items in order, and for one field: presence, type, length, pattern, allowed values.
 */
import type { ErrorObject } from 'ajv';
import type { FastifyRequest } from 'fastify';
import type { KeywordMessages } from './schemas.js';

const KEYWORD_ORDER = ['required', 'type', 'minLength', 'maxLength', 'pattern', 'enum'];

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  boolean: 'a boolean value',
  integer: 'an integer number',
  number: 'a number',
  object: 'an object',
  array: 'an array',
};

const ROOT_TYPE_MESSAGES: Record<string, string> = {
  object: 'Request body must be a JSON object',
  array: 'Request body must be a JSON array',
};

type Schema = {
  properties?: Record<string, Schema>;
  then?: Schema;
  items?: Schema;
  messages?: KeywordMessages;
};

function segmentsOf(error: ErrorObject): string[] {
  const path = error.instancePath === '' ? [] : error.instancePath.slice(1).split('/');
  const segments = path.map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (error.keyword === 'required') segments.push(String(error.params.missingProperty));
  return segments;
}

/** Where the error sits in check order: one number per path segment, then the keyword's rank. */
function positionOf(error: ErrorObject, root: Schema | undefined): number[] {
  const position: number[] = [];
  let schema = root;
  for (const segment of segmentsOf(error)) {
    const properties = schema?.properties ?? schema?.then?.properties;
    if (properties) {
      position.push(Object.keys(properties).indexOf(segment));
      schema = properties[segment];
    } else {
      position.push(Number(segment));
      schema = schema?.items;
    }
  }
  // Unknown keys of an object come before its fields.
  if (error.keyword === 'additionalProperties') position.push(-1);
  const rank = KEYWORD_ORDER.indexOf(error.keyword);
  position.push(rank === -1 ? KEYWORD_ORDER.length : rank);
  return position;
}

function compare(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return (a[i] ?? 0) - (b[i] ?? 0);
  return a.length - b.length;
}

/** `name`, or `0.name` for a field of an array item (how the reference API labels them). */
function labelOf(segments: string[]): string {
  const last = segments.length - 1;
  const before = segments[last - 1];
  return before !== undefined && /^\d+$/.test(before)
    ? `${before}.${segments[last]}`
    : (segments[last] ?? '');
}

function messageOf(error: ErrorObject, where: 'body' | 'text'): string {
  const segments = segmentsOf(error);
  const field = labelOf(segments);
  const parent = error.parentSchema as Schema | undefined;
  // A missing field's message is set on the field's own schema.
  const owner =
    error.keyword === 'required' ? parent?.properties?.[String(error.params.missingProperty)] : parent;
  const override = owner?.messages?.[error.keyword];
  if (override) return override.replace('{field}', field);
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties': {
      const prefix = segments.length ? `${segments.join('.')}.` : '';
      return `${prefix}property ${String(p.additionalProperty)} should not exist`;
    }
    case 'required':
      return `${field} is required`;
    case 'type': {
      const type = String(p.type).split(',')[0] ?? '';
      if (segments.length === 0 && where === 'body')
        return ROOT_TYPE_MESSAGES[type] ?? `Request body must be ${TYPE_NAMES[type] ?? type}`;
      const inObject = !/^\d+$/.test(segments[segments.length - 1] ?? '');
      if (error.data === null && inObject) return `${field} is required`;
      return `${field} must be ${TYPE_NAMES[type] ?? type}`;
    }
    case 'minLength':
      return p.limit === 1
        ? `${field} should not be empty`
        : `${field} must be longer than or equal to ${String(p.limit)} characters`;
    case 'maxLength':
      return `${field} must be shorter than or equal to ${String(p.limit)} characters`;
    case 'pattern':
      return `${field} must match pattern "${String(p.pattern)}"`;
    case 'enum': {
      const values = (p.allowedValues as unknown[]).filter((v) => v !== null);
      return `${field} must be one of the following values: ${values.join(', ')}`;
    }
    default:
      return `${field || 'value'} ${error.message ?? 'is invalid'}`;
  }
}

const CONTEXT_SCHEMA = {
  body: 'body',
  querystring: 'querystring',
  params: 'params',
  headers: 'headers',
} as const;

/** The message for `errors` (Ajv's, from Fastify's validation of `context`) of `req`'s route. */
export function schemaErrorMessage(req: FastifyRequest, errors: ErrorObject[], context: string): string {
  const part = CONTEXT_SCHEMA[context as keyof typeof CONTEXT_SCHEMA] ?? 'body';
  const root = (req.routeOptions.schema as Record<string, Schema | undefined> | undefined)?.[part];
  // `if`/`anyOf` only summarise errors of their branches, which are reported themselves.
  const named = errors.filter((e) => e.keyword !== 'if' && e.keyword !== 'anyOf');
  const ranked = (named.length ? named : errors)
    .map((error) => ({ error, position: positionOf(error, root) }))
    .sort((a, b) => compare(a.position, b.position));
  const first = ranked[0]?.error;
  return first ? messageOf(first, part === 'body' ? 'body' : 'text') : 'Request is invalid';
}
