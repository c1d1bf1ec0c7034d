/**
 * The updates of a table commit (Iceberg REST `TableUpdate`), applied in order to a copy of the
 * table's metadata, with the rules of Iceberg's TableMetadata.Builder: an added schema, spec or
 * sort order identical to an existing one reuses its id, `-1` in set-current-schema,
 * set-default-spec and set-default-sort-order means the one added last in this commit, a snapshot
 * must be newer than the last sequence number, and the `main` ref is the current snapshot.
 * A malformed or unknown update is 400 BadRequestException.
 */
import { iceErrors } from './errors.js';
import { type Json, type JsonObject, idKey, isObject, stringifyJson } from './json.js';
import {
  PARTITION_FIELD_START,
  type TableMetadata,
  asArray,
  asInt,
  asObject,
  asProperties,
  highestFieldId,
} from './metadata.js';

const bad = (message: string) => iceErrors.badRequest(message);
const SUPPORTED_FORMAT_VERSION = 2;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Checks a location the commit wants for the table: inside the table's bucket. */
export type LocationCheck = (location: string) => void;

interface Added {
  schema?: number;
  spec?: number;
  order?: number;
}

const sameShape = (a: Json, b: Json) => stringifyJson(a) === stringifyJson(b);

function nextId(items: JsonObject[], key: string, min: number): number {
  return Math.max(min, ...items.map((i) => (typeof i[key] === 'number' ? (i[key] as number) + 1 : min)));
}

function addSchema(m: TableMetadata, u: JsonObject, added: Added): void {
  const schema = asObject(u.schema, 'schema');
  const highest = highestFieldId(schema);
  const body: JsonObject = { ...schema, 'identifier-field-ids': schema['identifier-field-ids'] ?? [] };
  delete body['schema-id'];
  const same = m.schemas.find((s) => {
    const { 'schema-id': _id, ...rest } = s;
    return sameShape({ ...rest, 'identifier-field-ids': rest['identifier-field-ids'] ?? [] }, body);
  });
  const given = u['last-column-id'] === undefined ? 0 : asInt(u['last-column-id'], 'last-column-id');
  m['last-column-id'] = Math.max(m['last-column-id'], highest, given);
  if (same) {
    added.schema = same['schema-id'] as number;
    return;
  }
  const id = nextId(m.schemas, 'schema-id', 0);
  m.schemas.push({ 'schema-id': id, ...body });
  added.schema = id;
}

function addSpec(m: TableMetadata, u: JsonObject, added: Added): void {
  const spec = asObject(u.spec, 'spec');
  let last = m['last-partition-id'];
  const fields = asArray(spec.fields ?? [], 'partition fields').map((f) => {
    const field = asObject(f, 'partition field');
    asInt(field['source-id'], 'partition field source-id');
    const id = field['field-id'] === undefined ? last + 1 : asInt(field['field-id'], 'partition field-id');
    last = Math.max(last, id);
    return { ...field, 'field-id': id };
  });
  m['last-partition-id'] = Math.max(m['last-partition-id'], last, PARTITION_FIELD_START - 1);
  const same = m['partition-specs'].find((s) => sameShape(s.fields ?? [], fields));
  if (same) {
    added.spec = same['spec-id'] as number;
    return;
  }
  const id = nextId(m['partition-specs'], 'spec-id', 0);
  m['partition-specs'].push({ 'spec-id': id, fields });
  added.spec = id;
}

function addSortOrder(m: TableMetadata, u: JsonObject, added: Added): void {
  const order = asObject(u['sort-order'], 'sort-order');
  const fields = asArray(order.fields ?? [], 'sort fields');
  for (const f of fields) asInt(asObject(f, 'sort field')['source-id'], 'sort field source-id');
  const same = m['sort-orders'].find((o) => sameShape(o.fields ?? [], fields));
  if (same) {
    added.order = same['order-id'] as number;
    return;
  }
  const id = fields.length === 0 ? 0 : nextId(m['sort-orders'], 'order-id', 1);
  m['sort-orders'].push({ 'order-id': id, fields });
  added.order = id;
}

/** The id a set-default/current update names: `-1` is the one added last in this commit. */
function chosen(u: JsonObject, field: string, last: number | undefined, what: string): number {
  const id = asInt(u[field], field);
  if (id !== -1) return id;
  if (last === undefined) throw bad(`Cannot set the last added ${what}: none was added`);
  return last;
}

function addSnapshot(m: TableMetadata, u: JsonObject): void {
  const s = asObject(u.snapshot, 'snapshot');
  const id = idKey(s['snapshot-id']);
  if (id === undefined) throw bad('snapshot-id must be an integer');
  if (m.snapshots.some((x) => idKey(x['snapshot-id']) === id))
    throw bad(`Snapshot already exists for id: ${id}`);
  const seq = s['sequence-number'] === undefined ? 0 : asInt(s['sequence-number'], 'sequence-number');
  if (
    s['parent-snapshot-id'] !== undefined &&
    s['parent-snapshot-id'] !== null &&
    seq <= m['last-sequence-number']
  )
    throw bad(
      `Cannot add snapshot with sequence number ${seq} older than last sequence number ${m['last-sequence-number']}`,
    );
  asInt(s['timestamp-ms'], 'timestamp-ms');
  if (typeof s['manifest-list'] !== 'string') throw bad('A snapshot needs a manifest-list');
  if (!isObject(s.summary) || typeof s.summary.operation !== 'string')
    throw bad('A snapshot needs a summary with an operation');
  m.snapshots.push(s);
  m['last-sequence-number'] = Math.max(m['last-sequence-number'], seq);
}

function setRef(m: TableMetadata, u: JsonObject): void {
  const name = u['ref-name'];
  if (typeof name !== 'string' || name === '') throw bad('set-snapshot-ref needs a ref-name');
  if (u.type !== 'branch' && u.type !== 'tag') throw bad('A ref type is branch or tag');
  const id = idKey(u['snapshot-id']);
  const snapshot = m.snapshots.find((s) => idKey(s['snapshot-id']) === id);
  if (!snapshot) throw bad(`Cannot set ${name} to unknown snapshot: ${String(id)}`);
  const ref: JsonObject = { 'snapshot-id': snapshot['snapshot-id'] as Json, type: u.type };
  for (const k of ['min-snapshots-to-keep', 'max-snapshot-age-ms', 'max-ref-age-ms'])
    if (u[k] !== undefined && u[k] !== null) ref[k] = asInt(u[k], k);
  m.refs[name] = ref;
  if (name === 'main') {
    m['current-snapshot-id'] = snapshot['snapshot-id'] as number | bigint;
    const at = typeof snapshot['timestamp-ms'] === 'number' ? snapshot['timestamp-ms'] : Date.now();
    m['snapshot-log'].push({ 'timestamp-ms': at, 'snapshot-id': snapshot['snapshot-id'] as Json });
  }
}

function removeRef(m: TableMetadata, name: string): void {
  delete m.refs[name];
  if (name === 'main') m['current-snapshot-id'] = -1;
}

function removeSnapshots(m: TableMetadata, u: JsonObject): void {
  const gone = new Set(asArray(u['snapshot-ids'], 'snapshot-ids').map((x) => idKey(x) ?? ''));
  m.snapshots = m.snapshots.filter((s) => !gone.has(idKey(s['snapshot-id']) ?? ''));
  for (const [name, ref] of Object.entries(m.refs))
    if (gone.has(idKey(ref['snapshot-id']) ?? '')) removeRef(m, name);
  m['snapshot-log'] = m['snapshot-log'].filter((e) => !gone.has(idKey(e['snapshot-id']) ?? ''));
  m.statistics = m.statistics.filter((e) => !gone.has(idKey(e['snapshot-id']) ?? ''));
  m['partition-statistics'] = m['partition-statistics'].filter(
    (e) => !gone.has(idKey(e['snapshot-id']) ?? ''),
  );
}

function setStatistics(m: TableMetadata, u: JsonObject, key: 'statistics' | 'partition-statistics'): void {
  const stats = asObject(u[key], key);
  const id = idKey(stats['snapshot-id']);
  if (id === undefined) throw bad(`${key} needs a snapshot-id`);
  m[key] = [...m[key].filter((s) => idKey(s['snapshot-id']) !== id), stats];
}

function applyOne(m: TableMetadata, u: JsonObject, added: Added, checkLocation: LocationCheck): void {
  switch (u.action) {
    case 'assign-uuid':
      if (typeof u.uuid !== 'string' || !UUID.test(u.uuid)) throw bad('assign-uuid needs a UUID');
      if (u.uuid.toLowerCase() !== m['table-uuid'].toLowerCase()) throw bad('Cannot reassign the table UUID');
      return;
    case 'upgrade-format-version': {
      const v = asInt(u['format-version'], 'format-version');
      if (v < m['format-version']) throw bad(`Cannot downgrade v${m['format-version']} table to v${v}`);
      if (v > SUPPORTED_FORMAT_VERSION)
        throw bad(`Unsupported format version: v${v} (this catalog supports v2)`);
      return;
    }
    case 'add-schema':
      addSchema(m, u, added);
      return;
    case 'set-current-schema': {
      const id = chosen(u, 'schema-id', added.schema, 'schema');
      if (!m.schemas.some((s) => s['schema-id'] === id))
        throw bad(`Cannot set current schema to unknown schema: ${id}`);
      m['current-schema-id'] = id;
      return;
    }
    case 'add-spec':
      addSpec(m, u, added);
      return;
    case 'set-default-spec': {
      const id = chosen(u, 'spec-id', added.spec, 'partition spec');
      if (!m['partition-specs'].some((s) => s['spec-id'] === id))
        throw bad(`Cannot set default spec to unknown spec: ${id}`);
      m['default-spec-id'] = id;
      return;
    }
    case 'add-sort-order':
      addSortOrder(m, u, added);
      return;
    case 'set-default-sort-order': {
      const id = chosen(u, 'sort-order-id', added.order, 'sort order');
      if (!m['sort-orders'].some((s) => s['order-id'] === id))
        throw bad(`Cannot set default sort order to unknown order: ${id}`);
      m['default-sort-order-id'] = id;
      return;
    }
    case 'add-snapshot':
      addSnapshot(m, u);
      return;
    case 'set-snapshot-ref':
      setRef(m, u);
      return;
    case 'remove-snapshot-ref':
      if (typeof u['ref-name'] !== 'string') throw bad('remove-snapshot-ref needs a ref-name');
      removeRef(m, u['ref-name']);
      return;
    case 'remove-snapshots':
      removeSnapshots(m, u);
      return;
    case 'set-location':
      if (typeof u.location !== 'string') throw bad('set-location needs a location');
      checkLocation(u.location);
      m.location = u.location.replace(/\/+$/, '');
      return;
    case 'set-properties':
      m.properties = { ...m.properties, ...asProperties(u.updates, 'updates') };
      return;
    case 'remove-properties':
      for (const k of asArray(u.removals, 'removals')) if (typeof k === 'string') delete m.properties[k];
      return;
    case 'set-statistics':
      setStatistics(m, u, 'statistics');
      return;
    case 'remove-statistics':
      m.statistics = m.statistics.filter((s) => idKey(s['snapshot-id']) !== idKey(u['snapshot-id']));
      return;
    case 'set-partition-statistics':
      setStatistics(m, u, 'partition-statistics');
      return;
    case 'remove-partition-statistics':
      m['partition-statistics'] = m['partition-statistics'].filter(
        (s) => idKey(s['snapshot-id']) !== idKey(u['snapshot-id']),
      );
      return;
    default:
      throw bad(`Unsupported update action: ${String(u.action)}`);
  }
}

/** The metadata after `updates` (a new object; `base` is not changed). */
export function applyUpdates(
  base: TableMetadata,
  updates: Json[],
  checkLocation: LocationCheck,
): TableMetadata {
  const m = structuredClone(base);
  const added: Added = {};
  for (const u of updates) {
    if (!isObject(u) || typeof u.action !== 'string') throw bad('An update needs an action');
    applyOne(m, u, added, checkLocation);
  }
  m['last-updated-ms'] = Math.max(Date.now(), base['last-updated-ms'] + 1);
  return m;
}
