/**
 * Iceberg table metadata (format version 2): the document a new table starts with, built from a
 * create request as Iceberg's own catalogs build it (TableMetadata.newTableMetadata in Java,
 * new_table_metadata in pyiceberg): field ids assigned afresh from 1 (a struct's fields first, then
 * their nested types), partition field ids from 1000, and the partition spec, sort order and
 * identifier fields pointed at the new ids. Also the schema checks shared with add-schema.
 */
import { randomUUID } from 'node:crypto';
import { iceErrors } from './errors.js';
import { type Json, type JsonObject, isObject } from './json.js';

export interface TableMetadata {
  'format-version': number;
  'table-uuid': string;
  location: string;
  'last-sequence-number': number;
  'last-updated-ms': number;
  'last-column-id': number;
  schemas: JsonObject[];
  'current-schema-id': number;
  'partition-specs': JsonObject[];
  'default-spec-id': number;
  'last-partition-id': number;
  'sort-orders': JsonObject[];
  'default-sort-order-id': number;
  properties: Record<string, string>;
  'current-snapshot-id': number | bigint;
  refs: Record<string, JsonObject>;
  snapshots: JsonObject[];
  statistics: JsonObject[];
  'partition-statistics': JsonObject[];
  'snapshot-log': JsonObject[];
  'metadata-log': JsonObject[];
}

/** The first partition field id (Iceberg's PARTITION_DATA_ID_START). */
export const PARTITION_FIELD_START = 1000;

const bad = (message: string) => iceErrors.badRequest(message);

export function asInt(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw bad(`${what} must be an integer`);
  return v;
}

function asString(v: unknown, what: string): string {
  if (typeof v !== 'string') throw bad(`${what} must be a string`);
  return v;
}

export function asObject(v: unknown, what: string): JsonObject {
  if (!isObject(v)) throw bad(`${what} must be an object`);
  return v;
}

export function asArray(v: unknown, what: string): Json[] {
  if (!Array.isArray(v)) throw bad(`${what} must be an array`);
  return v;
}

/** A map of string values (table and namespace properties). */
export function asProperties(v: unknown, what: string): Record<string, string> {
  if (v === undefined || v === null) return {};
  const o = asObject(v, what);
  for (const [k, x] of Object.entries(o)) asString(x, `${what}.${k}`);
  return o as Record<string, string>;
}

/**
 * Visits every field of a type (struct fields, list elements, map keys and values), calling
 * `visit` with the id of each; throws on a malformed type.
 */
export function forEachFieldId(type: Json, visit: (id: number) => void, depth = 0): void {
  if (depth > 64) throw bad('Schema nesting too deep');
  if (typeof type === 'string') return;
  const t = asObject(type, 'type');
  if (t.type === 'struct') {
    for (const f of asArray(t.fields, 'struct fields')) {
      const field = asObject(f, 'field');
      visit(asInt(field.id, 'field id'));
      asString(field.name, 'field name');
      forEachFieldId(field.type ?? null, visit, depth + 1);
    }
  } else if (t.type === 'list') {
    visit(asInt(t['element-id'], 'element-id'));
    forEachFieldId(t.element ?? null, visit, depth + 1);
  } else if (t.type === 'map') {
    visit(asInt(t['key-id'], 'key-id'));
    visit(asInt(t['value-id'], 'value-id'));
    forEachFieldId(t.key ?? null, visit, depth + 1);
    forEachFieldId(t.value ?? null, visit, depth + 1);
  } else {
    throw bad(`Unknown type: ${String(t.type)}`);
  }
}

/** Checks a schema (struct, ids positive and unique); returns its highest field id. */
export function highestFieldId(schema: JsonObject): number {
  if (schema.type !== 'struct') throw bad('A schema must be a struct');
  const seen = new Set<number>();
  let highest = 0;
  forEachFieldId(schema, (id) => {
    if (id < 1) throw bad(`Invalid field id: ${id}`);
    if (seen.has(id)) throw bad(`Duplicate field id: ${id}`);
    seen.add(id);
    highest = Math.max(highest, id);
  });
  return highest;
}

/** A copy of `type` with fresh ids from `next()`; `ids` maps each old id to its new one. */
function freshType(type: Json, next: () => number, ids: Map<number, number>, depth = 0): Json {
  if (depth > 64) throw bad('Schema nesting too deep');
  if (typeof type === 'string') return type;
  const t = asObject(type, 'type');
  const fresh = (old: unknown, what: string) => {
    const id = next();
    ids.set(asInt(old, what), id);
    return id;
  };
  if (t.type === 'struct') {
    const fields = asArray(t.fields, 'struct fields').map((f) => asObject(f, 'field'));
    const newIds = fields.map((f) => fresh(f.id, 'field id'));
    return {
      ...t,
      fields: fields.map((f, i) => ({
        ...f,
        id: newIds[i] as number,
        name: asString(f.name, 'field name'),
        required: f.required === true,
        type: freshType(f.type ?? null, next, ids, depth + 1),
      })),
    };
  }
  if (t.type === 'list') {
    const elementId = fresh(t['element-id'], 'element-id');
    return { ...t, 'element-id': elementId, element: freshType(t.element ?? null, next, ids, depth + 1) };
  }
  if (t.type === 'map') {
    const keyId = fresh(t['key-id'], 'key-id');
    const valueId = fresh(t['value-id'], 'value-id');
    return {
      ...t,
      'key-id': keyId,
      'value-id': valueId,
      key: freshType(t.key ?? null, next, ids, depth + 1),
      value: freshType(t.value ?? null, next, ids, depth + 1),
    };
  }
  throw bad(`Unknown type: ${String(t.type)}`);
}

function remapSource(field: JsonObject, ids: Map<number, number>, what: string): number {
  const id = ids.get(asInt(field['source-id'], `${what} source-id`));
  if (id === undefined) throw bad(`${what} refers to a field that is not in the schema`);
  return id;
}

export interface NewTable {
  location: string;
  schema: unknown;
  spec: unknown;
  sortOrder: unknown;
  properties: Record<string, string>;
}

/** The metadata of a new table (no snapshots yet). */
export function newTableMetadata(t: NewTable, now = Date.now()): TableMetadata {
  const schemaIn = asObject(t.schema, 'schema');
  if (schemaIn.type !== 'struct') throw bad('A schema must be a struct');
  highestFieldId(schemaIn);
  let lastColumnId = 0;
  const ids = new Map<number, number>();
  const fresh = freshType(schemaIn, () => ++lastColumnId, ids) as JsonObject;
  const identifiers = asArray(schemaIn['identifier-field-ids'] ?? [], 'identifier-field-ids').map((id) => {
    const mapped = ids.get(asInt(id, 'identifier field id'));
    if (mapped === undefined) throw bad('An identifier field is not in the schema');
    return mapped;
  });
  const schema: JsonObject = { ...fresh, 'schema-id': 0, 'identifier-field-ids': identifiers };

  const specIn =
    t.spec === undefined || t.spec === null ? { fields: [] } : asObject(t.spec, 'partition spec');
  let lastPartitionId = PARTITION_FIELD_START - 1;
  const specFields = asArray(specIn.fields ?? [], 'partition fields').map((f) => {
    const field = asObject(f, 'partition field');
    return {
      ...field,
      'source-id': remapSource(field, ids, 'A partition field'),
      'field-id': ++lastPartitionId,
      name: asString(field.name, 'partition field name'),
      transform: asString(field.transform, 'partition field transform'),
    };
  });

  const orderIn =
    t.sortOrder === undefined || t.sortOrder === null ? { fields: [] } : asObject(t.sortOrder, 'write-order');
  const orderFields = asArray(orderIn.fields ?? [], 'sort fields').map((f) => {
    const field = asObject(f, 'sort field');
    return {
      ...field,
      'source-id': remapSource(field, ids, 'A sort field'),
      transform: asString(field.transform, 'sort field transform'),
      direction: asString(field.direction, 'sort field direction'),
      'null-order': asString(field['null-order'], 'sort field null-order'),
    };
  });
  const orderId = orderFields.length === 0 ? 0 : 1;

  return {
    'format-version': 2,
    'table-uuid': randomUUID(),
    location: t.location,
    'last-sequence-number': 0,
    'last-updated-ms': now,
    'last-column-id': lastColumnId,
    schemas: [schema],
    'current-schema-id': 0,
    'partition-specs': [{ 'spec-id': 0, fields: specFields }],
    'default-spec-id': 0,
    'last-partition-id': lastPartitionId,
    'sort-orders': [{ 'order-id': orderId, fields: orderFields }],
    'default-sort-order-id': orderId,
    properties: { ...t.properties },
    'current-snapshot-id': -1,
    refs: {},
    snapshots: [],
    statistics: [],
    'partition-statistics': [],
    'snapshot-log': [],
    'metadata-log': [],
  };
}

/** The empty metadata a staged create's updates are applied to (assert-create commits). */
export function emptyTableMetadata(location: string, now = Date.now()): TableMetadata {
  return {
    'format-version': 2,
    'table-uuid': randomUUID(),
    location,
    'last-sequence-number': 0,
    'last-updated-ms': now,
    'last-column-id': 0,
    schemas: [],
    'current-schema-id': -1,
    'partition-specs': [],
    'default-spec-id': -1,
    'last-partition-id': PARTITION_FIELD_START - 1,
    'sort-orders': [],
    'default-sort-order-id': -1,
    properties: {},
    'current-snapshot-id': -1,
    refs: {},
    snapshots: [],
    statistics: [],
    'partition-statistics': [],
    'snapshot-log': [],
    'metadata-log': [],
  };
}

/** Whether metadata built by updates is a table (a schema, a spec and a sort order chosen). */
export function assertComplete(m: TableMetadata): void {
  if (!m.schemas.some((s) => s['schema-id'] === m['current-schema-id']))
    throw bad('The table has no current schema');
  if (!m['partition-specs'].some((s) => s['spec-id'] === m['default-spec-id']))
    throw bad('The table has no default partition spec');
  if (!m['sort-orders'].some((s) => s['order-id'] === m['default-sort-order-id']))
    throw bad('The table has no default sort order');
}
