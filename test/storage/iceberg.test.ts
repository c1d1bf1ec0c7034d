/**
 * Analytics buckets and the Iceberg REST catalog (/storage/v1/iceberg): the lifecycle of a
 * warehouse, its namespaces and tables; commits with their requirements and updates (64-bit
 * snapshot ids kept exact); the metadata files in the storage backend, kept by the reconciliation;
 * the error shape; only the service role; one project's catalog invisible to another.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileBackend } from '../../src/storage/backend/file.js';
import { reconcileProject } from '../../src/storage/reconcile.js';
import { startStorage, uuid, type StorageHarness } from './harness.js';

let h: StorageHarness;
beforeAll(async () => {
  h = await startStorage('file');
});
afterAll(async () => h?.close());

interface Reply {
  status: number;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: test replies are read loosely
  json: any;
}

async function ice(method: string, path: string, body?: unknown, token?: string | null): Promise<Reply> {
  const init: RequestInit & { token?: string } = { method };
  if (token !== null) init.token = token ?? h.project.serviceRoleKey;
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    init.headers = { 'content-type': 'application/json' };
  }
  const res = await h.api(`/iceberg${path}`, init);
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json };
}

const tablePayload = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  properties: { purpose: 'test' },
  schema: {
    type: 'struct',
    'schema-id': 7,
    'identifier-field-ids': [10],
    fields: [
      { id: 10, name: 'id', required: true, type: 'long' },
      {
        id: 20,
        name: 'tags',
        required: false,
        type: { type: 'list', 'element-id': 30, element: 'string', 'element-required': false },
      },
      { id: 40, name: 'day', required: false, type: 'date' },
    ],
  },
  spec: { 'spec-id': 0, fields: [{ 'source-id': 40, transform: 'identity', name: 'day' }] },
  'write-order': { 'order-id': 0, fields: [] },
  ...extra,
});

const hex = () => uuid().replace(/-/g, '').slice(0, 10);

async function warehouse(): Promise<{ bucket: string; ns: string }> {
  const bucket = `wh-${hex()}`;
  const ns = `ns${hex()}`;
  expect((await ice('POST', '/bucket', { name: bucket })).status).toBe(200);
  expect((await ice('POST', `/v1/${bucket}/namespaces`, { namespace: ns })).status).toBe(200);
  return { bucket, ns };
}

describe('iceberg catalog', () => {
  it('runs a warehouse through its lifecycle', async () => {
    const bucket = `wh-${hex()}`;
    const ns = `ns${hex()}`;
    const created = await ice('POST', '/bucket', { name: bucket });
    expect(created.json).toMatchObject({ id: bucket, name: bucket });
    expect((await ice('POST', '/bucket', { name: bucket })).json.error).toMatchObject({ code: 409 });
    expect((await ice('POST', '/bucket', { name: 'Bad Name' })).status).toBe(400);
    const listed = await ice('GET', `/bucket?search=${bucket}&limit=5&sortColumn=name`);
    expect(listed.json.map((b: { name: string }) => b.name)).toEqual([bucket]);

    const config = await ice('GET', `/v1/config?warehouse=${bucket}`);
    expect(config.json.defaults.prefix).toBe(bucket);
    expect(config.json.overrides.prefix).toBe(bucket);
    expect((await ice('GET', `/v1/config?warehouse=${bucket}-missing`)).json.error.type).toBe(
      'NoSuchCatalog',
    );
    const noCatalog = await ice('GET', `/v1/${bucket}-missing/namespaces/${ns}/tables/t`);
    expect([noCatalog.status, noCatalog.json.error]).toEqual([
      404,
      expect.objectContaining({ code: 404, type: 'NoSuchCatalog' }),
    ]);

    const nsMade = await ice('POST', `/v1/${bucket}/namespaces`, {
      namespace: ns,
      properties: { a: '1', b: 'old' },
    });
    expect(nsMade.json).toEqual({ namespace: [ns], properties: { a: '1', b: 'old' } });
    const head = await ice('HEAD', `/v1/${bucket}/namespaces/${ns}`);
    expect([head.status, head.text]).toEqual([204, '']);
    expect((await ice('HEAD', `/v1/${bucket}/namespaces/nope`)).status).toBe(404);
    expect((await ice('GET', `/v1/${bucket}/namespaces`)).json.namespaces).toEqual([[ns]]);
    const merged = await ice('POST', `/v1/${bucket}/namespaces`, {
      namespace: [ns],
      properties: { b: 'new', c: '3' },
    });
    expect(merged.json.properties).toEqual({ a: '1', b: 'new', c: '3' });
    expect((await ice('GET', `/v1/${bucket}/namespaces/${ns}`)).json.properties).toEqual({
      a: '1',
      b: 'new',
      c: '3',
    });

    const t1 = await ice('POST', `/v1/${bucket}/namespaces/${ns}/tables`, tablePayload('t1'));
    expect(t1.status).toBe(200);
    const m = t1.json.metadata;
    expect(t1.json['metadata-location']).toMatch(
      new RegExp(`^s3://${bucket}/${ns}/t1/metadata/00000-[0-9a-f-]{36}\\.metadata\\.json$`),
    );
    expect(m).toMatchObject({
      'format-version': 2,
      location: `s3://${bucket}/${ns}/t1`,
      'last-sequence-number': 0,
      'last-column-id': 4,
      'current-schema-id': 0,
      'default-spec-id': 0,
      'last-partition-id': 1000,
      'default-sort-order-id': 0,
      properties: { purpose: 'test' },
      snapshots: [],
      'snapshot-log': [],
      'metadata-log': [],
    });
    expect(m['table-uuid']).toMatch(/^[0-9a-f-]{36}$/);
    expect(typeof m['last-updated-ms']).toBe('number');
    // Fresh ids: struct fields first (1..3), then the list element (4); the spec and the
    // identifier fields follow the new ids.
    expect(m.schemas[0]).toMatchObject({ 'schema-id': 0, 'identifier-field-ids': [1] });
    expect(m.schemas[0].fields.map((f: { id: number }) => f.id)).toEqual([1, 2, 3]);
    expect(m.schemas[0].fields[1].type['element-id']).toBe(4);
    expect(m['partition-specs']).toEqual([
      { 'spec-id': 0, fields: [{ 'source-id': 3, transform: 'identity', name: 'day', 'field-id': 1000 }] },
    ]);
    expect(m['sort-orders']).toEqual([{ 'order-id': 0, fields: [] }]);

    expect((await ice('POST', `/v1/${bucket}/namespaces/${ns}/tables`, tablePayload('t2'))).status).toBe(200);
    for (const badName of ['a'.repeat(101), 'Upper', '_x', 'a-b']) {
      const r = await ice('POST', `/v1/${bucket}/namespaces/${ns}/tables`, tablePayload(badName));
      expect([r.status, r.json.error.type]).toEqual([400, 'BadRequestException']);
      expect((await ice('POST', `/v1/${bucket}/namespaces`, { namespace: badName })).status).toBe(400);
    }
    const dup = await ice('POST', `/v1/${bucket}/namespaces/${ns}/tables`, tablePayload('t1'));
    expect([dup.status, dup.json]).toEqual([
      409,
      { error: { code: 409, message: 'Table already exists', type: 'AlreadyExistsException' } },
    ]);
    const all = await ice('GET', `/v1/${bucket}/namespaces/${ns}/tables`);
    expect(all.json.identifiers).toEqual([
      { namespace: [ns], name: 't1' },
      { namespace: [ns], name: 't2' },
    ]);
    const page1 = await ice('GET', `/v1/${bucket}/namespaces/${ns}/tables?pageSize=1`);
    expect(page1.json.identifiers).toEqual([{ namespace: [ns], name: 't1' }]);
    const page2 = await ice(
      'GET',
      `/v1/${bucket}/namespaces/${ns}/tables?pageSize=1&pageToken=${page1.json['next-page-token']}`,
    );
    expect([page2.json.identifiers, page2.json['next-page-token']]).toEqual([
      [{ namespace: [ns], name: 't2' }],
      null,
    ]);

    const loaded = await ice('GET', `/v1/${bucket}/namespaces/${ns}/tables/t1`);
    expect(loaded.json['metadata-location']).toBe(t1.json['metadata-location']);
    const headT = await ice('HEAD', `/v1/${bucket}/namespaces/${ns}/tables/t1`);
    expect([headT.status, headT.text]).toEqual([204, '']);

    const committed = await ice('POST', `/v1/${bucket}/namespaces/${ns}/tables/t1`, {
      requirements: [{ type: 'assert-table-uuid', uuid: m['table-uuid'] }],
      updates: [
        { action: 'set-properties', updates: { k: 'v' } },
        { action: 'remove-properties', removals: ['purpose'] },
      ],
    });
    expect(committed.status).toBe(200);
    expect(committed.json['metadata-location']).toMatch(/\/metadata\/00001-/);
    expect(committed.json.metadata.properties).toEqual({ k: 'v' });
    expect(committed.json.metadata['metadata-log']).toEqual([
      { 'timestamp-ms': m['last-updated-ms'], 'metadata-file': t1.json['metadata-location'] },
    ]);

    const missingNs = await ice('GET', `/v1/${bucket}/namespaces/missing`);
    expect([missingNs.status, missingNs.json]).toEqual([
      404,
      { error: { code: 404, message: 'Namespace not found', type: 'NoSuchNamespaceException' } },
    ]);
    expect((await ice('DELETE', `/v1/${bucket}/namespaces/missing`)).json.error.type).toBe(
      'NoSuchNamespaceException',
    );
    const missingT = await ice('DELETE', `/v1/${bucket}/namespaces/${ns}/tables/missing`);
    expect([missingT.status, missingT.json]).toEqual([
      404,
      { error: { code: 404, message: 'Table not found', type: 'NoSuchTableException' } },
    ]);

    const notEmpty = await ice('DELETE', `/v1/${bucket}/namespaces/${ns}`);
    expect([notEmpty.status, notEmpty.json.error.type]).toEqual([400, 'IcebergResourceNotEmpty']);
    const bucketNotEmpty = await ice('DELETE', `/bucket/${bucket}`);
    expect([bucketNotEmpty.status, bucketNotEmpty.json.error.type]).toEqual([400, 'IcebergResourceNotEmpty']);

    for (const t of ['t1', 't2'])
      expect((await ice('DELETE', `/v1/${bucket}/namespaces/${ns}/tables/${t}`)).status).toBe(204);
    expect((await ice('GET', `/v1/${bucket}/namespaces/${ns}/tables/t1`)).status).toBe(404);
    expect((await ice('DELETE', `/v1/${bucket}/namespaces/${ns}`)).status).toBe(204);
    expect((await ice('DELETE', `/bucket/${bucket}`)).json).toEqual({ message: 'Successfully deleted' });
    expect((await ice('DELETE', `/bucket/${bucket}`)).status).toBe(404);
    // The dropped tables' metadata files are gone from the backend too.
    expect((await h.storedKeys()).filter((k) => k.includes(`${bucket}--table-s3`))).toEqual([]);
  });

  it('checks commit requirements and applies schema, spec, order and snapshot updates', async () => {
    const { bucket, ns } = await warehouse();
    const path = `/v1/${bucket}/namespaces/${ns}/tables/t`;
    const made = await ice('POST', `/v1/${bucket}/namespaces/${ns}/tables`, tablePayload('t'));
    const uuidOf = made.json.metadata['table-uuid'];
    const commit = (requirements: unknown[], updates: unknown[]) =>
      ice('POST', path, { requirements, updates });
    const prop = [{ action: 'set-properties', updates: { x: '1' } }];

    for (const [requirement, type] of [
      [{ type: 'assert-create' }, 'CommitFailedException'],
      [{ type: 'assert-table-uuid', uuid: uuid() }, 'CommitFailedException'],
      [{ type: 'assert-current-schema-id', 'current-schema-id': 999_999 }, 'CommitFailedException'],
      [{ type: 'assert-last-assigned-field-id', 'last-assigned-field-id': 3 }, 'CommitFailedException'],
      [
        { type: 'assert-last-assigned-partition-id', 'last-assigned-partition-id': 999 },
        'CommitFailedException',
      ],
      [{ type: 'assert-default-spec-id', 'default-spec-id': 1 }, 'CommitFailedException'],
      [{ type: 'assert-default-sort-order-id', 'default-sort-order-id': 1 }, 'CommitFailedException'],
      [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': 1 }, 'CommitFailedException'],
      [{ type: 'assert-something' }, 'BadRequestException'],
    ] as const) {
      const r = await commit([requirement], prop);
      expect([r.status, r.json.error.type], JSON.stringify(requirement)).toEqual([
        type === 'CommitFailedException' ? 409 : 400,
        type,
      ]);
    }
    const bad = await commit([], [{ action: 'rename-everything' }]);
    expect([bad.status, bad.json.error.type]).toEqual([400, 'BadRequestException']);
    expect((await commit([], [{ action: 'set-location', location: 's3://elsewhere/x' }])).status).toBe(400);
    for (const hostile of [
      '{"requirements": [',
      '['.repeat(100_000),
      '{"updates": [{"action": "set-properties", "updates": {"k": "\\u0000"}}]}',
    ]) {
      const r = await ice('POST', path, hostile);
      expect([r.status, r.json.error.type]).toEqual([400, 'BadRequestException']);
    }
    const proto = await ice(
      'POST',
      path,
      '{"requirements":[],"updates":[{"action":"set-properties","updates":{"__proto__":"x"}}]}',
    );
    expect(proto.json.metadata.properties).toEqual({ purpose: 'test', ['__proto__']: 'x' });
    await commit([], [{ action: 'remove-properties', removals: ['__proto__'] }]);

    const schema = {
      type: 'struct',
      fields: [
        ...made.json.metadata.schemas[0].fields,
        { id: 5, name: 'note', required: false, type: 'string' },
      ],
    };
    const evolved = await commit(
      [
        { type: 'assert-table-uuid', uuid: uuidOf },
        { type: 'assert-current-schema-id', 'current-schema-id': 0 },
        { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': 4 },
        { type: 'assert-last-assigned-partition-id', 'last-assigned-partition-id': 1000 },
        { type: 'assert-default-spec-id', 'default-spec-id': 0 },
        { type: 'assert-default-sort-order-id', 'default-sort-order-id': 0 },
        { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': null },
      ],
      [
        { action: 'add-schema', schema },
        { action: 'set-current-schema', 'schema-id': -1 },
        {
          action: 'add-spec',
          spec: { fields: [{ 'source-id': 1, transform: 'bucket[4]', name: 'id_bucket' }] },
        },
        { action: 'set-default-spec', 'spec-id': -1 },
        {
          action: 'add-sort-order',
          'sort-order': {
            'order-id': 5,
            fields: [
              { 'source-id': 1, transform: 'identity', direction: 'asc', 'null-order': 'nulls-first' },
            ],
          },
        },
        { action: 'set-default-sort-order', 'sort-order-id': -1 },
        { action: 'upgrade-format-version', 'format-version': 2 },
        { action: 'assign-uuid', uuid: uuidOf },
      ],
    );
    expect(evolved.status).toBe(200);
    expect(evolved.json.metadata).toMatchObject({
      'current-schema-id': 1,
      'last-column-id': 5,
      'default-spec-id': 1,
      'last-partition-id': 1001,
      'default-sort-order-id': 1,
    });
    expect(evolved.json.metadata['partition-specs'][1].fields[0]['field-id']).toBe(1001);

    // A 64-bit snapshot id beyond 2^53 goes in and comes back digit for digit.
    const big = '1234567890123456789';
    const snapshot = `{"snapshot-id":${big},"sequence-number":1,"timestamp-ms":${Date.now()},"manifest-list":"s3://${bucket}/${ns}/t/metadata/snap-1.avro","summary":{"operation":"append"},"schema-id":1}`;
    const withSnapshot = await ice(
      'POST',
      path,
      `{"requirements":[{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":null}],"updates":[{"action":"add-snapshot","snapshot":${snapshot}},{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":${big}}]}`,
    );
    expect(withSnapshot.status).toBe(200);
    expect(withSnapshot.text).toContain(`"current-snapshot-id":${big}`);
    expect(withSnapshot.text).toContain(`"refs":{"main":{"snapshot-id":${big},"type":"branch"}}`);
    expect(withSnapshot.json.metadata['last-sequence-number']).toBe(1);
    const loaded = await ice('GET', path);
    expect(loaded.text).toContain(`"snapshot-id":${big}`);
    // One digit off (as a rounding parser would make it): a conflict.
    const stale = await ice(
      'POST',
      path,
      `{"requirements":[{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":1234567890123456788}],"updates":[]}`,
    );
    expect(stale.status).toBe(409);
    const current = await ice(
      'POST',
      path,
      `{"requirements":[{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":${big}}],"updates":[{"action":"remove-snapshots","snapshot-ids":[${big}]}]}`,
    );
    expect(current.status).toBe(200);
    expect(current.json.metadata).toMatchObject({ 'current-snapshot-id': -1, refs: {}, snapshots: [] });
  });

  it('writes each metadata version to the backend, where the reconciliation keeps it', async () => {
    const { bucket, ns } = await warehouse();
    const made = await ice('POST', `/v1/${bucket}/namespaces/${ns}/tables`, tablePayload('files'));
    const next = await ice('POST', `/v1/${bucket}/namespaces/${ns}/tables/files`, {
      requirements: [],
      updates: [{ action: 'set-properties', updates: { v: '2' } }],
    });
    const files = (await h.storedKeys()).filter((k) => k.includes(`${bucket}--table-s3`)).sort();
    expect(files).toHaveLength(2);
    const root = join(h.project.filesDir, 'storage');
    const newest = files.find((f) => f.includes('/00001-')) as string;
    expect(newest).toContain(`${bucket}--table-s3/${ns}/files/metadata/`);
    expect(JSON.parse(await readFile(join(root, newest), 'utf8'))).toEqual(next.json.metadata);
    expect(next.json['metadata-location']).toBe(
      `s3://${bucket}/${newest.slice(newest.indexOf(`${ns}/`)).replace(/\/~[0-9a-f-]+$/, '')}`,
    );
    void made;

    const backend = new FileBackend(root, { fsync: false, eTag: 'md5' });
    await reconcileProject(h.project, backend, 0, Date.now() + 60_000);
    expect((await h.storedKeys()).filter((k) => k.includes(`${bucket}--table-s3`)).sort()).toEqual(files);
  });

  it('commits a staged create (stage-create, then assert-create)', async () => {
    const { bucket, ns } = await warehouse();
    const staged = await ice(
      'POST',
      `/v1/${bucket}/namespaces/${ns}/tables`,
      tablePayload('staged', { 'stage-create': true }),
    );
    expect(staged.status).toBe(200);
    expect(staged.json['metadata-location']).toBeUndefined();
    expect((await ice('GET', `/v1/${bucket}/namespaces/${ns}/tables/staged`)).status).toBe(404);
    const sm = staged.json.metadata;
    const created = await ice('POST', `/v1/${bucket}/namespaces/${ns}/tables/staged`, {
      requirements: [{ type: 'assert-create' }],
      updates: [
        { action: 'assign-uuid', uuid: sm['table-uuid'] },
        { action: 'upgrade-format-version', 'format-version': 2 },
        { action: 'add-schema', schema: sm.schemas[0] },
        { action: 'set-current-schema', 'schema-id': -1 },
        { action: 'add-spec', spec: sm['partition-specs'][0] },
        { action: 'set-default-spec', 'spec-id': -1 },
        { action: 'add-sort-order', 'sort-order': sm['sort-orders'][0] },
        { action: 'set-default-sort-order', 'sort-order-id': -1 },
        { action: 'set-location', location: sm.location },
        { action: 'set-properties', updates: sm.properties },
      ],
    });
    expect(created.status).toBe(200);
    expect(created.json.metadata).toMatchObject({
      'table-uuid': sm['table-uuid'],
      'current-schema-id': 0,
      'last-column-id': 4,
      location: sm.location,
    });
    const badUuid = await ice('POST', `/v1/${bucket}/namespaces/${ns}/tables/other`, {
      requirements: [{ type: 'assert-create' }],
      updates: [{ action: 'assign-uuid', uuid: 'not-a-uuid' }],
    });
    expect([badUuid.status, badUuid.json.error.type]).toEqual([400, 'BadRequestException']);
    // Without assert-create, a commit to a table that does not exist makes nothing.
    const plain = await ice('POST', `/v1/${bucket}/namespaces/${ns}/tables/never`, {
      requirements: [],
      updates: [],
    });
    expect([plain.status, plain.json.error.type]).toEqual([404, 'NoSuchTableException']);
    const again = await ice('POST', `/v1/${bucket}/namespaces/${ns}/tables/staged`, {
      requirements: [{ type: 'assert-create' }],
      updates: [],
    });
    expect([again.status, again.json.error.type]).toEqual([409, 'CommitFailedException']);
  });

  it('serializes concurrent commits to one table', async () => {
    const { bucket, ns } = await warehouse();
    const path = `/v1/${bucket}/namespaces/${ns}/tables/busy`;
    const made = await ice('POST', `/v1/${bucket}/namespaces/${ns}/tables`, tablePayload('busy'));
    const uuidOf = made.json.metadata['table-uuid'];
    const results = await Promise.all(
      [0, 1, 2, 3, 4].map((i) =>
        ice('POST', path, {
          requirements: [{ type: 'assert-table-uuid', uuid: uuidOf }],
          updates: [{ action: 'set-properties', updates: { [`k${i}`]: String(i) } }],
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const final = await ice('GET', path);
    expect(final.json['metadata-location']).toMatch(/\/metadata\/00005-/);
    expect(final.json.metadata.properties).toEqual({
      purpose: 'test',
      k0: '0',
      k1: '1',
      k2: '2',
      k3: '3',
      k4: '4',
    });
    expect(final.json.metadata['metadata-log']).toHaveLength(5);
    // Two writers that read the same snapshot state: the second one's requirement fails.
    const base = [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': null }];
    const snap = (id: number, seq: number) => [
      {
        action: 'add-snapshot',
        snapshot: {
          'snapshot-id': id,
          'sequence-number': seq,
          'timestamp-ms': Date.now(),
          'manifest-list': 'm',
          summary: { operation: 'append' },
        },
      },
      { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': id },
    ];
    const raced = await Promise.all([
      ice('POST', path, { requirements: base, updates: snap(1, 1) }),
      ice('POST', path, { requirements: base, updates: snap(2, 1) }),
    ]);
    expect(raced.map((r) => r.status).sort()).toEqual([200, 409]);
  });

  it('updates namespace properties and renames tables', async () => {
    const { bucket, ns } = await warehouse();
    const props = `/v1/${bucket}/namespaces/${ns}/properties`;
    await ice('POST', props, { updates: { a: '1', b: '2' } });
    const changed = await ice('POST', props, { removals: ['a', 'zz'], updates: { c: '3' } });
    expect(changed.json).toEqual({ updated: ['c'], removed: ['a'], missing: ['zz'] });
    expect((await ice('GET', `/v1/${bucket}/namespaces/${ns}`)).json.properties).toEqual({ b: '2', c: '3' });
    const clash = await ice('POST', props, { removals: ['b'], updates: { b: 'x' } });
    expect([clash.status, clash.json.error.type]).toEqual([422, 'UnprocessableEntityException']);

    const other = `ns${hex()}`;
    await ice('POST', `/v1/${bucket}/namespaces`, { namespace: other });
    for (const t of ['r1', 'r2']) await ice('POST', `/v1/${bucket}/namespaces/${ns}/tables`, tablePayload(t));
    const rename = (from: string, toNs: string, to: string) =>
      ice('POST', `/v1/${bucket}/tables/rename`, {
        source: { namespace: [ns], name: from },
        destination: { namespace: [toNs], name: to },
      });
    expect((await rename('r1', ns, 'r2')).json.error.type).toBe('AlreadyExistsException');
    expect((await rename('nope', ns, 'r3')).json.error.type).toBe('NoSuchTableException');
    expect((await rename('r1', 'nons', 'r3')).json.error.type).toBe('NoSuchNamespaceException');
    expect((await rename('r1', other, 'moved')).status).toBe(204);
    expect((await ice('GET', `/v1/${bucket}/namespaces/${ns}/tables/r1`)).status).toBe(404);
    const moved = await ice('GET', `/v1/${bucket}/namespaces/${other}/tables/moved`);
    expect(moved.json.metadata.location).toBe(`s3://${bucket}/${ns}/r1`);
  });

  it("works with storage-js's analytics client (iceberg-js)", async () => {
    const analytics = h.service.analytics;
    const bucket = `wh-${hex()}`;
    expect((await analytics.createBucket(bucket)).error).toBeNull();
    expect((await analytics.listBuckets({ search: bucket })).data?.map((b) => b.name)).toEqual([bucket]);
    const catalog = analytics.from(bucket);
    expect(
      (await catalog.createNamespace({ namespace: ['sales'] }, { properties: { o: 'x' } })).error,
    ).toBeNull();
    expect((await catalog.namespaceExists({ namespace: ['sales'] })).data).toBe(true);
    const made = await catalog.createTable(
      { namespace: ['sales'] },
      {
        name: 'orders',
        schema: {
          type: 'struct',
          fields: [
            { id: 1, name: 'id', type: 'long', required: true },
            { id: 2, name: 'at', type: 'timestamp', required: false },
          ],
          'schema-id': 0,
          'identifier-field-ids': [1],
        },
        // The REST spec's field names (iceberg-js's types spell them source_id, field_id).
        'partition-spec': {
          'spec-id': 0,
          fields: [{ 'source-id': 2, 'field-id': 1000, name: 'at_day', transform: 'day' }],
        } as never,
        'write-order': { 'order-id': 0, fields: [] },
      },
    );
    expect(made.error).toBeNull();
    expect(made.data?.['partition-specs'][0]?.fields[0]).toMatchObject({ name: 'at_day', transform: 'day' });
    expect((await catalog.listTables({ namespace: ['sales'] })).data).toEqual([
      { namespace: ['sales'], name: 'orders' },
    ]);
    // A CommitTableRequest (iceberg-js types another shape, which a REST catalog refuses: 400).
    const updated = await catalog.updateTable({ namespace: ['sales'], name: 'orders' }, {
      requirements: [],
      updates: [{ action: 'set-properties', updates: { owner: 'me' } }],
    } as never);
    expect(updated.data?.metadata.properties).toEqual({ owner: 'me' });
    expect((await catalog.loadTable({ namespace: ['sales'], name: 'orders' })).data?.properties).toEqual({
      owner: 'me',
    });
    const typed = await catalog.updateTable(
      { namespace: ['sales'], name: 'orders' },
      { properties: { a: 'b' } },
    );
    expect(typed.error).toMatchObject({ status: 400, icebergType: 'BadRequestException' });
    expect((await catalog.tableExists({ namespace: ['sales'], name: 'gone' })).data).toBe(false);
    expect((await catalog.dropTable({ namespace: ['sales'], name: 'orders' })).error).toBeNull();
    expect((await catalog.dropNamespace({ namespace: ['sales'] })).error).toBeNull();
    expect((await analytics.deleteBucket(bucket)).error).toBeNull();
  });

  it('admits only the service role', async () => {
    const { bucket } = await warehouse();
    const user = await h.userToken(uuid());
    for (const token of [h.project.anonKey, user]) {
      const r = await ice('GET', `/v1/config?warehouse=${bucket}`, undefined, token);
      expect([r.status, r.json]).toEqual([
        403,
        { error: { code: 403, message: 'Access denied: Invalid role', type: 'AccessDenied' } },
      ]);
      expect((await ice('POST', '/bucket', { name: `wh-${hex()}` }, token)).status).toBe(403);
    }
    const none = await ice('GET', '/bucket', undefined, null);
    expect([none.status, none.json.error.type]).toEqual([403, 'AccessDenied']);
    const forged = await ice('GET', '/bucket', undefined, `${h.project.serviceRoleKey}x`);
    expect([forged.status, forged.json.error.code]).toEqual([403, 403]);
  });

  it("keeps one project's catalog from another", async () => {
    const { bucket, ns } = await warehouse();
    const other = await h.tp.platform.createProject({ name: `ice-${hex()}`, organizationId: 'default-org' });
    const res = await fetch(
      `${h.tp.url}/project/${other.ref}/storage/v1/iceberg/v1/${bucket}/namespaces/${ns}`,
      {
        headers: { authorization: `Bearer ${other.serviceRoleKey}` },
      },
    );
    expect([res.status, ((await res.json()) as { error: { type: string } }).error.type]).toEqual([
      404,
      'NoSuchCatalog',
    ]);
    const list = await fetch(`${h.tp.url}/project/${other.ref}/storage/v1/iceberg/bucket`, {
      headers: { authorization: `Bearer ${other.serviceRoleKey}` },
    });
    expect(await list.json()).toEqual([]);
    const crossed = await fetch(`${h.tp.url}/project/${other.ref}/storage/v1/iceberg/bucket`, {
      headers: { authorization: `Bearer ${h.project.serviceRoleKey}` },
    });
    expect(crossed.status).toBe(403);
  });
});
