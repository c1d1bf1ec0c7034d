/**
 * A full disk under the file backend (issue 29 item 7): the storage folder of the project is a
 * real 256 KiB tmpfs, so writes fail with the kernel's ENOSPC — no mock anywhere. An upload, a copy,
 * an S3 PutObject and a TUS PATCH that do not fit are each answered with a clear 507 in their API's
 * shape (was a bare 500 InternalError), nothing is left behind, and the server goes on answering.
 * Mounting needs root: the file is skipped elsewhere.
 */
import { execFileSync } from 'node:child_process';
import { Agent, request } from 'node:http';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketName } from '../support/storage.js';
import { s3Error, useS3Platform } from './s3-support.js';

function canMount(): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('mount', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const env = useS3Platform();
let root: string;
let mounted = false;
const bucket = bucketName('full');

function filesUnder(dir: string): string[] {
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[])
    .filter((f) => f.isFile())
    .map((f) => join(f.parentPath, f.name));
}

describe.skipIf(!canMount())('a full disk under the file backend', () => {
  beforeAll(async () => {
    const { h } = env;
    root = join(h.project.filesDir, 'storage');
    mkdirSync(root, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', root]);
    mounted = true;
    await env.s3.send(new CreateBucketCommand({ Bucket: bucket }));
  });

  afterAll(() => {
    if (mounted) execFileSync('umount', ['-l', root]);
  });

  const svc = () => env.h.project.serviceRoleKey;
  const upload = (key: string, size: number) =>
    env.h.api(`/object/${bucket}/${key}`, {
      method: 'POST',
      token: svc(),
      headers: { 'content-type': 'application/octet-stream' },
      body: new Uint8Array(size).fill(7),
    });

  it('REST upload: 507 InsufficientStorage in the storage envelope, no row, no partial file', async () => {
    const res = await upload('big.bin', 1024 * 1024);
    expect(res.status).toBe(507);
    expect(await res.json()).toEqual({
      statusCode: '507',
      error: 'Insufficient Storage',
      code: 'InsufficientStorage',
      message: 'There is not enough space left on the storage backend to store the object',
    });
    expect(await env.h.sql('select name from storage.objects where bucket_id = $1', [bucket])).toEqual([]);
    expect(filesUnder(root)).toEqual([]);
    // The server goes on: what fits is stored.
    expect((await upload('small.bin', 1000)).status).toBe(200);
  });

  it('the failed upload says Connection: close (its body was cut off), not keep-alive', async () => {
    const url = new URL(`${env.h.base}/object/${bucket}/cut.bin`);
    const { status, connection } = await new Promise<{ status?: number; connection?: string }>(
      (resolve, reject) => {
        const req = request(
          url,
          {
            method: 'POST',
            agent: new Agent({ keepAlive: true }),
            headers: {
              authorization: `Bearer ${svc()}`,
              'content-type': 'application/octet-stream',
              'content-length': 4 * 1024 * 1024,
            },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection }));
          },
        );
        req.on('error', reject);
        req.end(Buffer.alloc(4 * 1024 * 1024, 3));
      },
    );
    expect(status).toBe(507);
    expect(connection).toBe('close');
  });

  it('REST copy that does not fit: 507, the source untouched', async () => {
    expect((await upload('mid.bin', 100 * 1024)).status).toBe(200);
    const copy = (to: string) =>
      env.h.api('/object/copy', {
        method: 'POST',
        token: svc(),
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ bucketId: bucket, sourceKey: 'mid.bin', destinationKey: to }),
      });
    const statuses = [];
    for (const to of ['c1.bin', 'c2.bin', 'c3.bin']) statuses.push((await copy(to)).status);
    expect(statuses).toContain(507);
    expect(statuses.filter((s) => s !== 200 && s !== 507)).toEqual([]);
    const names = (
      await env.h.sql<{ name: string }>('select name from storage.objects where bucket_id = $1', [bucket])
    ).map((r) => r.name);
    expect(names).toContain('mid.bin');
  });

  it('S3 PutObject: 507 InsufficientStorage as S3 XML', async () => {
    const err = await s3Error(
      env.s3.send(
        new PutObjectCommand({ Bucket: bucket, Key: 's3.bin', Body: Buffer.alloc(1024 * 1024, 1) }),
      ),
    );
    expect(err.name).toBe('InsufficientStorage');
    expect(err.$metadata.httpStatusCode).toBe(507);
  });

  it('TUS PATCH: 507 with the message as text', async () => {
    const base = `${env.h.base}/upload/resumable`;
    const meta = (k: string, v: string) => `${k} ${Buffer.from(v).toString('base64')}`;
    const created = await fetch(base, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${svc()}`,
        'tus-resumable': '1.0.0',
        'upload-length': String(1024 * 1024),
        'upload-metadata': [meta('bucketName', bucket), meta('objectName', 'tus.bin')].join(','),
      },
    });
    expect(created.status).toBe(201);
    const location = new URL(created.headers.get('location') ?? '', base).toString();
    const patch = await fetch(location, {
      method: 'PATCH',
      headers: {
        authorization: `Bearer ${svc()}`,
        'tus-resumable': '1.0.0',
        'upload-offset': '0',
        'content-type': 'application/offset+octet-stream',
      },
      body: new Uint8Array(1024 * 1024),
    });
    expect(patch.status).toBe(507);
    expect(await patch.text()).toContain('not enough space');
  });
});
