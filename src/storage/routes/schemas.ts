/**
 * Schema pieces shared by the Storage routes. Fastify validates each route's schema with its
 * default Ajv, as the reference does: every part coerced (`coerceTypes: 'array'`), errors worded
 * `<part>/<path> <Ajv message>` and mapped to the storage envelope in index.ts.
 */
import { type SchemaOptions, Type } from '@sinclair/typebox';

/** A string out of `values`: a plain `enum`, so Ajv says "must be equal to one of the allowed values". */
export function StringEnum<const V extends readonly string[]>(values: V, options: SchemaOptions = {}) {
  return Type.Unsafe<V[number]>({ ...options, type: 'string', enum: [...values] });
}

/** `{bucket}` of a bucket-wide route. */
export const BucketParams = Type.Object({ bucket: Type.String() });

/** The query string of a route authorised by a signed URL's token. */
export const TokenQuery = Type.Object({ token: Type.String() });

/**
 * A count or position of a list request: PostgreSQL's `integer` (storage.search takes int), so a
 * larger one is refused by the schema (400) rather than overflowing in SQL.
 */
export const ListCount = (minimum: number) => Type.Integer({ minimum, maximum: 2_147_483_647 });
