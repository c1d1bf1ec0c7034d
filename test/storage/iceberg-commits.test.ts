/**
 * Iceberg table commits (POST /storage/v1/iceberg/v1/{bucket}/namespaces/{ns}/tables/{table}):
 * requirements and updates (64-bit snapshot ids kept exact), the metadata files in the storage
 * backend and the reconciliation keeping them, staged creates, concurrent commits.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileBackend } from '../../src/storage/backend/file.js';
import { reconcileProject } from '../../src/storage/reconcile.js';
import { startStorage, uuid, type StorageHarness } from '../support/storage.js';
import { icebergClient, tablePayload } from './iceberg-support.js';

let h: StorageHarness;
beforeAll(async () => {
  h = await startStorage('file');
});
afterAll(async () => h?.close());

const { ice, warehouse } = icebergClient(() => h);

describe('iceberg commits', () => {
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
});
