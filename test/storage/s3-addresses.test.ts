/**
 * An S3 client may address the project's S3 endpoint at the bare `/storage/v1/s3`, under the
 * `/project/<ref>` path prefix, or at `<ref>.localhost`: the signature is checked against the path
 * the client signed, so each works, for header-signed requests and presigned URLs alike.
 */
import { describe, expect, it } from 'vitest';
import { Agent } from 'node:http';
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { bucketName } from '../support/storage.js';
import { s3Error, useS3Platform } from './s3-support.js';

const env = useS3Platform();

function clientAt(endpoint: string, agent?: Agent, secret = env.keys.secret_key): S3Client {
  return new S3Client({
    endpoint,
    region: 'local',
    forcePathStyle: true,
    credentials: { accessKeyId: env.keys.access_key, secretAccessKey: secret },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 1,
    ...(agent ? { requestHandler: new NodeHttpHandler({ httpAgent: agent }) } : {}),
  });
}

/** Resolves every name to 127.0.0.1, so `<ref>.localhost` reaches the test server. */
const loopbackAgent = () =>
  new Agent({
    lookup: (_host, opts, cb) => {
      if ((opts as { all?: boolean }).all)
        (cb as (e: null, a: { address: string; family: number }[]) => void)(null, [
          { address: '127.0.0.1', family: 4 },
        ]);
      else cb(null, '127.0.0.1', 4);
    },
  });

describe('S3 endpoint addresses', () => {
  it('bare, /project/<ref> prefix and <ref>.localhost: put, list, get and a presigned GET all verify', async () => {
    const { tp } = env.h;
    const ref = tp.platform.defaultRef;
    const port = new URL(tp.url).port;
    const b = bucketName('addr');
    await env.s3.send(new CreateBucketCommand({ Bucket: b }));
    const addresses: [string, string, Agent | undefined][] = [
      ['bare', `${tp.url}/storage/v1/s3`, undefined],
      ['prefix', `${tp.url}/project/${ref}/storage/v1/s3`, undefined],
      ['subdomain', `http://${ref}.localhost:${port}/storage/v1/s3`, loopbackAgent()],
    ];
    for (const [name, endpoint, agent] of addresses) {
      const s3 = clientAt(endpoint, agent);
      try {
        await s3.send(new PutObjectCommand({ Bucket: b, Key: `${name}/k a+b.txt`, Body: name }));
        const listed = await s3.send(new ListObjectsV2Command({ Bucket: b, Prefix: `${name}/` }));
        expect(
          listed.Contents?.map((c) => c.Key),
          name,
        ).toEqual([`${name}/k a+b.txt`]);
        const got = await s3.send(new GetObjectCommand({ Bucket: b, Key: `${name}/k a+b.txt` }));
        expect(await got.Body!.transformToString(), name).toBe(name);
        const url = await getSignedUrl(s3, new GetObjectCommand({ Bucket: b, Key: `${name}/k a+b.txt` }), {
          expiresIn: 60,
        });
        // fetch cannot set Host; the subdomain's presigned URL goes to 127.0.0.1 with the signed Host.
        const res = agent
          ? await fetchVia(url, agent)
          : await fetch(url).then(async (r) => ({ status: r.status, text: await r.text() }));
        expect(res, name).toEqual({ status: 200, text: name });
      } finally {
        s3.destroy();
      }
    }
  });

  it('the prefix is part of what is signed: a wrong secret, or a signature made for the bare path, is refused', async () => {
    const { tp } = env.h;
    const ref = tp.platform.defaultRef;
    const b = bucketName('addr');
    await env.s3.send(new CreateBucketCommand({ Bucket: b }));
    const wrong = clientAt(`${tp.url}/project/${ref}/storage/v1/s3`, undefined, 'not-the-secret');
    expect((await s3Error(wrong.send(new ListObjectsV2Command({ Bucket: b })))).name).toBe(
      'SignatureDoesNotMatch',
    );
    wrong.destroy();
    // A URL presigned for the bare path, replayed under the prefix: the canonical path differs.
    const bare = clientAt(`${tp.url}/storage/v1/s3`);
    await bare.send(new PutObjectCommand({ Bucket: b, Key: 'x.txt', Body: 'x' }));
    const url = new URL(
      await getSignedUrl(bare, new GetObjectCommand({ Bucket: b, Key: 'x.txt' }), { expiresIn: 60 }),
    );
    bare.destroy();
    url.pathname = `/project/${ref}${url.pathname}`;
    const res = await fetch(url);
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('SignatureDoesNotMatch');
  });
});

async function fetchVia(url: string, agent: Agent): Promise<{ status: number; text: string }> {
  const { request } = await import('node:http');
  return new Promise((resolve, reject) => {
    const req = request(url, { agent }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject);
    req.end();
  });
}
