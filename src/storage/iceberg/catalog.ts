/**
 * The Iceberg REST catalog of a project's analytics buckets: each bucket is a warehouse (the
 * `{prefix}` of the catalog routes), with one level of namespaces holding tables. This file has
 * the names, the config endpoint and the namespaces; tables.ts has the tables.
 */
import { OPERATIONS } from '../operations.js';
import type { ProjectContext } from '../../platform/project-context.js';
import type { Caller } from '../auth.js';
import type { StorageBackend } from '../backend/interface.js';
import {
  type AnalyticsBucketRow,
  type Db,
  type NamespaceRow,
  deleteNamespace,
  findAnalyticsBucket,
  findNamespace,
  icebergTx,
  listNamespaces,
  namespaceHasTables,
  setNamespaceProperties,
  upsertNamespace,
} from '../database/iceberg.js';
import { iceErrors } from './errors.js';
import { type Json, isObject } from './json.js';
import { asProperties } from './metadata.js';

export interface CatalogScope {
  project: ProjectContext;
  caller: Caller;
  backend: StorageBackend;
}

/**
 * Namespace and table names, as the reference's catalog admits them, but at most 100 characters
 * (the longest path parameter the router matches; the reference allows 255).
 */
const RESOURCE_NAME = /^[a-z0-9](?:[a-z0-9_]{0,98}[a-z0-9])?$/;

export function assertResourceName(name: string, what: string): void {
  if (!RESOURCE_NAME.test(name)) {
    throw iceErrors.badRequest(
      `Invalid ${what} name: use 1 to 100 lowercase letters, digits and underscores, beginning and ending with a letter or digit`,
    );
  }
}

/** Page tokens are the last name of the previous page, base64url-encoded. */
export function decodePageToken(token: string | undefined): string | undefined {
  if (token === undefined || token === '') return undefined;
  const name = Buffer.from(token, 'base64url').toString('utf8');
  if (!RESOURCE_NAME.test(name)) throw iceErrors.badRequest('Invalid pageToken');
  return name;
}

/** One page of names: at most `pageSize` (absent or 0: all), and the token of the next. */
export async function page(
  pageSize: number | undefined,
  fetch: (limit: number | null) => Promise<string[]>,
): Promise<{ names: string[]; next: string | null }> {
  const size = pageSize ? Math.min(pageSize, 1000) : null;
  const names = await fetch(size === null ? null : size + 1);
  if (size === null || names.length <= size) return { names, next: null };
  const shown = names.slice(0, size);
  return { names: shown, next: Buffer.from(shown[size - 1] as string, 'utf8').toString('base64url') };
}

export async function catalogOf(db: Db, warehouse: string): Promise<AnalyticsBucketRow> {
  const bucket = await findAnalyticsBucket(db, warehouse);
  if (!bucket) throw iceErrors.noSuchCatalog(warehouse);
  return bucket;
}

export async function namespaceOf(
  db: Db,
  warehouse: string,
  namespace: string,
  lock: 'update' | 'share' | false = false,
): Promise<{ bucket: AnalyticsBucketRow; namespace: NamespaceRow }> {
  const bucket = await catalogOf(db, warehouse);
  const ns = await findNamespace(db, bucket.id, namespace, lock);
  if (!ns) throw iceErrors.noSuchNamespace();
  return { bucket, namespace: ns };
}

/** The single name of a namespace given as a string or a one-level array. */
function namespaceName(v: Json | undefined): string {
  const name = Array.isArray(v) ? (v.length === 1 ? v[0] : undefined) : v;
  if (Array.isArray(v) && v.length !== 1) throw iceErrors.badRequest('Nested namespaces are not supported');
  if (typeof name !== 'string') throw iceErrors.badRequest('namespace is required');
  assertResourceName(name, 'namespace');
  return name;
}

/** The endpoints this catalog serves, as the config's `endpoints` lists them. */
const ENDPOINTS = [
  'GET /v1/{prefix}/namespaces',
  'POST /v1/{prefix}/namespaces',
  'GET /v1/{prefix}/namespaces/{namespace}',
  'HEAD /v1/{prefix}/namespaces/{namespace}',
  'DELETE /v1/{prefix}/namespaces/{namespace}',
  'POST /v1/{prefix}/namespaces/{namespace}/properties',
  'GET /v1/{prefix}/namespaces/{namespace}/tables',
  'POST /v1/{prefix}/namespaces/{namespace}/tables',
  'GET /v1/{prefix}/namespaces/{namespace}/tables/{table}',
  'HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}',
  'POST /v1/{prefix}/namespaces/{namespace}/tables/{table}',
  'DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}',
  'POST /v1/{prefix}/tables/rename',
];

export async function catalogConfig(s: CatalogScope, warehouse: string): Promise<Record<string, unknown>> {
  const bucket = await icebergTx(s.project, s.caller, OPERATIONS.ICEBERG_GET_CONFIG, (db) =>
    catalogOf(db, warehouse),
  );
  return {
    defaults: {
      prefix: bucket.name,
      'rest-metrics-reporting-enabled': 'false',
      'io-impl': 'org.apache.iceberg.aws.s3.S3FileIO',
      'write.object-storage.enabled': 'true',
      'write.object-storage.partitioned-paths': 'false',
      's3.delete-enabled': 'false',
    },
    overrides: { prefix: bucket.name },
    endpoints: ENDPOINTS,
  };
}

export async function createNamespace(s: CatalogScope, warehouse: string, body: Json): Promise<unknown> {
  if (!isObject(body)) throw iceErrors.badRequest('The body must be an object');
  const name = namespaceName(body.namespace);
  const properties = asProperties(body.properties, 'properties');
  const ns = await icebergTx(s.project, s.caller, OPERATIONS.ICEBERG_CREATE_NAMESPACE, async (db) => {
    const bucket = await catalogOf(db, warehouse);
    return upsertNamespace(db, bucket.id, name, properties);
  });
  return { namespace: [ns.name], properties: ns.metadata };
}

export async function listNamespacesPage(
  s: CatalogScope,
  warehouse: string,
  q: { pageToken?: string; pageSize?: number; parent?: string },
): Promise<unknown> {
  const after = decodePageToken(q.pageToken);
  return icebergTx(s.project, s.caller, OPERATIONS.ICEBERG_LIST_NAMESPACES, async (db) => {
    const bucket = await catalogOf(db, warehouse);
    // One level only: a namespace has no children.
    if (q.parent) return { namespaces: [], 'next-page-token': null };
    const { names, next } = await page(q.pageSize, (limit) => listNamespaces(db, bucket.id, after, limit));
    return { namespaces: names.map((n) => [n]), 'next-page-token': next };
  });
}

export async function loadNamespace(s: CatalogScope, warehouse: string, namespace: string): Promise<unknown> {
  const { namespace: ns } = await icebergTx(s.project, s.caller, OPERATIONS.ICEBERG_LOAD_NAMESPACE, (db) =>
    namespaceOf(db, warehouse, namespace),
  );
  return { namespace: [ns.name], properties: ns.metadata };
}

export async function dropNamespace(s: CatalogScope, warehouse: string, namespace: string): Promise<void> {
  await icebergTx(s.project, s.caller, OPERATIONS.ICEBERG_DROP_NAMESPACE, async (db) => {
    const { namespace: ns } = await namespaceOf(db, warehouse, namespace, 'update');
    if (await namespaceHasTables(db, ns.id)) throw iceErrors.notEmpty('namespace', namespace);
    await deleteNamespace(db, ns.id);
  });
}

/** POST .../namespaces/{namespace}/properties: removals and updates in one step. */
export async function updateNamespaceProperties(
  s: CatalogScope,
  warehouse: string,
  namespace: string,
  body: Json,
): Promise<unknown> {
  if (!isObject(body)) throw iceErrors.badRequest('The body must be an object');
  const updates = asProperties(body.updates, 'updates');
  const removals = body.removals ?? [];
  if (!Array.isArray(removals) || !removals.every((k) => typeof k === 'string'))
    throw iceErrors.badRequest('removals must be an array of strings');
  const both = removals.filter((k) => Object.hasOwn(updates, k));
  if (both.length) throw iceErrors.unprocessable(`Updates and removals share keys: ${both.join(', ')}`);
  return icebergTx(s.project, s.caller, OPERATIONS.ICEBERG_UPDATE_NAMESPACE, async (db) => {
    const { namespace: ns } = await namespaceOf(db, warehouse, namespace, 'update');
    const props: Record<string, string> = { ...ns.metadata };
    const removed: string[] = [];
    const missing: string[] = [];
    for (const k of removals) {
      if (Object.hasOwn(props, k)) {
        delete props[k];
        removed.push(k);
      } else missing.push(k);
    }
    Object.assign(props, updates);
    await setNamespaceProperties(db, ns.id, props);
    return { updated: Object.keys(updates), removed, missing };
  });
}
