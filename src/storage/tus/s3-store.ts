/**
 * The TUS data store of the `s3` backend: an unfinished upload lives in S3 itself, so any Strata
 * node can continue it. Its bytes are an S3 multipart upload at the very key the S3 backend gives
 * the object version the upload will become (so completing it leaves the bytes exactly where a
 * plain upload puts them); its description, the parts written so far, and the size of the tail
 * that is too small to be a part yet are the JSON body of `<key>.tus-info`; that tail is the object
 * `<key>.tus-part`. Every PATCH ends with the parts and the tail stored and the description saved,
 * so the offset HEAD reports (parts + tail) is durable. The description is read from S3 on every
 * request (no per-node cache), and the PostgreSQL lock per upload id (pg-locker.ts) keeps writers
 * one at a time. S3 ListParts/ListMultipartUploads are not needed (not every S3-compatible store has them).
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { DataStore, ERRORS, Upload } from '@tus/utils';
import { RESUMABLE_INFO_SUFFIX, RESUMABLE_TAIL_SUFFIX, type S3Backend } from '../backend/s3.js';
import type { ObjectLocation } from '../backend/interface.js';
import type { StoredBytes } from '../service/uploads.js';
import { formatUploadId, parseUploadId, TUS_EXTENSIONS } from './upload-id.js';

const MiB = 1024 * 1024;
/** Every part but the last is exactly this size (S3: at least 5 MiB, at most 10,000 parts). */
const MIN_PART_SIZE = 8 * MiB;
const MAX_PARTS = 10_000;

interface Part {
  PartNumber: number;
  ETag: string;
  Size: number;
}

interface Description {
  id: string;
  size?: number;
  metadata?: Record<string, string | null>;
  creation_date: string;
  /** The S3 multipart upload. */
  uploadId: string;
  partSize: number;
  parts: Part[];
  /** Bytes at the start of `<key>.tus-part` that follow the parts. */
  tail: number;
  /** The multipart upload is completed: the object exists. */
  completed?: boolean;
}

function partSizeFor(size: number | undefined): number {
  return size === undefined ? MIN_PART_SIZE : Math.max(MIN_PART_SIZE, Math.ceil(size / MAX_PARTS));
}

const offsetOf = (d: Description) => d.parts.reduce((n, p) => n + p.Size, 0) + d.tail;

function isMissing(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
}

export class TusS3Store extends DataStore {
  constructor(
    readonly backend: S3Backend,
    private readonly expirationMs: number,
  ) {
    super();
    this.extensions = [...TUS_EXTENSIONS];
  }

  /** The object version an upload id becomes. */
  location(id: string): ObjectLocation {
    const u = parseUploadId(id);
    if (!u) throw ERRORS.FILE_NOT_FOUND;
    return u;
  }

  private keyOf(id: string): string {
    return this.backend.objectKey(this.location(id));
  }

  private get client() {
    return this.backend.client;
  }

  private get bucket() {
    return this.backend.bucket;
  }

  private async saveInfo(d: Description): Promise<void> {
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: `${this.keyOf(d.id)}${RESUMABLE_INFO_SUFFIX}`,
        Body: JSON.stringify(d),
        ContentType: 'application/json',
      }),
    );
  }

  private async readInfo(id: string): Promise<Description> {
    let text: string | undefined;
    try {
      const out = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: `${this.keyOf(id)}${RESUMABLE_INFO_SUFFIX}` }),
      );
      text = await out.Body?.transformToString();
    } catch (err) {
      if (isMissing(err)) throw ERRORS.FILE_NOT_FOUND;
      throw err;
    }
    try {
      const d = JSON.parse(text ?? '') as Description;
      if (d.id !== id || !Array.isArray(d.parts)) throw new Error('not this upload');
      return d;
    } catch {
      throw ERRORS.FILE_NOT_FOUND;
    }
  }

  override async create(upload: Upload): Promise<Upload> {
    upload.creation_date = new Date().toISOString();
    const out = await this.client.send(
      new CreateMultipartUploadCommand({
        Bucket: this.bucket,
        Key: this.keyOf(upload.id),
        ContentType: upload.metadata?.contentType || 'application/octet-stream',
        CacheControl: upload.metadata?.cacheControl || 'no-cache',
      }),
    );
    if (!out.UploadId) throw new Error('S3 returned no UploadId');
    await this.saveInfo({
      id: upload.id,
      size: upload.size,
      metadata: upload.metadata,
      creation_date: upload.creation_date,
      uploadId: out.UploadId,
      partSize: partSizeFor(upload.size),
      parts: [],
      tail: 0,
    });
    return upload;
  }

  private async readTail(id: string, length: number): Promise<Buffer> {
    const out = await this.client.send(
      new GetObjectCommand({ Bucket: this.bucket, Key: `${this.keyOf(id)}${RESUMABLE_TAIL_SUFFIX}` }),
    );
    const bytes = Buffer.from((await out.Body?.transformToByteArray()) ?? []);
    // The tail object may be longer than recorded (a PATCH stopped between storing it and saving
    // the description); it always starts with the recorded bytes.
    if (bytes.length < length) throw new Error('resumable upload tail is shorter than recorded');
    return bytes.subarray(0, length);
  }

  private async uploadPart(d: Description, body: Buffer): Promise<void> {
    const PartNumber = (d.parts.at(-1)?.PartNumber ?? 0) + 1;
    const out = await this.client.send(
      new UploadPartCommand({
        Bucket: this.bucket,
        Key: this.keyOf(d.id),
        UploadId: d.uploadId,
        PartNumber,
        Body: body,
        ContentLength: body.length,
      }),
    );
    d.parts.push({ PartNumber, ETag: out.ETag ?? '', Size: body.length });
    d.tail = 0;
    await this.saveInfo(d);
  }

  /**
   * Appends the body: full parts as they fill up, then the rest as the new tail (or, when it ends
   * the upload, as the last part). What arrived before the body broke off is kept.
   */
  override async write(stream: Readable, id: string, offset: number): Promise<number> {
    const d = await this.readInfo(id);
    if (d.completed || offset !== offsetOf(d)) throw ERRORS.INVALID_OFFSET;
    let chunks: Buffer[] = d.tail > 0 ? [await this.readTail(id, d.tail)] : [];
    let buffered = d.tail;
    let failure: unknown;
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        chunks.push(chunk);
        buffered += chunk.length;
        while (buffered >= d.partSize) {
          const all = Buffer.concat(chunks, buffered);
          await this.uploadPart(d, all.subarray(0, d.partSize));
          const rest = all.subarray(d.partSize);
          chunks = rest.length ? [rest] : [];
          buffered = rest.length;
        }
      }
    } catch (err) {
      failure = err;
    }
    const end = d.parts.reduce((n, p) => n + p.Size, 0) + buffered;
    if (buffered > 0 && end === d.size) {
      await this.uploadPart(d, Buffer.concat(chunks, buffered));
    } else if (buffered > 0 && buffered !== d.tail) {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: `${this.keyOf(id)}${RESUMABLE_TAIL_SUFFIX}`,
          Body: Buffer.concat(chunks, buffered),
        }),
      );
      d.tail = buffered;
      await this.saveInfo(d);
    }
    if (failure) throw failure;
    return offsetOf(d);
  }

  /** Completes the multipart upload (once all bytes are there): the object version then exists. */
  async complete(id: string): Promise<void> {
    const d = await this.readInfo(id);
    if (d.completed) return;
    if (d.size === undefined || offsetOf(d) !== d.size) throw ERRORS.INVALID_OFFSET;
    // A tail left when the length was declared only after the last bytes: it is the last part.
    if (d.tail > 0) await this.uploadPart(d, await this.readTail(id, d.tail));
    const Key = this.keyOf(id);
    if (d.parts.length === 0) {
      // An empty upload: S3 completes no multipart upload without parts.
      await this.abort(Key, d.uploadId);
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key,
          Body: Buffer.alloc(0),
          ContentType: d.metadata?.contentType || 'application/octet-stream',
          CacheControl: d.metadata?.cacheControl || 'no-cache',
        }),
      );
    } else {
      await this.client.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.bucket,
          Key,
          UploadId: d.uploadId,
          MultipartUpload: { Parts: d.parts.map(({ PartNumber, ETag }) => ({ PartNumber, ETag })) },
        }),
      );
    }
    d.completed = true;
    await this.saveInfo(d);
  }

  override async getUpload(id: string): Promise<Upload> {
    const d = await this.readInfo(id);
    const key = this.keyOf(id);
    return new Upload({
      id,
      size: d.size,
      offset: offsetOf(d),
      metadata: d.metadata,
      creation_date: d.creation_date,
      storage: { type: 's3', path: key, bucket: this.bucket },
    });
  }

  override async declareUploadLength(id: string, length: number): Promise<void> {
    const d = await this.readInfo(id);
    await this.saveInfo({ ...d, size: length, partSize: d.parts.length ? d.partSize : partSizeFor(length) });
  }

  private async abort(Key: string, UploadId: string): Promise<void> {
    // Not every S3-compatible store can abort; its leftovers then go with the bucket's lifecycle.
    await this.client
      .send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId }))
      .catch(() => {});
  }

  private async deleteKeys(keys: string[]): Promise<void> {
    await this.client.send(
      new DeleteObjectsCommand({
        Bucket: this.bucket,
        Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true },
      }),
    );
  }

  /** Termination: the unfinished bytes and the description go. */
  override async remove(id: string): Promise<void> {
    const d = await this.readInfo(id);
    const key = this.keyOf(id);
    if (!d.completed) await this.abort(key, d.uploadId);
    await this.deleteKeys([`${key}${RESUMABLE_TAIL_SUFFIX}`, `${key}${RESUMABLE_INFO_SUFFIX}`]);
  }

  /** The completed upload's bytes, for the upload pipeline to take as the new object version. */
  stored(id: string): StoredBytes {
    return {
      version: this.location(id).version,
      take: async (loc, limits) => {
        await this.complete(id);
        return this.backend.adopt(loc, limits);
      },
    };
  }

  /** After completion: the description and tail go; the object stays (it is the new version). */
  async forget(id: string): Promise<void> {
    const key = this.keyOf(id);
    await this.deleteKeys([`${key}${RESUMABLE_TAIL_SUFFIX}`, `${key}${RESUMABLE_INFO_SUFFIX}`]);
  }

  override getExpiration(): number {
    return this.expirationMs;
  }

  /**
   * Removes uploads created before `expiredBefore` (a completed one's object is left to the
   * backend's sweep, which removes it unless a row references it), and tails without a
   * description last written before `strayBefore`.
   */
  async sweep(expiredBefore: number, strayBefore: number): Promise<number> {
    let removed = 0;
    let token: string | undefined;
    /** Bases of descriptions seen (kept or removed): their tails are not strays. */
    const seen = new Set<string>();
    const tails: { key: string; at: number }[] = [];
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: this.backend.prefix,
          ContinuationToken: token,
        }),
      );
      for (const o of page.Contents ?? []) {
        if (!o.Key) continue;
        if (o.Key.endsWith(RESUMABLE_TAIL_SUFFIX)) {
          tails.push({ key: o.Key, at: o.LastModified?.getTime() ?? 0 });
          continue;
        }
        if (!o.Key.endsWith(RESUMABLE_INFO_SUFFIX)) continue;
        const base = o.Key.slice(0, -RESUMABLE_INFO_SUFFIX.length);
        const loc = this.backend.locationOf(base);
        const id = loc ? formatUploadId(loc) : undefined;
        const d = id ? await this.readInfo(id).catch(() => undefined) : undefined;
        seen.add(base);
        if (d && Date.parse(d.creation_date) >= expiredBefore) continue;
        if (d && !d.completed) await this.abort(base, d.uploadId);
        await this.deleteKeys([o.Key, `${base}${RESUMABLE_TAIL_SUFFIX}`]);
        removed++;
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    const stray = tails.filter(
      (t) => t.at < strayBefore && !seen.has(t.key.slice(0, -RESUMABLE_TAIL_SUFFIX.length)),
    );
    if (stray.length) await this.deleteKeys(stray.map((t) => t.key));
    return removed + stray.length;
  }

  override async deleteExpired(): Promise<number> {
    return this.sweep(Date.now() - this.expirationMs, 0);
  }
}
