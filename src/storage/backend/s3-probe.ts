/**
 * The S3 bucket's health for a node's GET /ready (platform/node-lifecycle.ts): HeadBucket, its
 * answer shared for a moment.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { StrataConfig } from '../../config.js';

const S3_PROBE_CACHE_MS = 500;

/** 'up' / 'down' of the S3 bucket (HeadBucket, shared for a moment), or 'none' on the file backend. */
export function s3Probe(config: StrataConfig): () => Promise<'up' | 'down' | 'none'> {
  const s3 = config.storageBackend === 's3' ? config.s3 : undefined;
  if (!s3) return async () => 'none';
  // The AWS SDK is loaded by the first probe, not with the server.
  let client: S3Client | undefined;
  let last: { at: number; up: boolean } | undefined;
  let pending: Promise<boolean> | undefined;
  const probe = async () => {
    try {
      const [{ HeadBucketCommand }, { createS3Client }] = await Promise.all([
        import('@aws-sdk/client-s3'),
        import('./s3.js'),
      ]);
      client ??= createS3Client(s3);
      await client.send(new HeadBucketCommand({ Bucket: s3.bucket }), {
        abortSignal: AbortSignal.timeout(config.dbHealthTimeoutMs),
      });
      return true;
    } catch {
      return false;
    }
  };
  return async () => {
    if (last && Date.now() - last.at < S3_PROBE_CACHE_MS) return last.up ? 'up' : 'down';
    pending ??= probe().then((up) => {
      last = { at: Date.now(), up };
      pending = undefined;
      return up;
    });
    return (await pending) ? 'up' : 'down';
  };
}
