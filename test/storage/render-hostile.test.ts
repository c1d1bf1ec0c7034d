/**
 * Hostile input to /render/image: dimensions 0 / huge / not integers, and images whose header lies
 * (a PNG claiming 100000 × 100000 pixels in a few bytes; a truncated one). The pixel limit refuses
 * the bomb from its header alone; nothing answers 500.
 */
import { deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketName, startStorage, type StorageHarness } from '../support/storage.js';

let h: StorageHarness;
let b: string;

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (const x of buf) c = (CRC_TABLE[(c ^ x) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}
/** A valid-looking RGB PNG header of `w` × `h` whose image data is only `rows` rows of zeros. */
function forgedPng(w: number, hgt: number, rows: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(hgt, 4);
  ihdr.writeUInt8(8, 8); // bit depth
  ihdr.writeUInt8(2, 9); // RGB
  const raw = Buffer.alloc(rows * (1 + w * 3));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

beforeAll(async () => {
  h = await startStorage('file');
  b = bucketName('img-x');
  await h.service.createBucket(b, { public: true });
  const ok = await sharp({ create: { width: 40, height: 20, channels: 3, background: '#f00' } })
    .png()
    .toBuffer();
  for (const [key, body] of [
    ['ok.png', ok],
    ['bomb.png', forgedPng(100_000, 100_000, 1)],
    ['truncated.png', forgedPng(1000, 1000, 3)],
    ['cut.png', ok.subarray(0, ok.length - 20)],
    ['empty.png', Buffer.alloc(0)],
  ] as const) {
    const { error } = await h.service.from(b).upload(key, body, { contentType: 'image/png' });
    expect(error).toBeNull();
  }
});
afterAll(async () => h?.close());

const render = (key: string, qs: string) => h.api(`/render/image/public/${b}/${key}?${qs}`);

describe('render: hostile input', () => {
  it('width/height 0 mean "not given"; huge ones are clamped; negatives, fractions, NaN are 400', async () => {
    const zero = await render('ok.png', 'width=0&height=0&format=origin');
    expect(zero.status).toBe(200);
    expect(await sharp(Buffer.from(await zero.arrayBuffer())).metadata()).toMatchObject({
      width: 40,
      height: 20,
    });
    // 1e400 is Infinity: an integer to Fastify's Ajv (no strictNumbers), as the reference; clamped.
    const huge = await render('ok.png', 'width=1e400&height=99999999999999999999&resize=fill&format=origin');
    expect(huge.status).toBe(200);
    // Never enlarged.
    expect(await sharp(Buffer.from(await huge.arrayBuffer())).metadata()).toMatchObject({
      width: 40,
      height: 20,
    });
    for (const qs of ['width=-5', 'height=-1', 'width=1.5', 'height=NaN', 'resize=none', 'format=png']) {
      const res = await render('ok.png', qs);
      expect({ qs, status: res.status }).toEqual({ qs, status: 400 });
      expect(await res.json()).toMatchObject({ statusCode: '400', error: expect.any(String) });
    }
  });

  it('a PNG whose header claims 10^10 pixels is refused by the pixel limit, from its header', async () => {
    const before = process.memoryUsage().rss;
    const res = await render('bomb.png', 'width=10');
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      message: 'The source image resolution is too large to process',
    });
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
  });

  it('truncated, cut or empty images are the reference 400, not 500', async () => {
    for (const key of ['truncated.png', 'cut.png', 'empty.png']) {
      const res = await render(key, 'width=10');
      expect({ key, status: res.status }).toEqual({ key, status: 400 });
      expect(await res.json()).toMatchObject({
        message: 'The source image is invalid or unsupported for rendering',
      });
    }
  });
});
