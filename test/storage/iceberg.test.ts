/**
 * Analytics buckets and the Iceberg REST catalog (/storage/v1/iceberg): the lifecycle of a
 * warehouse, its namespaces and tables; the error shape; namespace properties and renames;
 * storage-js's analytics client; only the service role; one project's catalog invisible to another.
 * Commits: iceberg-commits.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStorage, uuid, type StorageHarness } from '../support/storage.js';
import { hex, icebergClient, tablePayload } from './iceberg-support.js';

let h: StorageHarness;
beforeAll(async () => {
  h = await startStorage('file');
});
afterAll(async () => h?.close());

const { ice, warehouse } = icebergClient(() => h);

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
