/** Shared setup of the S3 protocol tests: a platform, an access key, and an SDK client for it. */
import { createHash } from 'node:crypto';
import { S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, expect } from 'vitest';
import { startStorage, type StorageHarness } from '../support/storage.js';
import { api } from '../support/management.js';

export interface AccessKey {
  id: string;
  access_key: string;
  secret_key: string;
}

export function must<T>(v: T | null | undefined): T {
  if (v === null || v === undefined) throw new Error('expected a value');
  return v;
}

export const md5 = (b: Buffer | string) => `"${createHash('md5').update(b).digest('hex')}"`;

export async function s3Error(p: Promise<unknown>): Promise<S3ServiceException> {
  try {
    await p;
  } catch (err) {
    if (err instanceof S3ServiceException) return err;
    throw err;
  }
  throw new Error('expected an S3 error');
}

/** An SDK client for `endpoint` (no retries, checksums only where required). */
export function s3ClientFor(
  endpoint: string,
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string },
): S3Client {
  return new S3Client({
    endpoint,
    region: 'local',
    forcePathStyle: true,
    credentials,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 1,
  });
}

/** A new access key of the harness's default project (Management API) and a client signing with it. */
export async function s3ClientWithNewKey(h: StorageHarness, description: string): Promise<S3Client> {
  const { tp } = h;
  const res = await api<AccessKey>(
    tp,
    'POST',
    `/v1/projects/${tp.platform.defaultRef}/storage/s3-access-keys`,
    {
      body: { description },
    },
  );
  expect(res.status).toBe(201);
  const keys = res.body;
  return s3ClientFor(`${h.base}/s3`, { accessKeyId: keys.access_key, secretAccessKey: keys.secret_key });
}

export interface S3TestPlatform {
  h: StorageHarness;
  endpoint: string;
  keys: AccessKey;
  s3: S3Client;
  client(creds: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }): S3Client;
  mgmt<T = unknown>(method: string, path: string, body?: unknown): Promise<{ status: number; json: T }>;
}

/** Registers the suite's beforeAll/afterAll; the returned object is filled before the tests run. */
export function useS3Platform(): S3TestPlatform {
  const env = {
    client(creds: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }): S3Client {
      return s3ClientFor(env.endpoint, creds);
    },
    async mgmt<T = unknown>(
      method: string,
      path: string,
      body?: unknown,
    ): Promise<{ status: number; json: T }> {
      const { tp } = env.h;
      const res = await fetch(`${tp.url}/v1/projects/${tp.platform.defaultRef}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${tp.platform.defaultAccessToken}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, json: (text ? JSON.parse(text) : undefined) as T };
    },
  } as S3TestPlatform;
  beforeAll(async () => {
    env.h = await startStorage('file');
    env.endpoint = `${env.h.base}/s3`;
    const created = await env.mgmt<AccessKey>('POST', '/storage/s3-access-keys', { description: 'test key' });
    expect(created.status).toBe(201);
    env.keys = created.json;
    env.s3 = env.client({ accessKeyId: env.keys.access_key, secretAccessKey: env.keys.secret_key });
  });
  afterAll(async () => {
    env.s3?.destroy();
    await env.h?.close();
  });
  return env;
}
