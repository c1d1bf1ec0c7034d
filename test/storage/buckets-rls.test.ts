/** Buckets (the /bucket routes) and row-level security on storage.buckets and storage.objects, as the three callers. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStorage, bucketName, uuid, type StorageHarness } from '../support/storage.js';

let h: StorageHarness;
beforeAll(async () => {
  h = await startStorage('file');
});
afterAll(async () => h?.close());

describe('buckets as service_role', () => {
  it('creates, lists, gets, updates, empties and deletes', async () => {
    const b = bucketName('bk');
    const created = await h.service.createBucket(b, {
      public: true,
      fileSizeLimit: '5MB',
      allowedMimeTypes: ['image/*'],
    });
    expect(created).toEqual({ data: { name: b }, error: null });
    const got = await h.service.getBucket(b);
    expect(got.data).toMatchObject({
      id: b,
      name: b,
      owner: '',
      public: true,
      file_size_limit: 5_000_000,
      allowed_mime_types: ['image/*'],
    });
    expect(got.data).not.toHaveProperty('type');
    const list = await h.service.listBuckets({ search: b.slice(0, 8).toUpperCase() });
    expect(list.data!.find((x) => x.id === b)).toMatchObject({
      type: 'STANDARD',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*\.\d{3}Z$/),
    });
    expect(
      (await h.service.updateBucket(b, { public: false, fileSizeLimit: null, allowedMimeTypes: null })).data,
    ).toEqual({ message: 'Successfully updated' });
    expect((await h.service.getBucket(b)).data).toMatchObject({
      public: false,
      file_size_limit: null,
      allowed_mime_types: null,
    });
    await h.service.from(b).upload('x.txt', 'x');
    const notEmpty = await h.service.deleteBucket(b);
    expect(notEmpty.error).toMatchObject({
      statusCode: '409',
      message: 'The bucket you tried to delete is not empty',
    });
    expect((await h.service.emptyBucket(b)).data).toEqual({
      message: 'Empty bucket has been queued. Completion may take up to an hour.',
    });
    expect((await h.service.from(b).list()).data).toEqual([]);
    expect((await h.storedKeys()).filter((k) => k.includes(`${b}/`))).toEqual([]);
    expect((await h.service.deleteBucket(b)).data).toEqual({ message: 'Successfully deleted' });
    expect((await h.service.getBucket(b)).error).toMatchObject({
      statusCode: '404',
      message: 'Bucket not found',
    });
  });

  it('lists with limit, offset, sort and a literal search', async () => {
    const tag = uuid().slice(0, 6);
    for (const n of ['c', 'a', 'b']) await h.service.createBucket(`ls_${tag}_${n}`);
    const asc = await h.service.listBuckets({ search: `ls_${tag}`, sortColumn: 'name', sortOrder: 'asc' });
    expect(asc.data!.map((x) => x.name)).toEqual(['a', 'b', 'c'].map((n) => `ls_${tag}_${n}`));
    const page = await h.service.listBuckets({
      search: `ls_${tag}`,
      sortColumn: 'name',
      sortOrder: 'desc',
      limit: 1,
      offset: 1,
    });
    expect(page.data!.map((x) => x.name)).toEqual([`ls_${tag}_b`]);
    expect((await h.service.listBuckets({ search: `ls%${tag}` })).data).toEqual([]);
  });

  it('parses file size strings (decimal units, 3 significant digits)', async () => {
    const cases: Array<[string | number, number]> = [
      ['1kb', 1000],
      ['1.5MB', 1_500_000],
      ['1234MB', 1_230_000_000],
      [42, 42],
      ['7B', 7],
    ];
    for (const [input, bytes] of cases) {
      const b = bucketName('sz');
      expect((await h.service.createBucket(b, { public: false, fileSizeLimit: input })).error).toBeNull();
      expect((await h.service.getBucket(b)).data!.file_size_limit).toBe(bytes);
    }
  });
});

describe('row-level security', () => {
  const alice = uuid();
  const bob = uuid();
  let b: string;

  beforeAll(async () => {
    b = bucketName('rls');
    await h.service.createBucket(b);
    // The usual "a user sees only their own folder" policies.
    for (const [op, clause] of [
      ['select', `using (bucket_id = '${b}' and (storage.foldername(name))[1] = auth.uid()::text)`],
      ['insert', `with check (bucket_id = '${b}' and (storage.foldername(name))[1] = auth.uid()::text)`],
      ['update', `using (bucket_id = '${b}' and (storage.foldername(name))[1] = auth.uid()::text)`],
      ['delete', `using (bucket_id = '${b}' and (storage.foldername(name))[1] = auth.uid()::text)`],
    ]) {
      await h.sql(`create policy "own ${op} ${b}" on storage.objects for ${op} to authenticated ${clause}`);
    }
    await h.sql(`create policy "see buckets" on storage.buckets for select to authenticated using (true)`);
    await h.sql(
      `create policy "make buckets" on storage.buckets for insert to authenticated with check (owner_id = auth.uid()::text)`,
    );
    await h.sql(
      `create policy "own buckets update" on storage.buckets for update to authenticated using (owner_id = auth.uid()::text)`,
    );
    await h.sql(
      `create policy "own buckets delete" on storage.buckets for delete to authenticated using (owner_id = auth.uid()::text)`,
    );
  });

  it('a user reads and writes only their own folder', async () => {
    const a = (await h.user(alice)).from(b);
    const u = (await h.user(bob)).from(b);
    expect((await a.upload(`${alice}/doc.txt`, 'alice')).error).toBeNull();
    expect((await u.upload(`${bob}/doc.txt`, 'bob')).error).toBeNull();
    const denied = await a.upload(`${bob}/evil.txt`, 'x');
    expect(denied.error).toMatchObject({
      statusCode: '403',
      message: 'new row violates row-level security policy',
    });
    expect(await (await a.download(`${alice}/doc.txt`)).data!.text()).toBe('alice');
    expect((await a.download(`${bob}/doc.txt`)).error).not.toBeNull();
    expect((await a.info(`${bob}/doc.txt`)).error).toMatchObject({
      statusCode: '404',
      message: 'Object not found',
    });
    expect((await a.list()).data!.map((e) => e.name)).toEqual([alice]);
    expect((await a.list(alice)).data!.map((e) => e.name)).toEqual(['doc.txt']);
    expect((await a.list(bob)).data).toEqual([]);
    expect((await a.createSignedUrl(`${bob}/doc.txt`, 60)).error).toMatchObject({ statusCode: '404' });
    const urls = await a.createSignedUrls([`${alice}/doc.txt`, `${bob}/doc.txt`], 60);
    expect(urls.data!.map((x) => x.error === null)).toEqual([true, false]);
    expect((await a.remove([`${bob}/doc.txt`])).data).toEqual([]);
    const del = await h.api(`/object/${b}/${bob}/doc.txt`, {
      method: 'DELETE',
      token: await h.userToken(alice),
    });
    expect(await del.json()).toEqual({
      statusCode: '403',
      error: 'Unauthorized',
      message: 'Access denied',
      code: 'AccessDenied',
    });
    expect((await a.move(`${bob}/doc.txt`, `${alice}/stolen.txt`)).error).toMatchObject({
      statusCode: '404',
    });
    expect((await a.copy(`${alice}/doc.txt`, `${bob}/planted.txt`)).error).toMatchObject({
      statusCode: '403',
    });
    expect((await a.move(`${alice}/doc.txt`, `${bob}/planted.txt`)).error).toMatchObject({
      statusCode: '403',
    });
    expect((await a.copy(`${alice}/doc.txt`, `${alice}/copy.txt`)).error).toBeNull();
    expect((await a.move(`${alice}/copy.txt`, `${alice}/moved.txt`)).error).toBeNull();
    expect((await a.update(`${alice}/doc.txt`, 'alice v2')).error).toBeNull();
    expect((await a.upload(`${alice}/doc.txt`, 'alice v3', { upsert: true })).error).toBeNull();
    const rows = await h.sql<{ owner: string; owner_id: string }>(
      'select owner, owner_id from storage.objects where bucket_id = $1 and name = $2',
      [b, `${alice}/doc.txt`],
    );
    expect(rows[0]).toEqual({ owner: alice, owner_id: alice });
    expect((await a.remove([`${alice}/moved.txt`])).data!.map((r) => r.name)).toEqual([`${alice}/moved.txt`]);
    // The service role sees everything.
    expect((await h.service.from(b).list()).data!.map((e) => e.name).sort()).toEqual([alice, bob].sort());
  });

  it('anon sees nothing in a private bucket but reads a public one', async () => {
    const anon = h.anon.from(b);
    expect((await anon.list()).data).toEqual([]);
    expect((await anon.download(`${alice}/doc.txt`)).error).not.toBeNull();
    expect((await anon.upload('anon.txt', 'x')).error).toMatchObject({ statusCode: '403' });
    expect((await h.anon.listBuckets()).data).toEqual([]);
    expect((await h.anon.createBucket(bucketName())).error).toMatchObject({ statusCode: '403' });
    const pub = bucketName('pub');
    await h.service.createBucket(pub, { public: true });
    await h.service.from(pub).upload('p.txt', 'public bytes');
    expect(await (await h.anon.from(pub).download('p.txt')).data!.text()).toBe('public bytes');
    expect((await fetch(h.anon.from(pub).getPublicUrl('p.txt').data.publicUrl)).status).toBe(200);
    expect((await fetch(h.anon.from(b).getPublicUrl(`${alice}/doc.txt`).data.publicUrl)).status).toBe(400);
    const info = await h.api(`/object/info/public/${pub}/p.txt`);
    expect(await info.json()).toMatchObject({ name: 'p.txt', size: 12 });
  });

  it('bucket policies decide who creates, updates and deletes buckets', async () => {
    const a = await h.user(alice);
    const mine = bucketName('mine');
    expect((await a.createBucket(mine)).error).toBeNull();
    expect((await a.getBucket(mine)).data).toMatchObject({ owner: alice });
    const u = await h.user(bob);
    expect((await u.updateBucket(mine, { public: true })).error).toMatchObject({ statusCode: '404' });
    expect((await u.deleteBucket(mine)).error).toMatchObject({ statusCode: '404' });
    expect((await a.updateBucket(mine, { public: true })).error).toBeNull();
    expect((await a.emptyBucket(mine)).error).toMatchObject({
      status: 403,
      message: 'Access denied: Invalid role',
    });
    expect((await a.deleteBucket(mine)).error).toBeNull();
  });

  it('operation-scoped policies see storage.operation()', async () => {
    const b2 = bucketName('op');
    await h.service.createBucket(b2);
    await h.service.from(b2).upload(`${alice}/x.txt`, 'x');
    await h.sql(
      `create policy "list only ${b2}" on storage.objects for select to authenticated using (bucket_id = '${b2}' and storage.allow_only_operation('object.list'))`,
    );
    const a = (await h.user(alice)).from(b2);
    expect((await a.list(alice)).data!.map((e) => e.name)).toEqual(['x.txt']);
    expect((await a.info(`${alice}/x.txt`)).error).toMatchObject({ statusCode: '404' });
  });

  it('an INSERT-only policy is enough to upload (a drop box), but not to overwrite or read', async () => {
    const box = bucketName('box');
    await h.service.createBucket(box);
    await h.sql(
      `create policy "drop box ${box}" on storage.objects for insert to authenticated with check (bucket_id = '${box}')`,
    );
    const a = (await h.user(alice)).from(box);
    const up = await a.upload('letter.txt', 'sealed');
    expect(up.error).toBeNull();
    expect(up.data!.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(
      (await h.sql<{ id: string }>('select id from storage.objects where bucket_id = $1', [box]))[0]!.id,
    ).toBe(up.data!.id);
    expect((await a.upload('letter.txt', 'again')).error).toMatchObject({ statusCode: '409' });
    expect((await a.upload('letter.txt', 'again', { upsert: true })).error).toMatchObject({
      statusCode: '403',
    });
    expect((await a.download('letter.txt')).error).not.toBeNull();
    expect((await a.createSignedUploadUrl('second.txt')).error).toBeNull();
    expect(await (await h.service.from(box).download('letter.txt')).data!.text()).toBe('sealed');
  });

  it('refuses deleting rows in plain SQL (the delete guard)', async () => {
    await expect(h.sql('delete from storage.objects')).rejects.toThrow(
      /Direct deletion from storage tables is not allowed/,
    );
  });
});
