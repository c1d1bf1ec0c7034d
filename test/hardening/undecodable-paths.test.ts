/**
 * Paths the router cannot decode (`%zz`, a lone `%`) and parameters over its length are refused
 * before any route runs. Each area answers in its own error shape with a 4xx, the project prefix
 * included; nothing is a 500 and the server answers normally afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';

let tp: TestPlatform;

beforeAll(async () => {
  tp = await startTestPlatform();
}, 120_000);

afterAll(async () => {
  await tp?.close();
});

async function get(path: string): Promise<{ status: number; type: string; text: string }> {
  const r = await fetch(tp.url + path);
  return { status: r.status, type: r.headers.get('content-type') ?? '', text: await r.text() };
}

describe('an undecodable path', () => {
  it('Storage: the Storage envelope (InvalidRequest), with and without the project prefix', async () => {
    const ref = tp.platform.defaultRef;
    for (const path of ['/storage/v1/object/%zz', `/project/${ref}/storage/v1/object/public/b/a%`]) {
      const r = await get(path);
      expect([path, r.status]).toEqual([path, 400]);
      const body = JSON.parse(r.text);
      expect(body).toMatchObject({ statusCode: '400', code: 'InvalidRequest' });
      expect(body.message).toContain('is not a valid url component');
    }
  });

  it('S3: an InvalidURI XML error', async () => {
    const r = await get('/storage/v1/s3/bucket/%zz');
    expect(r.status).toBe(400);
    expect(r.type).toContain('application/xml');
    expect(r.text).toContain('<Code>InvalidURI</Code>');
    expect(r.text).toContain('<Resource>bucket/%zz</Resource>');
  });

  it('Management API: {message}', async () => {
    const r = await get('/v1/projects/%zz/secrets');
    expect(r.status).toBe(400);
    expect(Object.keys(JSON.parse(r.text))).toEqual(['message']);
  });

  it("Edge Functions: the platform's {code, message}", async () => {
    for (const path of ['/functions/v1/%zz', '/functions/v1/hello/100%']) {
      const r = await get(path);
      expect([path, r.status]).toEqual([path, 400]);
      expect(JSON.parse(r.text)).toMatchObject({ code: 'BAD_REQUEST' });
    }
  });

  it("elsewhere: Fastify's own 400", async () => {
    const r = await get('/%zz');
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text)).toMatchObject({ code: 'FST_ERR_BAD_URL', statusCode: 400 });
  });
});

describe('a path parameter over the router length', () => {
  it('Storage and the Management API answer 4xx in their shapes; the server answers afterwards', async () => {
    const long = 'a'.repeat(150);
    const storage = await get(`/storage/v1/bucket/${long}`);
    expect(storage.status).toBe(400);
    expect(JSON.parse(storage.text)).toMatchObject({ statusCode: '400', code: 'InvalidRequest' });
    const management = await get(`/v1/projects/${long}/secrets`);
    expect(management.status).toBeGreaterThanOrEqual(400);
    expect(management.status).toBeLessThan(500);
    expect(Object.keys(JSON.parse(management.text))).toEqual(['message']);
    expect((await get('/health')).status).toBe(200);
  });
});
