/**
 * A platform with the Storage API for a test file, on the file backend or on S3 (a local s3rver
 * on 127.0.0.1), and storage-js clients for the three kinds of caller.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { StorageClient } from '@supabase/storage-js';
import { CreateBucketCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { startTestPlatform, type TestPlatform } from './platform.js';
import { signJwt } from '../../src/auth/jwt.js';
import type { ProjectContext } from '../../src/platform/project-context.js';

const require = createRequire(import.meta.url);

export type BackendKind = 'file' | 's3';

export interface StorageHarness {
  tp: TestPlatform;
  project: ProjectContext;
  kind: BackendKind;
  base: string;
  service: StorageClient;
  anon: StorageClient;
  /** A client acting as an authenticated user with this sub. */
  user(sub: string): Promise<StorageClient>;
  userToken(sub: string): Promise<string>;
  /** Every stored object key in the backend (file paths or S3 keys), for orphan checks. */
  storedKeys(): Promise<string[]>;
  /** A raw request to the Storage API; `token` becomes the bearer (default: none). */
  api(path: string, init?: RequestInit & { token?: string }): Promise<Response>;
  /** Raw superuser SQL on the project database. */
  sql<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

interface S3rverInstance {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
}

async function startS3rver(dir: string): Promise<{ endpoint: string; close(): Promise<void> }> {
  const S3rver = require('s3rver') as new (opts: Record<string, unknown>) => S3rverInstance;
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: dir,
    allowMismatchedSignatures: true,
  });
  const { port } = await server.run();
  return { endpoint: `http://127.0.0.1:${port}`, close: () => server.close() };
}

export async function startStorage(
  kind: BackendKind,
  overrides: Record<string, unknown> = {},
): Promise<StorageHarness> {
  let s3: { endpoint: string; close(): Promise<void> } | undefined;
  let s3dir: string | undefined;
  let s3client: S3Client | undefined;
  const bucket = 'strata-test';
  if (kind === 's3') {
    s3dir = mkdtempSync(join(tmpdir(), 'strata-s3rver-'));
    s3 = await startS3rver(s3dir);
    s3client = new S3Client({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    await s3client.send(new CreateBucketCommand({ Bucket: bucket }));
  }
  const tp = await startTestPlatform({
    storageBackend: kind,
    s3: s3
      ? {
          endpoint: s3.endpoint,
          region: 'us-east-1',
          bucket,
          accessKeyId: 'S3RVER',
          secretAccessKey: 'S3RVER',
          forcePathStyle: true,
        }
      : undefined,
    ...overrides,
  });
  const project = await tp.platform.defaultProject();
  const base = `${tp.url}/storage/v1`;
  const client = (token: string) =>
    new StorageClient(base, { apikey: project.anonKey, Authorization: `Bearer ${token}` });
  const userToken = (sub: string) =>
    signJwt(project.jwtSecret, { role: 'authenticated', sub }, { expiresInSeconds: 3600 });
  const { default: pg } = await import('pg');
  return {
    tp,
    project,
    kind,
    base,
    service: client(project.serviceRoleKey),
    anon: client(project.anonKey),
    userToken,
    async user(sub) {
      return client(await userToken(sub));
    },
    async storedKeys() {
      if (kind === 's3') {
        const out = await s3client!.send(
          new ListObjectsV2Command({ Bucket: bucket, Prefix: `${project.ref}/` }),
        );
        return (out.Contents ?? []).map((o) => o.Key!.slice(project.ref.length + 1));
      }
      const { readdir } = await import('node:fs/promises');
      const root = join(project.filesDir, 'storage');
      const files = (await readdir(root, { recursive: true, withFileTypes: true }).catch(
        () => [],
      )) as import('node:fs').Dirent[];
      return files
        .filter((f) => f.isFile())
        .map((f) =>
          join(f.parentPath ?? (f as unknown as { path: string }).path, f.name).slice(root.length + 1),
        );
    },
    api(path, init = {}) {
      const { token, headers, ...rest } = init;
      const h: Record<string, string> = { ...(headers as Record<string, string> | undefined) };
      if (token) h.authorization = `Bearer ${token}`;
      return fetch(base + path, { ...rest, headers: h });
    },
    async sql(text, params = []) {
      const c = new pg.Client({ connectionString: project.superuserUrl });
      await c.connect();
      try {
        return (await c.query(text, params)).rows;
      } finally {
        await c.end();
      }
    },
    async close() {
      await tp.close();
      s3client?.destroy();
      await s3?.close();
      if (s3dir) rmSync(s3dir, { recursive: true, force: true });
    },
  };
}

export const uuid = () => randomUUID();

/** A unique bucket name per test. */
export const bucketName = (p = 'b') => `${p}-${randomUUID().slice(0, 8)}`;
