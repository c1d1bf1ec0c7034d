/**
 * Iceberg tables: create, list, load, commit, drop. Every version of a table's metadata is written
 * as a JSON file through the project's storage backend (file or S3) under the backend bucket
 * `<bucket>--table-s3` (a name no standard bucket can have), key
 * `<namespace>/<table>/metadata/<version>-<uuid>.metadata.json`, and named by its s3:// URI in
 * `metadata-location`; the database holds the catalog state (database/iceberg.ts). A commit holds
 * the table's row lock from reading the current metadata to storing the new one, so commits to one
 * table are serialized and each is checked against the metadata it replaces.
 */
import { OPERATIONS } from '../operations.js';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { ObjectLocation } from '../backend/interface.js';
import {
  type Db,
  deleteTable,
  findTable,
  icebergTx,
  insertMetadataFile,
  insertTable,
  listTables,
  pruneMetadataFiles,
  renameTable,
  updateTableMetadata,
} from '../database/iceberg.js';
import { isValidKey } from '../keys.js';
import { type CatalogScope, assertResourceName, decodePageToken, namespaceOf, page } from './catalog.js';
import { iceErrors } from './errors.js';
import { type Json, isObject, parseJson, stringifyJson } from './json.js';
import {
  type TableMetadata,
  asArray,
  asObject,
  asProperties,
  assertComplete,
  emptyTableMetadata,
  newTableMetadata,
} from './metadata.js';
import { checkRequirements } from './requirements.js';
import { UUID, applyUpdates } from './updates.js';

/** The backend bucket of an analytics bucket's metadata files. */
export const backendBucket = (bucket: string) => `${bucket}--table-s3`;

/** How many earlier metadata files the metadata-log keeps (Iceberg's default of the property). */
const PREVIOUS_VERSIONS_MAX = 100;

/** A table location must lie in its bucket: `s3://<bucket>/<key>`. */
function locationChecker(bucket: string): (location: string) => void {
  return (location) => {
    const prefix = `s3://${bucket}/`;
    const key = location.startsWith(prefix) ? location.slice(prefix.length).replace(/\/+$/, '') : '';
    if (!isValidKey(key) || key.length > 700)
      throw iceErrors.badRequest(`A table location must be inside its bucket: ${prefix}...`);
  };
}

/** The key of a location inside `bucket`'s s3:// space. */
const keyOf = (bucket: string, uri: string) => uri.slice(`s3://${bucket}/`.length);

async function writeMetadata(
  s: CatalogScope,
  bucket: string,
  m: TableMetadata,
  version: number,
): Promise<{ loc: ObjectLocation; uri: string; text: string }> {
  const text = stringifyJson(m as unknown as Json);
  const key = `${keyOf(bucket, m.location)}/metadata/${String(version).padStart(5, '0')}-${randomUUID()}.metadata.json`;
  const loc = { bucket: backendBucket(bucket), key, version: randomUUID() };
  const bytes = Buffer.from(text, 'utf8');
  await s.backend.put(loc, Readable.from([bytes]), {
    contentType: 'application/json',
    cacheControl: 'no-cache',
    maxBytes: bytes.length,
    limitError: () => new Error('metadata file larger than its bytes'),
  });
  return { loc, uri: `s3://${bucket}/${key}`, text };
}

/** Runs a write that may put metadata files; those of a write that does not commit are removed. */
async function withFiles<T>(
  s: CatalogScope,
  work: (written: ObjectLocation[], stale: ObjectLocation[]) => Promise<T>,
): Promise<T> {
  const written: ObjectLocation[] = [];
  const stale: ObjectLocation[] = [];
  let result: T;
  try {
    result = await work(written, stale);
  } catch (err) {
    if (written.length) await s.backend.delete(written).catch(() => {});
    throw err;
  }
  // Files the catalog no longer references (a dropped table, metadata-log entries past the limit);
  // the storage reconciliation removes any this misses.
  if (stale.length) await s.backend.delete(stale).catch(() => {});
  return result;
}

function loadResult(location: string, m: TableMetadata): string {
  return stringifyJson({ 'metadata-location': location, metadata: m as unknown as Json, config: {} });
}

export async function createTable(
  s: CatalogScope,
  warehouse: string,
  namespace: string,
  body: Json,
): Promise<string> {
  const b = asObject(body, 'The body');
  if (typeof b.name !== 'string') throw iceErrors.badRequest('name is required');
  const name = b.name;
  assertResourceName(name, 'table');
  const check = locationChecker(warehouse);
  const location =
    typeof b.location === 'string' && b.location !== ''
      ? b.location.replace(/\/+$/, '')
      : `s3://${warehouse}/${namespace}/${name}`;
  check(location);
  const metadata = newTableMetadata({
    location,
    schema: b.schema,
    spec: b['partition-spec'] ?? b.spec,
    sortOrder: b['write-order'],
    properties: asProperties(b.properties, 'properties'),
  });
  return withFiles(s, (written) =>
    icebergTx(s.project, s.caller, OPERATIONS.ICEBERG_CREATE_TABLE, async (db) => {
      const { bucket, namespace: ns } = await namespaceOf(db, warehouse, namespace, 'share');
      if (await findTable(db, ns.id, name)) throw iceErrors.tableExists();
      // A staged create is committed later with assert-create; nothing is stored until then.
      if (b['stage-create'] === true)
        return stringifyJson({ metadata: metadata as unknown as Json, config: {} });
      const file = await writeMetadata(s, bucket.name, metadata, 0);
      written.push(file.loc);
      const id = await insertTable(db, {
        catalogId: bucket.id,
        namespaceId: ns.id,
        name,
        tableUuid: metadata['table-uuid'],
        location,
        metadataLocation: file.uri,
        metadata: file.text,
      });
      if (!id) throw iceErrors.tableExists();
      await insertMetadataFile(db, id, file.loc);
      return loadResult(file.uri, metadata);
    }),
  );
}

export async function listTablesPage(
  s: CatalogScope,
  warehouse: string,
  namespace: string,
  q: { pageToken?: string; pageSize?: number },
): Promise<unknown> {
  const after = decodePageToken(q.pageToken);
  return icebergTx(s.project, s.caller, OPERATIONS.ICEBERG_LIST_TABLES, async (db) => {
    const { namespace: ns } = await namespaceOf(db, warehouse, namespace);
    const { names, next } = await page(q.pageSize, (limit) => listTables(db, ns.id, after, limit));
    return { identifiers: names.map((n) => ({ namespace: [ns.name], name: n })), 'next-page-token': next };
  });
}

async function tableOf(db: Db, warehouse: string, namespace: string, table: string, lock = false) {
  const { bucket, namespace: ns } = await namespaceOf(db, warehouse, namespace, lock ? 'share' : false);
  const row = await findTable(db, ns.id, table, lock);
  return { bucket, ns, row };
}

const parseMetadata = (text: string) => parseJson(text) as unknown as TableMetadata;

async function tableRow(s: CatalogScope, warehouse: string, namespace: string, table: string) {
  const row = await icebergTx(
    s.project,
    s.caller,
    OPERATIONS.ICEBERG_LOAD_TABLE,
    async (db) => (await tableOf(db, warehouse, namespace, table)).row,
  );
  if (!row) throw iceErrors.noSuchTable();
  return row;
}

export async function loadTable(
  s: CatalogScope,
  warehouse: string,
  namespace: string,
  table: string,
): Promise<string> {
  const row = await tableRow(s, warehouse, namespace, table);
  return loadResult(row.metadata_location, parseMetadata(row.metadata));
}

/** HEAD .../tables/{table}: resolves when the table exists. */
export async function tableExists(
  s: CatalogScope,
  warehouse: string,
  namespace: string,
  table: string,
): Promise<void> {
  await tableRow(s, warehouse, namespace, table);
}

export async function dropTable(
  s: CatalogScope,
  warehouse: string,
  namespace: string,
  table: string,
): Promise<void> {
  await withFiles(s, (_written, stale) =>
    icebergTx(s.project, s.caller, OPERATIONS.ICEBERG_DROP_TABLE, async (db) => {
      const { row } = await tableOf(db, warehouse, namespace, table, true);
      if (!row) throw iceErrors.noSuchTable();
      stale.push(...(await deleteTable(db, row.id)));
    }),
  );
}

/** POST .../tables/{table}: requirements checked, updates applied, a new metadata file stored. */
export async function commitTable(
  s: CatalogScope,
  warehouse: string,
  namespace: string,
  table: string,
  body: Json,
): Promise<string> {
  const b = asObject(body, 'The body');
  if (b.requirements === undefined)
    throw iceErrors.badRequest("body must have required property 'requirements'");
  if (b.updates === undefined) throw iceErrors.badRequest("body must have required property 'updates'");
  const requirements = asArray(b.requirements, 'requirements');
  const updates = asArray(b.updates, 'updates');
  const check = locationChecker(warehouse);
  return withFiles(s, (written, stale) =>
    icebergTx(s.project, s.caller, OPERATIONS.ICEBERG_COMMIT_TABLE, async (db) => {
      const { bucket, ns, row } = await tableOf(db, warehouse, namespace, table, true);
      const current = row ? parseMetadata(row.metadata) : undefined;
      checkRequirements(current, requirements);
      if (!row || !current) {
        // Only the commit of a staged create (assert-create, which held) may make the table.
        if (!requirements.some((r) => isObject(r) && r.type === 'assert-create'))
          throw iceErrors.noSuchTable();
        assertResourceName(table, 'table');
        const base = emptyTableMetadata(`s3://${warehouse}/${namespace}/${table}`);
        const assigned = updates.find((u) => isObject(u) && u.action === 'assign-uuid');
        if (isObject(assigned) && typeof assigned.uuid === 'string' && UUID.test(assigned.uuid))
          base['table-uuid'] = assigned.uuid.toLowerCase();
        const m = applyUpdates(base, updates, check);
        assertComplete(m);
        const file = await writeMetadata(s, bucket.name, m, 0);
        written.push(file.loc);
        const id = await insertTable(db, {
          catalogId: bucket.id,
          namespaceId: ns.id,
          name: table,
          tableUuid: m['table-uuid'],
          location: m.location,
          metadataLocation: file.uri,
          metadata: file.text,
        });
        if (!id) throw iceErrors.commitFailed('Requirement failed: table already exists');
        await insertMetadataFile(db, id, file.loc);
        return loadResult(file.uri, m);
      }
      if (updates.length === 0) return loadResult(row.metadata_location, current);
      const m = applyUpdates(current, updates, check);
      const max = Number(m.properties['write.metadata.previous-versions-max'] ?? PREVIOUS_VERSIONS_MAX);
      const keep = Number.isSafeInteger(max) && max >= 1 ? max : PREVIOUS_VERSIONS_MAX;
      m['metadata-log'] = [
        ...current['metadata-log'],
        { 'timestamp-ms': current['last-updated-ms'], 'metadata-file': row.metadata_location },
      ].slice(-keep);
      const version = row.version + 1;
      const file = await writeMetadata(s, bucket.name, m, version);
      written.push(file.loc);
      await updateTableMetadata(db, row.id, {
        version,
        location: m.location,
        metadataLocation: file.uri,
        metadata: file.text,
      });
      await insertMetadataFile(db, row.id, file.loc);
      const kept = [file.uri, ...m['metadata-log'].map((e) => String(e['metadata-file']))];
      stale.push(
        ...(await pruneMetadataFiles(
          db,
          row.id,
          kept.map((uri) => keyOf(bucket.name, uri)),
        )),
      );
      return loadResult(file.uri, m);
    }),
  );
}

/** The namespace and name of a `TableIdentifier` (one-level namespaces). */
function identifier(v: Json | undefined, what: string): { namespace: string; name: string } {
  const id = asObject(v, what);
  const ns = Array.isArray(id.namespace) && id.namespace.length === 1 ? id.namespace[0] : id.namespace;
  if (typeof ns !== 'string' || typeof id.name !== 'string')
    throw iceErrors.badRequest(`${what} needs a namespace and a name`);
  return { namespace: ns, name: id.name };
}

/** POST /v1/{prefix}/tables/rename: the table keeps its location and metadata files. */
export async function renameTableTo(s: CatalogScope, warehouse: string, body: Json): Promise<void> {
  const b = asObject(body, 'The body');
  const from = identifier(b.source, 'source');
  const to = identifier(b.destination, 'destination');
  assertResourceName(to.name, 'table');
  await icebergTx(s.project, s.caller, OPERATIONS.ICEBERG_RENAME_TABLE, async (db) => {
    const { row } = await tableOf(db, warehouse, from.namespace, from.name, true);
    if (!row) throw iceErrors.noSuchTable();
    const { namespace: target } = await namespaceOf(db, warehouse, to.namespace, 'share');
    if (!(await renameTable(db, row.id, target.id, to.name))) throw iceErrors.tableExists();
  });
}
