/**
 * Input of the vector routes: the request body schemas (upstream's limits and names, checked by an
 * Ajv of their own: no type coercion, the first error reported, worded `body/<path> <message>`), and
 * the checks a schema cannot make (duplicate keys, metadata sizes, the index's dimension, float32
 * range, zero vectors on cosine indexes).
 */
import { Ajv } from 'ajv';
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import type { FastifySchemaCompiler } from 'fastify';
import type { DistanceMetric } from '../database/vectors.js';
import { vectorErrors } from './errors.js';

export const LIMITS = {
  buckets: 10,
  indexesPerBucket: 20,
  listPage: 500,
  listVectorsPage: 1_000,
  segments: 16,
  putVectors: 500,
  getKeys: 100,
  deleteKeys: 500,
  keyLength: 1_024,
  topK: 100,
  dimension: 4_096,
  metadataKeys: 50,
  metadataBytes: 40 * 1_024,
  filterableMetadataBytes: 2_048,
} as const;

// The first error only (upstream reports all: a 20 MiB body of wrong values would make millions of
// error objects). strictNumbers: a JSON number past a double (1e400) parses as Infinity: refused.
const ajv = new Ajv({
  allErrors: false,
  coerceTypes: false,
  removeAdditional: false,
  useDefaults: false,
  strictNumbers: true,
});

/** Body validation for the vector routes (their plugin's validator compiler). */
export const compileVectorSchema: FastifySchemaCompiler<TSchema> = ({ schema }) => {
  const validate = ajv.compile(schema);
  return (data: unknown) => (validate(data) ? { value: data } : { error: validate.errors ?? [] });
};

const BucketName = Type.String({ minLength: 1, maxLength: 63 });
/** 3-45 characters: lowercase letters, digits, hyphens and dots, a letter or digit at each end. */
const IndexName = Type.String({
  minLength: 3,
  maxLength: 45,
  pattern: '^[a-z0-9](?:[a-z0-9.-]{1,61})?[a-z0-9]$',
});
const VectorKey = Type.String({ minLength: 1, maxLength: LIMITS.keyLength });
const Float32Data = Type.Object({ float32: Type.Array(Type.Number(), { minItems: 1 }) });
const Scalar = Type.Union([Type.String(), Type.Boolean(), Type.Number()]);
/** Metadata: values are strings, booleans, numbers, or arrays of those. */
const Metadata = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  additionalProperties: Type.Union([Scalar, Type.Array(Scalar)]),
});
const Page = {
  maxResults: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMITS.listPage })),
  nextToken: Type.Optional(Type.String()),
  prefix: Type.Optional(Type.String()),
};
const Returns = {
  returnData: Type.Optional(Type.Boolean()),
  returnMetadata: Type.Optional(Type.Boolean()),
};

export const BucketBody = Type.Object({ vectorBucketName: BucketName });
export const ListBucketsBody = Type.Object(Page);
export const CreateIndexBody = Type.Object({
  vectorBucketName: BucketName,
  indexName: IndexName,
  dataType: Type.Unsafe<'float32'>({ type: 'string', enum: ['float32'] }),
  dimension: Type.Integer({ minimum: 1, maximum: LIMITS.dimension }),
  distanceMetric: Type.Unsafe<DistanceMetric>({ type: 'string', enum: ['cosine', 'euclidean'] }),
  metadataConfiguration: Type.Optional(
    Type.Object({
      nonFilterableMetadataKeys: Type.Array(Type.String({ minLength: 1, maxLength: 63 }), {
        minItems: 1,
        maxItems: 10,
        uniqueItems: true,
      }),
    }),
  ),
});
export const IndexBody = Type.Object({ vectorBucketName: BucketName, indexName: IndexName });
export const ListIndexesBody = Type.Object({ vectorBucketName: BucketName, ...Page });
export const PutVectorsBody = Type.Object({
  vectorBucketName: BucketName,
  indexName: IndexName,
  vectors: Type.Array(Type.Object({ key: VectorKey, data: Float32Data, metadata: Type.Optional(Metadata) }), {
    minItems: 1,
    maxItems: LIMITS.putVectors,
  }),
});
export const GetVectorsBody = Type.Object({
  vectorBucketName: BucketName,
  indexName: Type.String(),
  keys: Type.Array(VectorKey, { minItems: 1, maxItems: LIMITS.getKeys }),
  ...Returns,
});
export const DeleteVectorsBody = Type.Object({
  vectorBucketName: BucketName,
  indexName: Type.String(),
  keys: Type.Array(VectorKey, { minItems: 1, maxItems: LIMITS.deleteKeys }),
});
export const ListVectorsBody = Type.Object({
  vectorBucketName: BucketName,
  indexName: IndexName,
  indexArn: Type.Optional(Type.String()),
  maxResults: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMITS.listVectorsPage })),
  nextToken: Type.Optional(Type.String()),
  segmentCount: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMITS.segments })),
  segmentIndex: Type.Optional(Type.Integer({ minimum: 0, maximum: LIMITS.segments - 1 })),
  ...Returns,
});
export const QueryVectorsBody = Type.Object(
  {
    vectorBucketName: BucketName,
    indexName: IndexName,
    indexArn: Type.Optional(Type.String()),
    queryVector: Type.Object(
      { float32: Type.Array(Type.Number(), { minItems: 1 }) },
      { additionalProperties: false },
    ),
    topK: Type.Integer({ minimum: 1, maximum: LIMITS.topK }),
    // Its grammar is checked by filter.ts (operators, nesting, non-filterable keys).
    filter: Type.Optional(Type.Unsafe<unknown>({ type: 'object' })),
    returnDistance: Type.Optional(Type.Boolean()),
    returnMetadata: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export type PutVectorsInput = Static<typeof PutVectorsBody>;
export type ListVectorsInput = Static<typeof ListVectorsBody>;
export type QueryVectorsInput = Static<typeof QueryVectorsBody>;

/** `segmentCount` and `segmentIndex` come together, the index below the count. */
export function segmentOf(body: ListVectorsInput): { count: number; index: number } | undefined {
  const { segmentCount: count, segmentIndex: index } = body;
  if (count === undefined && index === undefined) return undefined;
  if (count === undefined || index === undefined) {
    throw vectorErrors.invalidParameter('segmentCount and segmentIndex must be provided together');
  }
  if (index >= count) throw vectorErrors.invalidParameter('segmentIndex must be less than segmentCount');
  return { count, index };
}

export function checkDistinctKeys(vectors: readonly { key: string }[]): void {
  const seen = new Set<string>();
  for (const { key } of vectors) {
    if (seen.has(key)) throw vectorErrors.invalidParameter('Request must not contain duplicate keys');
    seen.add(key);
  }
}

/** The index's non-filterable metadata keys (its metadataConfiguration). */
export function nonFilterableKeys(configuration: unknown): ReadonlySet<string> {
  const keys = (configuration as { nonFilterableMetadataKeys?: unknown } | null)?.nonFilterableMetadataKeys;
  return new Set(Array.isArray(keys) ? keys.filter((k): k is string => typeof k === 'string') : []);
}

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

/** At most 50 keys and 40 KiB of metadata per vector, of which at most 2 KiB filterable. */
export function checkMetadata(
  key: string,
  metadata: Record<string, unknown>,
  nonFilterable: ReadonlySet<string>,
): void {
  const fail = (why: string) => vectorErrors.invalidParameter(`Invalid record for key '${key}': ${why}`);
  if (Object.keys(metadata).length > LIMITS.metadataKeys) {
    throw fail(`Metadata must have at most ${LIMITS.metadataKeys} keys`);
  }
  if (jsonBytes(metadata) > LIMITS.metadataBytes) {
    throw fail(`Total metadata must have at most ${LIMITS.metadataBytes} bytes`);
  }
  const filterable = Object.fromEntries(Object.entries(metadata).filter(([k]) => !nonFilterable.has(k)));
  if (jsonBytes(filterable) > LIMITS.filterableMetadataBytes) {
    throw fail(`Filterable metadata must have at most ${LIMITS.filterableMetadataBytes} bytes`);
  }
}

/** Below this a float32 is subnormal; such values are stored as 0 (PostgreSQL's real refuses some). */
const FLOAT32_MIN_NORMAL = 1.1754943508222875e-38;

/**
 * The values as float32 (what the index stores and compares), checked against the index: as many
 * as its dimension, each within float32's range, and not all zero on a cosine index (a zero
 * vector has no direction). `what` names the vector in the error ("key 'a'", "queryVector").
 */
export function toFloat32(
  values: number[],
  index: { dimension: number; metric: DistanceMetric },
  what: string,
): number[] {
  const fail = (why: string) => vectorErrors.invalidParameter(`Invalid vector for ${what}: ${why}`);
  if (values.length !== index.dimension) {
    throw fail(`dimension ${values.length} does not match the index dimension ${index.dimension}`);
  }
  let nonZero = false;
  const out = values.map((v) => {
    const f = Math.fround(v);
    if (!Number.isFinite(f)) throw fail(`${v} is outside the float32 range`);
    if (Math.abs(f) < FLOAT32_MIN_NORMAL) return 0;
    nonZero = true;
    return f;
  });
  if (!nonZero && index.metric === 'cosine')
    throw fail('a zero vector cannot be used with the cosine distance metric');
  return out;
}

/** The L2 norm (summed in float64, as the queries sum). */
export function l2norm(values: readonly number[]): number {
  let sum = 0;
  for (const v of values) sum += v * v;
  return Math.sqrt(sum);
}
