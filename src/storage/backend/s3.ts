/**
 * S3-compatible backend: object `<prefix><bucket>/<key>/<version>` in one S3 bucket (the prefix is
 * the project ref, so projects can share a bucket). Uploads stream through @aws-sdk/lib-storage
 * (a single PutObject for small bodies, a multipart upload with bounded buffers otherwise; a failed
 * multipart upload is aborted, so nothing is left). Resumable uploads (tus/s3-store.ts) build their
 * multipart upload at the version's own key, next to `<key>.tus-info` and `<key>.tus-part`.
 */
import {
  AbortMultipartUploadCommand,
  CopyObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { Readable } from 'node:stream';
import { MeteredStream, digestStream } from './metered-stream.js';
import type { StrataConfig } from '../../config.js';
import type {
  ByteRange,
  ObjectLocation,
  PutOptions,
  StorageBackend,
  StoredObject,
  SweepOptions,
  SweepReport,
} from './interface.js';
import { VERSION } from './interface.js';
import { keySegmentOfS3, s3Segment } from './key-segments.js';

/** The S3 settings of config.ts (one shape for both). */
export type S3BackendConfig = NonNullable<StrataConfig['s3']>;

export function createS3Client(cfg: S3BackendConfig): S3Client {
  return new S3Client({
    endpoint: cfg.endpoint,
    region: cfg.region,
    forcePathStyle: cfg.forcePathStyle,
    credentials:
      cfg.accessKeyId && cfg.secretAccessKey
        ? { accessKeyId: cfg.accessKeyId, secretAccessKey: cfg.secretAccessKey }
        : undefined,
    // Flexible checksums only where the API requires them: several S3-compatible stores reject the
    // SDK's default CRC32 trailers, and the service computes its own MD5 ETag while streaming.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

const PART_SIZE = 8 * 1024 * 1024;

/** Suffixes of a resumable upload's description and unfinished tail, after the version's key. */
export const RESUMABLE_INFO_SUFFIX = '.tus-info';
export const RESUMABLE_TAIL_SUFFIX = '.tus-part';

export class S3Backend implements StorageBackend {
  readonly kind = 's3' as const;

  constructor(
    readonly client: S3Client,
    readonly bucket: string,
    readonly prefix: string,
  ) {}

  /**
   * Bucket and key segments are percent-encoded, so S3 object keys hold only unreserved characters
   * and `%` (empty, `.` and `..` segments too, key-segments.ts): CopySource (encoded once more) then means the same thing to every S3 implementation,
   * whether it decodes fully (AWS) or with decodeURI (s3rver).
   */
  objectKey(loc: ObjectLocation): string {
    return `${this.prefix}${encodeURIComponent(loc.bucket)}/${loc.key.split('/').map(s3Segment).join('/')}/${loc.version}`;
  }

  async put(loc: ObjectLocation, body: Readable, opts: PutOptions): Promise<StoredObject> {
    const meter = new MeteredStream(opts.maxBytes, opts.limitError);
    let failure: Error | undefined;
    body.on('error', (err) => {
      failure ??= err;
      meter.destroy(err);
    });
    meter.on('error', (err) => (failure ??= err));
    body.pipe(meter);
    const upload = new Upload({
      client: this.client,
      params: {
        Bucket: this.bucket,
        Key: this.objectKey(loc),
        Body: meter,
        ContentType: opts.contentType,
        CacheControl: opts.cacheControl,
      },
      partSize: PART_SIZE,
      queueSize: 2,
      leavePartsOnError: false,
    });
    const onAbort = () => void upload.abort().catch(() => {});
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await upload.done();
    } catch (err) {
      meter.discard();
      throw failure ?? err;
    } finally {
      opts.signal?.removeEventListener('abort', onAbort);
    }
    if (failure || opts.signal?.aborted) {
      meter.discard();
      await this.delete([loc]).catch(() => {});
      throw failure ?? new Error('upload aborted');
    }
    return { eTag: await meter.eTag(), size: meter.bytes, lastModified: new Date() };
  }

  /**
   * Takes bytes already stored at the version's key (a completed resumable upload) as if `put`
   * had written them: reads them once for the MD5 ETag and size; past `maxBytes` they are removed.
   */
  async adopt(loc: ObjectLocation, opts: Pick<PutOptions, 'maxBytes' | 'limitError'>): Promise<StoredObject> {
    const body = await this.get(loc);
    if (!body) throw new Error('the completed upload is missing');
    try {
      const { eTag, size } = await digestStream(body, opts.maxBytes, opts.limitError);
      return { eTag, size, lastModified: new Date() };
    } catch (err) {
      await this.delete([loc]).catch(() => {});
      throw err;
    }
  }

  async get(loc: ObjectLocation, range?: ByteRange): Promise<Readable | undefined> {
    try {
      const out = await this.client.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: this.objectKey(loc),
          Range: range ? `bytes=${range.start}-${range.end}` : undefined,
        }),
      );
      return out.Body as Readable;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async copy(
    from: ObjectLocation,
    to: ObjectLocation,
    opts: { contentType: string; cacheControl: string },
  ): Promise<StoredObject> {
    const source = `${this.bucket}/${this.objectKey(from).split('/').map(encodeURIComponent).join('/')}`;
    const out = await this.client.send(
      new CopyObjectCommand({
        Bucket: this.bucket,
        Key: this.objectKey(to),
        CopySource: source,
        MetadataDirective: 'REPLACE',
        ContentType: opts.contentType,
        CacheControl: opts.cacheControl,
      }),
    );
    const head = await this.client.send(
      new HeadObjectCommand({ Bucket: this.bucket, Key: this.objectKey(to) }),
    );
    return {
      eTag: out.CopyObjectResult?.ETag ?? head.ETag ?? '""',
      size: head.ContentLength ?? 0,
      lastModified: out.CopyObjectResult?.LastModified ?? head.LastModified ?? new Date(),
    };
  }

  async delete(locs: ObjectLocation[]): Promise<void> {
    for (let i = 0; i < locs.length; i += 1000) {
      const chunk = locs.slice(i, i + 1000);
      await this.client.send(
        new DeleteObjectsCommand({
          Bucket: this.bucket,
          Delete: { Objects: chunk.map((l) => ({ Key: this.objectKey(l) })), Quiet: true },
        }),
      );
    }
  }

  /** The location an S3 key of this project names, when it is one of ours. */
  locationOf(key: string): ObjectLocation | undefined {
    if (!key.startsWith(this.prefix)) return undefined;
    const parts = key.slice(this.prefix.length).split('/');
    const version = parts.pop();
    if (!version || !VERSION.test(version) || parts.length < 2) return undefined;
    try {
      const bucket = decodeURIComponent(parts[0] ?? '');
      const segments = parts.slice(1).map(keySegmentOfS3);
      return bucket ? { bucket, key: segments.join('/'), version } : undefined;
    } catch {
      return undefined;
    }
  }

  async sweep(opts: SweepOptions): Promise<SweepReport> {
    const report: SweepReport = { tempFiles: 0, orphans: 0, folders: 0 };
    // Multipart uploads of puts that never finished (the process died before aborting them).
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    for (;;) {
      const page = await this.client
        .send(
          new ListMultipartUploadsCommand({
            Bucket: this.bucket,
            Prefix: this.prefix,
            KeyMarker: keyMarker,
            UploadIdMarker: uploadIdMarker,
          }),
        )
        .catch(() => undefined); // not every S3-compatible store lists uploads
      for (const u of page?.Uploads ?? []) {
        if (!u.Key || !u.UploadId || !u.Initiated || u.Initiated.getTime() >= opts.before) continue;
        if (!this.locationOf(u.Key) || (await this.exists(`${u.Key}${RESUMABLE_INFO_SUFFIX}`))) continue;
        await this.client
          .send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: u.Key, UploadId: u.UploadId }))
          .then(() => report.tempFiles++)
          .catch(() => {});
      }
      if (!page?.IsTruncated) break;
      keyMarker = page.NextKeyMarker;
      uploadIdMarker = page.NextUploadIdMarker;
    }
    // Versions whose row never committed.
    let token: string | undefined;
    for (;;) {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.prefix, ContinuationToken: token }),
      );
      const candidates: ObjectLocation[] = [];
      for (const o of page.Contents ?? []) {
        if (!o.Key || !o.LastModified || o.LastModified.getTime() >= opts.before) continue;
        const loc = this.locationOf(o.Key);
        if (loc) candidates.push(loc);
      }
      if (candidates.length)
        report.orphans += await opts.removeUnreferenced(candidates, (loc) => this.delete([loc]));
      if (!page.IsTruncated) break;
      token = page.NextContinuationToken;
    }
    return report;
  }

  private async exists(Key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key }));
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /** Removes every key under this project's prefix, unfinished uploads included (the project is deleted). */
  async removeAll(): Promise<void> {
    let keyMarker: string | undefined;
    for (;;) {
      const page = await this.client
        .send(
          new ListMultipartUploadsCommand({ Bucket: this.bucket, Prefix: this.prefix, KeyMarker: keyMarker }),
        )
        .catch(() => undefined); // not every S3-compatible store lists uploads
      for (const u of page?.Uploads ?? [])
        if (u.Key && u.UploadId)
          await this.client
            .send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: u.Key, UploadId: u.UploadId }))
            .catch(() => {});
      if (!page?.IsTruncated || !page.NextKeyMarker) break;
      keyMarker = page.NextKeyMarker;
    }
    for (;;) {
      // Deleting changes the listing: always read the first page again until it is empty.
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.prefix }),
      );
      const keys = (page.Contents ?? []).flatMap((o) => (o.Key ? [{ Key: o.Key }] : []));
      if (keys.length === 0) break;
      await this.client.send(
        new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: keys, Quiet: true } }),
      );
    }
  }

  async close(): Promise<void> {}
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
}
