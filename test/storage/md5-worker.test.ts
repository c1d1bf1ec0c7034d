/** The worker-thread MD5 of the upload path gives the same digests as node:crypto, in any chunking. */
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { WorkerMd5 } from '../../src/storage/backend/md5-worker.js';
import { digestStream } from '../../src/storage/backend/metered-stream.js';

const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

describe('WorkerMd5', () => {
  it('matches node:crypto for empty input, small chunks, chunks across batches, and one large chunk', async () => {
    const data = randomBytes(5 * 1024 * 1024 + 123);
    expect(await new WorkerMd5().digest()).toBe(md5(Buffer.alloc(0)));
    for (const step of [1000, 65_536, 1024 * 1024 + 7, data.length]) {
      const h = new WorkerMd5();
      for (let i = 0; i < data.length; i += step) await h.update(data.subarray(i, i + step));
      expect(await h.digest()).toBe(md5(data));
    }
  });

  it('many jobs at once keep their bytes apart; the caller may reuse its chunk after update', async () => {
    const inputs = Array.from({ length: 8 }, (_, i) => randomBytes(3 * 1024 * 1024 + i));
    const digests = await Promise.all(
      inputs.map(async (data) => {
        const h = new WorkerMd5();
        const scratch = Buffer.alloc(300_000);
        for (let i = 0; i < data.length; i += scratch.length) {
          const n = data.copy(scratch, 0, i);
          await h.update(scratch.subarray(0, n));
          scratch.fill(0);
        }
        return h.digest();
      }),
    );
    expect(digests).toEqual(inputs.map(md5));
  });

  it('digestStream: ETag and size, and the limit error past maxBytes', async () => {
    const data = randomBytes(2 * 1024 * 1024 + 1);
    expect(await digestStream(Readable.from([data]), data.length, () => new Error('too big'))).toEqual({
      eTag: `"${md5(data)}"`,
      size: data.length,
    });
    await expect(
      digestStream(Readable.from([data]), data.length - 1, () => new Error('too big')),
    ).rejects.toThrow('too big');
  });
});
