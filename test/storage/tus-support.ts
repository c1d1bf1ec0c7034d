/**
 * Shared by the TUS suites: tus-js-client runs, a TCP relay that cuts every open connection once
 * given byte counts have gone through it, and a deterministic byte stream of any length (never
 * held in memory) with a sha256 computed as it is produced.
 */
import { createCipheriv, createHash } from 'node:crypto';
import { type Server as NetServer, type Socket, connect, createServer } from 'node:net';
import { Readable } from 'node:stream';
import * as tus from 'tus-js-client';

export interface Outcome {
  url?: string | null;
  error?: tus.DetailedError | Error;
}

export function runUpload(data: Buffer | Readable, opts: tus.UploadOptions): Promise<Outcome> {
  return new Promise((resolve) => {
    const upload = new tus.Upload(data, {
      retryDelays: [],
      ...opts,
      onSuccess: () => resolve({ url: upload.url }),
      onError: (error) => resolve({ error }),
    });
    upload.start();
  });
}

export function statusOf(o: Outcome): number | undefined {
  return (o.error as tus.DetailedError | undefined)?.originalResponse?.getStatus();
}

export function bodyOf(o: Outcome): string | undefined {
  return (o.error as tus.DetailedError | undefined)?.originalResponse?.getBody();
}

export interface CuttingRelay {
  /** The relay's origin, e.g. http://127.0.0.1:1234. */
  origin: string;
  /** How many cuts have happened. */
  cuts(): number;
  close(): Promise<void>;
}

/**
 * A TCP relay in front of `target` that destroys every open connection (both sides) when the
 * client-to-server byte count passes each of `cutAt`.
 */
export async function cuttingRelay(target: URL, cutAt: number[]): Promise<CuttingRelay> {
  const sockets = new Set<Socket>();
  let relayed = 0;
  let cutsDone = 0;
  const relay: NetServer = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(client);
    sockets.add(upstream);
    client.on('data', (d: Buffer) => {
      relayed += d.length;
      const next = cutAt[cutsDone];
      if (next !== undefined && relayed >= next) {
        cutsDone++;
        for (const s of sockets) s.destroy();
        sockets.clear();
        return;
      }
      if (!upstream.write(d)) client.pause();
    });
    upstream.on('drain', () => client.resume());
    upstream.on('data', (d) => client.write(d));
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', close);
    upstream.on('close', close);
    client.on('error', close);
    upstream.on('error', close);
  });
  await new Promise<void>((r) => relay.listen(0, '127.0.0.1', () => r()));
  const port = (relay.address() as { port: number }).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    cuts: () => cutsDone,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => relay.close(() => r()));
    },
  };
}

/**
 * `length` pseudo-random bytes (AES-128-CTR of zeros under a fixed key: the same bytes for the
 * same seed), produced on demand in 1 MiB pieces; `sha256()` is the digest of all of them once
 * the stream has ended.
 */
export function prngStream(length: number, seed = 1): { stream: Readable; sha256(): string } {
  const key = createHash('sha256').update(`seed:${seed}`).digest().subarray(0, 16);
  const cipher = createCipheriv('aes-128-ctr', key, Buffer.alloc(16));
  const hash = createHash('sha256');
  const zeros = Buffer.alloc(1024 * 1024);
  let left = length;
  let digest: string | undefined;
  const stream = new Readable({
    highWaterMark: 1024 * 1024,
    read() {
      if (left === 0) {
        this.push(null);
        return;
      }
      const n = Math.min(left, zeros.length);
      left -= n;
      const piece = cipher.update(zeros.subarray(0, n));
      hash.update(piece);
      this.push(piece);
    },
  });
  return {
    stream,
    sha256() {
      if (left !== 0) throw new Error('the stream has not been read to its end');
      digest ??= hash.digest('hex');
      return digest;
    },
  };
}

/** sha256 and length of a response body, read as a stream. */
export async function digestBody(res: Response): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  if (!res.body) return { sha256: hash.digest('hex'), size };
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { sha256: hash.digest('hex'), size };
}
