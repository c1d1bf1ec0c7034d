/**
 * The SQL of the Storage API's vector buckets (tables of sql/project/0140_storage_vectors.sql):
 * buckets, indexes, vectors, and nearest-neighbour queries. There is no ANN index (no pgvector):
 * a query computes the distance to every vector of the index in SQL, exactly, and keeps the topK.
 * Every function takes a client already in the caller's transaction; every value is bound.
 */
import type pg from 'pg';

export type Queryable = Pick<pg.ClientBase, 'query'>;

export type DistanceMetric = 'cosine' | 'euclidean';

export interface VectorBucketRow {
  id: string;
  created_at: Date;
}

export interface VectorIndexRow {
  id: string;
  bucket_id: string;
  name: string;
  data_type: string;
  dimension: number;
  distance_metric: DistanceMetric;
  metadata_configuration: unknown;
  created_at: Date;
}

/** A metadata value a filter compares with. */
export type FilterScalar = string | number | boolean;

/**
 * A checked metadata filter (src/storage/vector/filter.ts builds it from the request's filter).
 * `in` matches a field equal to one of the values or an array field holding one of them
 * (`$eq` is `in` with one value); `nin` and `ne` need the field to be there.
 */
export type VectorFilter =
  | { all: VectorFilter[] }
  | { any: VectorFilter[] }
  | { field: string; op: 'in' | 'nin'; values: FilterScalar[] }
  | { field: string; op: 'ne'; value: FilterScalar }
  | { field: string; op: 'gt' | 'gte' | 'lt' | 'lte'; value: number }
  | { field: string; op: 'exists'; value: boolean };

const one = async <R extends pg.QueryResultRow>(
  db: Queryable,
  sql: string,
  params: unknown[],
): Promise<R | undefined> => (await db.query<R>(sql, params)).rows[0];

// --- buckets -------------------------------------------------------------------------------

/** Serialises bucket creations (the bucket count is checked before the insert). */
export async function lockBucketCreation(db: Queryable): Promise<void> {
  await db.query('lock table storage.buckets_vectors in share row exclusive mode');
}

export async function countBuckets(db: Queryable): Promise<number> {
  return (await one<{ n: number }>(db, 'select count(*)::int as n from storage.buckets_vectors', []))?.n ?? 0;
}

/** False when a bucket of that name is already there. */
export async function insertBucket(db: Queryable, name: string): Promise<boolean> {
  const row = await one(
    db,
    'insert into storage.buckets_vectors (id) values ($1) on conflict (id) do nothing returning id',
    [name],
  );
  return row !== undefined;
}

/** The bucket; `forUpdate` locks its row until the transaction ends. */
export async function findBucket(
  db: Queryable,
  name: string,
  forUpdate = false,
): Promise<VectorBucketRow | undefined> {
  return one<VectorBucketRow>(
    db,
    `select id, created_at from storage.buckets_vectors where id = $1${forUpdate ? ' for update' : ''}`,
    [name],
  );
}

export interface PageRequest {
  /** Names starting with it (none: all). */
  prefix?: string;
  /** Names after it, in byte order (none: from the first). */
  after?: string;
  limit: number;
}

export async function listBuckets(db: Queryable, page: PageRequest): Promise<VectorBucketRow[]> {
  const { rows } = await db.query<VectorBucketRow>(
    `select id, created_at from storage.buckets_vectors
      where ($1::text is null or starts_with(id, $1)) and ($2::text is null or id > $2)
      order by id limit $3`,
    [page.prefix ?? null, page.after ?? null, page.limit],
  );
  return rows;
}

export async function bucketHasIndexes(db: Queryable, bucket: string): Promise<boolean> {
  const row = await one<{ found: boolean }>(
    db,
    'select exists (select 1 from storage.vector_indexes where bucket_id = $1) as found',
    [bucket],
  );
  return row?.found === true;
}

export async function deleteBucket(db: Queryable, name: string): Promise<void> {
  await db.query('delete from storage.buckets_vectors where id = $1', [name]);
}

// --- indexes -------------------------------------------------------------------------------

export async function countIndexes(db: Queryable, bucket: string): Promise<number> {
  const row = await one<{ n: number }>(
    db,
    'select count(*)::int as n from storage.vector_indexes where bucket_id = $1',
    [bucket],
  );
  return row?.n ?? 0;
}

export interface NewVectorIndex {
  bucket: string;
  name: string;
  dataType: string;
  dimension: number;
  metric: DistanceMetric;
  metadataConfiguration: unknown;
}

/** The new index, or undefined when the bucket already has one of that name. */
export async function insertIndex(db: Queryable, index: NewVectorIndex): Promise<VectorIndexRow | undefined> {
  return one<VectorIndexRow>(
    db,
    `insert into storage.vector_indexes
       (bucket_id, name, data_type, dimension, distance_metric, metadata_configuration)
     values ($1, $2, $3, $4, $5, $6::jsonb)
     on conflict (bucket_id, name) do nothing
     returning id, bucket_id, name, data_type, dimension, distance_metric, metadata_configuration, created_at`,
    [
      index.bucket,
      index.name,
      index.dataType,
      index.dimension,
      index.metric,
      index.metadataConfiguration === undefined ? null : JSON.stringify(index.metadataConfiguration),
    ],
  );
}

/**
 * The index `name` of `bucket`. `lock`: `share` keeps it from being deleted until the
 * transaction ends (writes of vectors), `update` takes it for deletion.
 */
export async function findIndex(
  db: Queryable,
  bucket: string,
  name: string,
  lock?: 'share' | 'update',
): Promise<VectorIndexRow | undefined> {
  return one<VectorIndexRow>(
    db,
    `select id, bucket_id, name, data_type, dimension, distance_metric, metadata_configuration, created_at
       from storage.vector_indexes where bucket_id = $1 and name = $2${lock ? ` for ${lock}` : ''}`,
    [bucket, name],
  );
}

export async function listIndexes(
  db: Queryable,
  bucket: string,
  page: PageRequest,
): Promise<VectorIndexRow[]> {
  const { rows } = await db.query<VectorIndexRow>(
    `select id, bucket_id, name, data_type, dimension, distance_metric, metadata_configuration, created_at
       from storage.vector_indexes
      where bucket_id = $1 and ($2::text is null or starts_with(name, $2)) and ($3::text is null or name > $3)
      order by name limit $4`,
    [bucket, page.prefix ?? null, page.after ?? null, page.limit],
  );
  return rows;
}

/** Removes the index and its vectors. */
export async function deleteIndex(db: Queryable, indexId: string): Promise<void> {
  await db.query('delete from storage.vector_indexes where id = $1', [indexId]);
}

// --- vectors -------------------------------------------------------------------------------

export interface VectorInput {
  key: string;
  /** Values already rounded to float32 (the column is float4[]). */
  data: number[];
  /** The data's L2 norm (kept for the cosine distance). */
  norm: number;
  metadata: Record<string, unknown>;
}

export interface VectorRow {
  key: string;
  data?: number[];
  metadata?: Record<string, unknown>;
}

export interface VectorColumns {
  data?: boolean;
  metadata?: boolean;
}

const columns = (want: VectorColumns) =>
  ['v.key', want.data ? 'v.data' : '', want.metadata ? 'v.metadata' : ''].filter(Boolean).join(', ');

/**
 * Inserts the vectors, replacing those with the same keys (keys must be distinct). Rows are
 * written in key order, so concurrent batches sharing keys lock them in the same order (no deadlock).
 */
export async function upsertVectors(db: Queryable, indexId: string, batch: VectorInput[]): Promise<void> {
  const vectors = [...batch].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  await db.query(
    `insert into storage.vectors as v (index_id, key, data, norm, metadata)
     select $1, t.key, t.data::float4[], t.norm, t.metadata
       from unnest($2::text[], $3::text[], $4::float8[], $5::jsonb[]) as t(key, data, norm, metadata)
     on conflict (index_id, key) do update
        set data = excluded.data, norm = excluded.norm, metadata = excluded.metadata`,
    [
      indexId,
      vectors.map((v) => v.key),
      vectors.map((v) => `{${v.data.join(',')}}`),
      vectors.map((v) => v.norm),
      vectors.map((v) => JSON.stringify(v.metadata)),
    ],
  );
}

export async function getVectors(
  db: Queryable,
  indexId: string,
  keys: string[],
  want: VectorColumns,
): Promise<VectorRow[]> {
  const { rows } = await db.query<VectorRow>(
    `select ${columns(want)} from storage.vectors v
      where v.index_id = $1 and v.key = any($2::text[]) order by v.key`,
    [indexId, keys],
  );
  return rows;
}

export interface VectorPage extends VectorColumns {
  after?: string;
  limit: number;
  /** Only the keys of one of `count` segments (a hash of the key picks the segment). */
  segment?: { count: number; index: number };
}

export async function listVectors(db: Queryable, indexId: string, page: VectorPage): Promise<VectorRow[]> {
  const { rows } = await db.query<VectorRow>(
    `select ${columns(page)} from storage.vectors v
      where v.index_id = $1 and ($2::text is null or v.key > $2)
        and ($3::int is null or abs(hashtext(v.key)::bigint) % $3 = $4)
      order by v.key limit $5`,
    [indexId, page.after ?? null, page.segment?.count ?? null, page.segment?.index ?? null, page.limit],
  );
  return rows;
}

export async function deleteVectors(db: Queryable, indexId: string, keys: string[]): Promise<void> {
  await db.query('delete from storage.vectors where index_id = $1 and key = any($2::text[])', [
    indexId,
    keys,
  ]);
}

/**
 * Distance of `v` to the query `q` (a CTE with `v`, the query as float8[], and `norm`, its L2
 * norm), in float8 over the float32 values: cosine distance 1 - cos (cos clamped to [-1, 1]; null
 * for a zero vector), or the Euclidean (L2) distance, as pgvector's `<=>` and `<->`. The stored
 * array is cast to float8[] once per row (cheaper than casting each element).
 */
function distanceSql(metric: DistanceMetric): string {
  if (metric === 'cosine') {
    return `1 - greatest(-1::float8, least(1::float8,
      (select sum(a * b) from unnest(v.data::float8[], q.v) as t(a, b)) / nullif(v.norm * q.norm, 0)))`;
  }
  return `sqrt((select sum((a - b) * (a - b)) from unnest(v.data::float8[], q.v) as t(a, b)))`;
}

/** One parameter more; its placeholder. */
function bind(params: unknown[], value: unknown): string {
  params.push(value);
  return `$${params.length}`;
}

/** The filter as a condition on `v.metadata`, its values appended to `params`. */
export function filterSql(filter: VectorFilter, params: unknown[]): string {
  if ('all' in filter) return `(${filter.all.map((f) => filterSql(f, params)).join(' and ')})`;
  if ('any' in filter) return `(${filter.any.map((f) => filterSql(f, params)).join(' or ')})`;
  if (filter.op === 'exists') {
    const test = `(v.metadata ? ${bind(params, filter.field)}::text)`;
    return filter.value ? test : `not ${test}`;
  }
  const field = `(v.metadata -> ${bind(params, filter.field)}::text)`;
  switch (filter.op) {
    case 'in':
      // Equal to one of the values, or an array holding one of them (jsonb compares numbers as numbers).
      return `exists (select 1 from unnest(${bind(
        params,
        filter.values.map((x) => JSON.stringify(x)),
      )}::jsonb[]) as w(x)
        where ${field} = w.x or ${field} @> jsonb_build_array(w.x))`;
    case 'nin': {
      const values = bind(
        params,
        filter.values.map((x) => JSON.stringify(x)),
      );
      return `(case when jsonb_typeof(${field}) = 'array'
        then not exists (select 1 from unnest(${values}::jsonb[]) as w(x) where ${field} @> jsonb_build_array(w.x))
        else ${field} <> all(${values}::jsonb[]) end)`;
    }
    case 'ne': {
      const value = bind(params, JSON.stringify(filter.value));
      return `(case when jsonb_typeof(${field}) = 'array'
        then not (${field} @> jsonb_build_array(${value}::jsonb)) else ${field} <> ${value}::jsonb end)`;
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const op = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[filter.op];
      // The cast only runs on numbers (CASE keeps the order): other values do not match.
      return `(case when jsonb_typeof(${field}) = 'number'
        then ${field}::numeric ${op} ${bind(params, String(filter.value))}::numeric else false end)`;
    }
  }
}

export interface NearestQuery {
  indexId: string;
  metric: DistanceMetric;
  /** Float32 values, as many as the index's dimension. */
  vector: number[];
  topK: number;
  filter?: VectorFilter;
  metadata?: boolean;
}

/** The topK vectors nearest to the query (those the filter keeps), nearest first, with distances. */
export async function nearestVectors(
  db: Queryable,
  query: NearestQuery,
): Promise<(VectorRow & { distance: number | null })[]> {
  const params: unknown[] = [query.indexId, `{${query.vector.join(',')}}`, query.topK];
  const where = query.filter ? ` and ${filterSql(query.filter, params)}` : '';
  const { rows } = await db.query<VectorRow & { distance: number | null }>(
    `with q as (
       select $2::float4[]::float8[] as v,
              (select coalesce(sqrt(sum(x * x)), 0) from unnest($2::float4[]::float8[]) as x) as norm)
     select ${columns({ metadata: query.metadata })}, ${distanceSql(query.metric)} as distance
       from storage.vectors v cross join q
      where v.index_id = $1${where}
      order by distance nulls last, v.key
      limit $3`,
    params,
  );
  return rows;
}
