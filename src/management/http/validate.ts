/**
 * Small request-body checks that name the offending field in the 400 message (the reference API
 * rejects unknown keys where its schema says `additionalProperties: false`).
 */
import { badRequest } from './errors.js';

export type JsonObject = Record<string, unknown>;

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The body as an object; 400 when it is missing or not an object. */
export function objectBody(body: unknown): JsonObject {
  if (!isObject(body)) throw badRequest('Request body must be a JSON object');
  return body;
}

/** The body as an array; 400 otherwise. */
export function arrayBody(body: unknown): unknown[] {
  if (!Array.isArray(body)) throw badRequest('Request body must be a JSON array');
  return body;
}

/** 400 naming the first key not in `allowed`. */
export function rejectUnknownKeys(obj: JsonObject, allowed: readonly string[], where = ''): void {
  for (const k of Object.keys(obj)) {
    if (!allowed.includes(k)) throw badRequest(`${where}property ${k} should not exist`);
  }
}

export interface StringRule {
  required?: boolean;
  minLength?: number;
  maxLength?: number;
  pattern?: RegExp;
  enum?: readonly string[];
  /** How the field is named in messages (default: its key), e.g. `0.name` for array items. */
  label?: string;
}

/** Checks `obj[field]` against `rule`; returns the string (or undefined when optional and absent). */
export function stringField(obj: JsonObject, field: string, rule: StringRule & { required: true }): string;
export function stringField(obj: JsonObject, field: string, rule?: StringRule): string | undefined;
export function stringField(obj: JsonObject, key: string, rule: StringRule = {}): string | undefined {
  const field = rule.label ?? key;
  const v = obj[key];
  if (v === undefined || v === null) {
    if (rule.required) throw badRequest(`${field} is required`);
    return undefined;
  }
  if (typeof v !== 'string') throw badRequest(`${field} must be a string`);
  if (rule.minLength !== undefined && v.length < rule.minLength) {
    throw badRequest(
      rule.minLength === 1
        ? `${field} should not be empty`
        : `${field} must be longer than or equal to ${rule.minLength} characters`,
    );
  }
  if (rule.maxLength !== undefined && v.length > rule.maxLength)
    throw badRequest(`${field} must be shorter than or equal to ${rule.maxLength} characters`);
  if (rule.pattern && !rule.pattern.test(v))
    throw badRequest(`${field} must match pattern "${rule.pattern.source}"`);
  if (rule.enum && !rule.enum.includes(v))
    throw badRequest(`${field} must be one of the following values: ${rule.enum.join(', ')}`);
  return v;
}

export function booleanField(obj: JsonObject, field: string): boolean | undefined {
  const v = obj[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw badRequest(`${field} must be a boolean value`);
  return v;
}
