/**
 * Route input schemas of the management scope: TypeBox builders for the shapes the reference API
 * uses, and the Ajv instance Fastify compiles them with. The instance differs from Fastify's
 * default on purpose: no type coercion and no removal of unknown keys (the reference API refuses
 * both), every error collected (schema-errors.ts reports the one the reference API would name
 * first) with the offending value attached.
 *
 * `messages` on a schema replaces the message of one of its keywords, e.g.
 * `Type.String({ pattern: '^x', messages: { pattern: 'id must be a UUID' } })`; `{field}` in it
 * stands for the field's label (`name`, or `0.name` in an array).
 */
import { Ajv } from 'ajv';
import { type Static, type TSchema, Type, type SchemaOptions } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** Per-keyword message overrides of a schema (keyword → the whole message, `{field}` → label). */
export type KeywordMessages = Partial<Record<string, string>>;

declare module '@sinclair/typebox' {
  interface SchemaOptions {
    messages?: KeywordMessages;
  }
}

function compilerFor(options: { coerceTypes: boolean }): Ajv {
  return new Ajv({
    allErrors: true,
    verbose: true,
    coerceTypes: options.coerceTypes,
    removeAdditional: false,
    useDefaults: false,
    strict: true,
    keywords: ['messages'],
  });
}

/** Bodies keep their JSON types; query strings and path parameters are text that may name numbers. */
const bodyCompiler = compilerFor({ coerceTypes: false });
const textCompiler = compilerFor({ coerceTypes: true });

export function registerSchemaValidation(app: FastifyInstance): void {
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? bodyCompiler : textCompiler).compile(schema),
  );
}

/**
 * A field that may be absent or `null` (both mean "not given", as in the reference API). A
 * `null` where a required field belongs is reported as "<field> is required".
 */
export function Optional<T extends TSchema>(schema: T) {
  // Ajv's `nullable` does not widen an `enum`: null joins the list (messages leave it out).
  const values = Array.isArray(schema.enum) ? { enum: [...schema.enum, null] } : {};
  return Type.Optional(Type.Unsafe<Static<T> | null>({ ...schema, ...values, nullable: true }));
}

/** A string out of `values` (a plain `enum`, so the error names them all). */
export function StringEnum<const V extends readonly string[]>(values: V, options: SchemaOptions = {}) {
  return Type.Unsafe<V[number]>({ ...options, type: 'string', enum: [...values] });
}

/** An object that refuses keys it does not list ("property x should not exist"). */
export function Strict<P extends Parameters<typeof Type.Object>[0]>(
  properties: P,
  options: SchemaOptions = {},
) {
  return Type.Object(properties, { ...options, additionalProperties: false });
}

async function absentBodyIsEmpty(req: FastifyRequest): Promise<void> {
  if (req.body === undefined) req.body = {};
}

/** Route options for a body that may be left out (no body is `{}`) and otherwise matches `body`. */
export function optionalBody<T extends TSchema>(body: T) {
  return { schema: { body }, preValidation: absentBodyIsEmpty };
}

/** The same message for every way a field can be wrong (absent, null, wrong type, any keyword). */
export function oneMessage(message: string, keywords: readonly string[]): KeywordMessages {
  return Object.fromEntries(['required', 'type', ...keywords].map((k) => [k, message]));
}

/** JSON Schema's `if`/`then`/`else`: `then` applies where `when` holds, `otherwise` elsewhere. */
export function conditional(when: object, then: object, otherwise?: object): object {
  return otherwise ? { if: when, then, else: otherwise } : { if: when, then };
}

/** The name of an organization or a project: up to 256 characters, not only white space. */
export const Name = Type.String({
  maxLength: 256,
  pattern: '\\S',
  messages: { pattern: 'name should not be empty' },
});
