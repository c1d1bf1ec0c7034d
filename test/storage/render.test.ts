/**
 * Image transformations (/render/image/{authenticated,public,sign}) through the real
 * @supabase/storage-js (download / getPublicUrl / createSignedUrl with `transform`), decoded with
 * sharp to check what was rendered.
 */
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Gate } from '../../src/storage/image/gate.js';
import { bucketName, startStorage, type StorageHarness } from '../support/storage.js';

let h: StorageHarness;

function must<T>(v: T | null | undefined): T {
  if (v === null || v === undefined) throw new Error('expected a value');
  return v;
}
let pub: string;
let priv: string;

async function image(format: 'jpeg' | 'png' | 'webp', width = 400, height = 200): Promise<Buffer> {
  // Noise, so that encoder quality makes a visible difference in size.
  const base = sharp({
    create: {
      width,
      height,
      channels: 3,
      background: { r: 0, g: 0, b: 0 },
      noise: { type: 'gaussian', mean: 128, sigma: 40 },
    },
  });
  return base.toFormat(format).toBuffer();
}

async function fetchImage(url: string, init: RequestInit = {}) {
  const res = await fetch(url, init);
  const body = Buffer.from(await res.arrayBuffer());
  const meta = res.headers.get('content-type')?.startsWith('image/')
    ? await sharp(body).metadata()
    : undefined;
  return { res, body, meta };
}

beforeAll(async () => {
  h = await startStorage('file');
  pub = bucketName('img-pub');
  priv = bucketName('img-priv');
  await h.service.createBucket(pub, { public: true });
  await h.service.createBucket(priv, { public: false });
  for (const b of [pub, priv]) {
    for (const f of ['jpeg', 'png', 'webp'] as const) {
      const { error } = await h.service
        .from(b)
        .upload(`cat.${f}`, await image(f), { contentType: `image/${f}` });
      expect(error).toBeNull();
    }
    await h.service.from(b).upload('notes.txt', 'not an image', { contentType: 'text/plain' });
  }
});
afterAll(async () => h?.close());

describe('hostile input first', () => {
  it('non-images answer 400 with the reference error, JSON not image', async () => {
    const url = h.service.from(pub).getPublicUrl('notes.txt', { transform: { width: 10 } }).data.publicUrl;
    const { res, body } = await fetchImage(url);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(JSON.parse(body.toString())).toEqual({
      statusCode: '400',
      code: 'InvalidRequest',
      error: 'InvalidRequest',
      message: 'The source image is invalid or unsupported for rendering',
    });
    const dl = await h.service.from(priv).download('notes.txt', { transform: { width: 10 } });
    expect(dl.data).toBeNull();
    expect(dl.error).toBeTruthy();
  });

  it('invalid options are validation errors naming the field', async () => {
    for (const [qs, msg] of [
      ['width=-1', 'querystring/width must be >= 0'],
      ['width=abc', 'querystring/width must be integer'],
      ['resize=stretch', 'querystring/resize must be equal to one of the allowed values'],
      ['quality=5', 'querystring/quality must be >= 20'],
      ['quality=101', 'querystring/quality must be <= 100'],
      ['format=bmp', 'querystring/format must be equal to one of the allowed values'],
    ]) {
      const res = await h.api(`/render/image/public/${pub}/cat.png?${qs}`);
      expect(res.status, qs).toBe(400);
      expect(await res.json()).toMatchObject({ statusCode: '400', message: msg });
    }
  });

  it('private buckets are not public; authenticated needs a token; missing objects are 404-ish', async () => {
    const res = await h.api(`/render/image/public/${priv}/cat.png?width=10`);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ statusCode: '404', message: 'Bucket not found' });
    const noAuth = await h.api(`/render/image/authenticated/${priv}/cat.png?width=10`);
    expect(noAuth.status).toBe(400);
    const anon = await h.anon.from(priv).download('cat.png', { transform: { width: 10 } });
    expect(anon.error).toBeTruthy();
    const missing = await h.api(`/render/image/public/${pub}/nope.png?width=10`);
    expect(await missing.json()).toMatchObject({ statusCode: '404', error: 'not_found' });
    const nul = await h.api(`/render/image/public/${pub}/a%00b.png?width=10`);
    expect(nul.status).toBe(400);
    expect(await nul.json()).toMatchObject({ code: 'InvalidKey' });
  });

  it('signed render tokens are bound to their path and checked', async () => {
    const { data } = await h.service.from(pub).createSignedUrl('cat.png', 60, { transform: { width: 50 } });
    const token = new URL(must(data).signedUrl).searchParams.get('token') ?? '';
    const other = await h.api(`/render/image/sign/${pub}/cat.jpeg?token=${token}`);
    expect(other.status).toBe(400);
    expect(await other.json()).toMatchObject({ code: 'InvalidSignature' });
    const bad = await h.api(`/render/image/sign/${pub}/cat.png?token=x.y.z`);
    expect(await bad.json()).toMatchObject({ code: 'InvalidJWT' });
    const none = await h.api(`/render/image/sign/${pub}/cat.png`);
    expect(await none.json()).toMatchObject({ message: "querystring must have required property 'token'" });
  });
});

describe('transformations of JPEG, PNG and WebP', () => {
  for (const f of ['jpeg', 'png', 'webp'] as const) {
    it(`${f}: width, height and the three resize modes`, async () => {
      const from = h.service.from(pub);
      const w = await fetchImage(
        from.getPublicUrl(`cat.${f}`, { transform: { width: 100, format: 'origin' } }).data.publicUrl,
      );
      expect(w.res.status).toBe(200);
      expect(w.res.headers.get('content-type')).toBe(`image/${f}`);
      expect(w.meta).toMatchObject({ format: f, width: 100, height: 50 });
      expect(w.res.headers.get('x-transformations')).toBe('width:100,resizing_type:fill');

      const hgt = await fetchImage(
        from.getPublicUrl(`cat.${f}`, { transform: { height: 20, format: 'origin' } }).data.publicUrl,
      );
      expect(hgt.meta).toMatchObject({ width: 40, height: 20 });

      const cover = await fetchImage(
        from.getPublicUrl(`cat.${f}`, {
          transform: { width: 100, height: 100, resize: 'cover', format: 'origin' },
        }).data.publicUrl,
      );
      expect(cover.meta).toMatchObject({ width: 100, height: 100 });
      const contain = await fetchImage(
        from.getPublicUrl(`cat.${f}`, {
          transform: { width: 100, height: 100, resize: 'contain', format: 'origin' },
        }).data.publicUrl,
      );
      expect(contain.meta).toMatchObject({ width: 100, height: 50 });
      const fill = await fetchImage(
        from.getPublicUrl(`cat.${f}`, {
          transform: { width: 100, height: 100, resize: 'fill', format: 'origin' },
        }).data.publicUrl,
      );
      expect(fill.meta).toMatchObject({ width: 100, height: 100 });
      expect(fill.res.headers.get('x-transformations')).toBe('height:100,width:100,resizing_type:force');
    });

    it(`${f}: quality changes the bytes of lossy outputs; WebP when Accept allows; AVIF on request`, async () => {
      const from = h.service.from(pub);
      const url = (t: Record<string, unknown>) =>
        from.getPublicUrl(`cat.${f}`, { transform: t as { width: number } }).data.publicUrl;
      const webp = await fetchImage(url({ width: 120 }), {
        headers: { accept: 'image/avif,image/webp,*/*' },
      });
      expect(webp.res.headers.get('content-type')).toBe('image/webp');
      expect(webp.meta?.format).toBe('webp');
      expect(webp.res.headers.get('vary')).toBe('Accept');
      const plain = await fetchImage(url({ width: 120 }), { headers: { accept: 'image/png,*/*' } });
      expect(plain.res.headers.get('content-type')).toBe(`image/${f}`);
      const avif = await fetchImage(`${url({ width: 120 })}&format=avif`);
      expect(avif.res.headers.get('content-type')).toBe('image/avif');
      expect(avif.meta?.format).toBe('heif');
      const q20 = await fetchImage(`${url({ width: 300, quality: 20 })}`, {
        headers: { accept: 'image/webp' },
      });
      const q95 = await fetchImage(`${url({ width: 300, quality: 95 })}`, {
        headers: { accept: 'image/webp' },
      });
      expect(q20.res.headers.get('x-transformations')).toContain('quality:20');
      expect(q20.body.length).toBeLessThan(q95.body.length);
    });
  }

  it('authenticated download with transform, and createSignedUrl with transform → /render/image/sign', async () => {
    const dl = await h.service
      .from(priv)
      .download('cat.jpeg', { transform: { width: 80, format: 'origin' } });
    expect(dl.error).toBeNull();
    const buf = Buffer.from(await must(dl.data).arrayBuffer());
    expect(await sharp(buf).metadata()).toMatchObject({ format: 'jpeg', width: 80, height: 40 });
    expect(dl.data?.type).toBe('image/jpeg');

    const { data, error } = await h.service.from(priv).createSignedUrl('cat.png', 60, {
      transform: { width: 60, height: 60, resize: 'contain', format: 'origin' },
    });
    expect(error).toBeNull();
    expect(data?.signedUrl).toContain(`/render/image/sign/${priv}/cat.png?token=`);
    const signed = await fetchImage(must(data).signedUrl);
    expect(signed.res.status).toBe(200);
    expect(signed.res.headers.get('expires')).toBeTruthy();
    expect(signed.res.headers.get('cache-control')).toBeNull();
    expect(signed.meta).toMatchObject({ format: 'png', width: 60, height: 30 });

    const plainSigned = await h.service.from(priv).createSignedUrl('cat.png', 60);
    expect(plainSigned.data?.signedUrl).toContain('/object/sign/');
  });

  it('downloads through render with ?download set Content-Disposition', async () => {
    const url = h.service.from(pub).getPublicUrl('cat.png', { download: 'x.png', transform: { width: 10 } })
      .data.publicUrl;
    const r = await fetchImage(url);
    expect(r.res.headers.get('content-disposition')).toBe(
      "attachment; filename=x.png; filename*=UTF-8''x.png;",
    );
  });
});

describe('the variant cache', () => {
  it('the second identical request is a cache hit; a changed object is rendered anew', async () => {
    const from = h.service.from(pub);
    await from.upload('cache.png', await image('png', 300, 300), { contentType: 'image/png' });
    const url = from.getPublicUrl('cache.png', { transform: { width: 77, format: 'origin' } }).data.publicUrl;
    const first = await fetchImage(url);
    expect(first.res.headers.get('x-strata-render-cache')).toBe('MISS');
    const second = await fetchImage(url);
    expect(second.res.headers.get('x-strata-render-cache')).toBe('HIT');
    expect(second.body.equals(first.body)).toBe(true);
    expect(second.meta).toMatchObject({ width: 77, height: 77 });
    // A different option is another variant.
    const other = await fetchImage(`${url}&height=10`);
    expect(other.res.headers.get('x-strata-render-cache')).toBe('MISS');

    // Overwrite: new version, so the old render must not be served.
    await from.upload('cache.png', await image('png', 300, 150), { contentType: 'image/png', upsert: true });
    const after = await fetchImage(url);
    expect(after.res.headers.get('x-strata-render-cache')).toBe('MISS');
    expect(after.meta).toMatchObject({ width: 77, height: 38 });
    expect((await fetchImage(url)).res.headers.get('x-strata-render-cache')).toBe('HIT');
  });
});

describe('limits', () => {
  let small: StorageHarness;
  let b: string;
  beforeAll(async () => {
    small = await startStorage('file', {
      image: {
        enabled: true,
        maxSourceBytes: 100_000,
        maxSourcePixels: 250_000,
        maxDimension: 64,
        concurrency: 1,
        queueLimit: 0,
        cacheBytes: 0,
      },
    });
    b = bucketName('lim');
    await small.service.createBucket(b, { public: true });
    await small.service.from(b).upload('ok.png', await image('png', 200, 100), { contentType: 'image/png' });
    await small.service.from(b).upload(
      'wide.png',
      await sharp({ create: { width: 1000, height: 300, channels: 3, background: 'white' } })
        .png()
        .toBuffer(),
      { contentType: 'image/png' },
    );
    await small.service
      .from(b)
      .upload('heavy.png', await image('png', 300, 300), { contentType: 'image/png' });
  });
  afterAll(async () => small?.close());

  it('output dimensions are clamped; too many source pixels or bytes are refused as the reference words it', async () => {
    const url = (k: string, qs: string) => `${small.base}/render/image/public/${b}/${k}?${qs}`;
    const clamped = await fetchImage(url('ok.png', 'width=5000&height=5000&resize=fill&format=origin'));
    expect(clamped.meta).toMatchObject({ width: 64, height: 64 });
    expect(clamped.res.headers.get('x-transformations')).toBe('height:64,width:64,resizing_type:force');
    const pixels = await fetchImage(url('wide.png', 'width=10'));
    expect(pixels.res.status).toBe(400);
    expect(JSON.parse(pixels.body.toString())).toMatchObject({
      message: 'The source image resolution is too large to process',
    });
    const bytes = await fetchImage(url('heavy.png', 'width=10'));
    expect(bytes.res.status).toBe(400);
    expect(JSON.parse(bytes.body.toString())).toMatchObject({
      message: 'The source image file is too large to process',
    });
  });

  it('a burst beyond concurrency + queue is refused with 429, never a 500', async () => {
    const url = `${small.base}/render/image/public/${b}/ok.png?width=30&quality=`;
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        fetch(`${url}${30 + i}`).then(async (r) => ({ status: r.status, body: await r.text() })),
      ),
    );
    const statuses = replies.map((r) => r.status);
    expect(statuses).toContain(200);
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
    for (const r of replies.filter((x) => x.status === 429))
      expect(JSON.parse(r.body)).toMatchObject({ statusCode: '429', code: 'SlowDown' });
  });
});

describe('the concurrency gate', () => {
  it('runs `limit` at once, queues `queueLimit`, refuses the rest at once', async () => {
    const gate = new Gate(1, 1, () => new Error('busy'));
    let release: () => void = () => {};
    const first = gate.run(() => new Promise<string>((resolve) => (release = () => resolve('first'))));
    const order: string[] = [];
    const second = gate.run(async () => {
      order.push('second ran');
      return 'second';
    });
    await expect(gate.run(async () => 'third')).rejects.toThrow('busy');
    expect(order).toEqual([]);
    release();
    expect(await first).toBe('first');
    expect(await second).toBe('second');
    expect(await gate.run(async () => 'fourth')).toBe('fourth');
  });
});

describe('on the S3 storage backend', () => {
  let hs: StorageHarness;
  beforeAll(async () => {
    hs = await startStorage('s3');
  });
  afterAll(async () => hs?.close());

  it('renders and caches the same way', async () => {
    const b = bucketName('img-s3');
    await hs.service.createBucket(b, { public: true });
    await hs.service.from(b).upload('x.jpeg', await image('jpeg', 120, 60), { contentType: 'image/jpeg' });
    const url = hs.service.from(b).getPublicUrl('x.jpeg', { transform: { width: 30, format: 'origin' } })
      .data.publicUrl;
    const first = await fetchImage(url);
    expect(first.meta).toMatchObject({ format: 'jpeg', width: 30, height: 15 });
    expect(first.res.headers.get('x-strata-render-cache')).toBe('MISS');
    expect((await fetchImage(url)).res.headers.get('x-strata-render-cache')).toBe('HIT');
  });
});
