/**
 * Render gravity (the reference's `gravity`, `x_offset`, `y_offset`, imgproxy's vocabulary) and
 * sources imgproxy renders although a chunk checksum is wrong. The source is 20×10, red on its left
 * half and blue on its right: a 5×5 cover crop shows which side the gravity kept.
 */
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketName, startStorage, type StorageHarness } from '../support/storage.js';

let h: StorageHarness;
let bucket: string;

/** The widely copied 1×1 PNG whose IDAT checksum was mangled (U+FFFD bytes in it). */
const BAD_CRC_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mP8/x8AAwMCAO+/p94AAAAASUVORK5CYII=',
  'base64',
);

async function halves(): Promise<Buffer> {
  const red = await sharp({ create: { width: 10, height: 10, channels: 3, background: '#ff0000' } })
    .png()
    .toBuffer();
  return sharp({ create: { width: 20, height: 10, channels: 3, background: '#0000ff' } })
    .composite([{ input: red, left: 0, top: 0 }])
    .png()
    .toBuffer();
}

async function render(
  path: string,
): Promise<{ status: number; color?: 'red' | 'blue'; res: Response; body: Buffer }> {
  const res = await fetch(`${h.base}${path}`);
  const body = Buffer.from(await res.arrayBuffer());
  if (res.status !== 200) return { status: res.status, res, body };
  const { data } = await sharp(body).raw().toBuffer({ resolveWithObject: true });
  const [r, , b] = [data[0] ?? 0, data[1] ?? 0, data[2] ?? 0];
  return { status: 200, res, body, color: r > b ? 'red' : 'blue' };
}

beforeAll(async () => {
  h = await startStorage('file');
  bucket = bucketName('gravity');
  await h.service.createBucket(bucket, { public: true });
  expect(
    (await h.service.from(bucket).upload('halves.png', await halves(), { contentType: 'image/png' })).error,
  ).toBeNull();
  expect(
    (await h.service.from(bucket).upload('crc.png', BAD_CRC_PNG, { contentType: 'image/png' })).error,
  ).toBeNull();
});
afterAll(async () => h?.close());

describe('render gravity', () => {
  const box = 'width=5&height=5&format=origin';

  it('focal point x_offset 0 keeps the left (red), 1 the right (blue); X-Transformations names it', async () => {
    const left = await render(
      `/render/image/public/${bucket}/halves.png?${box}&gravity=fp&x_offset=0&y_offset=0.5`,
    );
    expect(left.status).toBe(200);
    expect(left.color).toBe('red');
    expect(left.res.headers.get('x-transformations')).toContain('gravity:fp:0:0.5');
    const right = await render(
      `/render/image/public/${bucket}/halves.png?${box}&gravity=fp&x_offset=1&y_offset=0.5`,
    );
    expect(right.color).toBe('blue');
    expect((await sharp(right.body).metadata()).width).toBe(5);
  });

  it('compass gravity: we keeps the west (red), ea the east (blue)', async () => {
    expect((await render(`/render/image/public/${bucket}/halves.png?${box}&gravity=we`)).color).toBe('red');
    expect((await render(`/render/image/public/${bucket}/halves.png?${box}&gravity=ea`)).color).toBe('blue');
  });

  it('a focal point without both coordinates in 0-1 is 400, as the reference', async () => {
    for (const q of ['gravity=fp', 'gravity=fp&x_offset=0.5', 'gravity=fp&x_offset=2&y_offset=0.5']) {
      const res = await render(`/render/image/public/${bucket}/halves.png?${box}&${q}`);
      expect(res.status, q).toBe(400);
      expect(JSON.parse(res.body.toString())).toMatchObject({ code: 'InvalidParameter' });
    }
    expect((await render(`/render/image/public/${bucket}/halves.png?${box}&gravity=up`)).status).toBe(400);
  });

  it('a signed render URL carries the focal point and applies it', async () => {
    const { data, error } = await h.service.from(bucket).createSignedUrl('halves.png', 60, {
      transform: {
        width: 5,
        height: 5,
        format: 'origin',
        ...({ gravity: 'fp', x_offset: 1, y_offset: 0 } as object),
      },
    });
    expect(error).toBeNull();
    const url = new URL(data?.signedUrl ?? '');
    const signed = await render(`${url.pathname.replace(/^.*\/storage\/v1/, '')}${url.search}`);
    expect(signed.status).toBe(200);
    expect(signed.color).toBe('blue');
    expect(signed.res.headers.get('x-transformations')).toContain('gravity:fp:1:0');
  });
});

describe('render sources', () => {
  it('a PNG with a wrong chunk checksum renders, as imgproxy renders it', async () => {
    const res = await render(`/render/image/public/${bucket}/crc.png?width=1&height=1`);
    expect(res.status).toBe(200);
    expect(res.res.headers.get('content-type')).toMatch(/^image\//);
  });
});
