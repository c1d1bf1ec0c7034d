/**
 * Hostile or broken deploy uploads at the Management API's Edge Functions routes: malformed
 * metadata and forms, file names that climb out or cannot be written, too many or too large files,
 * bad slugs, broken eszip bodies, a redeploy under load. Each ends in the documented error shape
 * and leaves nothing half-written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProjectContext } from '../../src/platform/project-context.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { type DeployAnswer, deployOne, eszipOf, invokeFunction } from '../support/functions.js';
import { eventually } from '../support/eventually.js';
import { api } from '../support/management.js';

let tp: TestPlatform;
let ctx: ProjectContext;

function stats(): { workers: number; inflight: number; connections: number } {
  return tp.functions.runtime.stats();
}

const auth = (): Record<string, string> => ({ authorization: `Bearer ${ctx.anonKey}` });

beforeAll(async () => {
  tp = await startTestPlatform();
  ctx = await tp.platform.defaultProject();
});

afterAll(async () => {
  await tp?.close();
});

describe('deploy: malformed uploads', () => {
  const url = () => `${tp.url}/v1/projects/${ctx.ref}/functions/deploy`;
  const mgmt = () => ({ authorization: `Bearer ${tp.platform.defaultAccessToken}` });

  async function post(slug: string, form: FormData): Promise<DeployAnswer> {
    const res = await fetch(`${url()}?slug=${slug}`, { method: 'POST', headers: mgmt(), body: form });
    const text = await res.text();
    return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) : text };
  }

  function form(meta: unknown, files: [string, string][]): FormData {
    const f = new FormData();
    if (meta !== undefined) f.append('metadata', typeof meta === 'string' ? meta : JSON.stringify(meta));
    for (const [name, src] of files) f.append('file', new Blob([src]), name);
    return f;
  }

  const SRC = `Deno.serve(() => new Response('ok'));`;

  it('answers 400 with a message for metadata that is missing, not JSON or of the wrong types', async () => {
    const cases: [string, FormData][] = [
      ['no metadata', form(undefined, [['index.ts', SRC]])],
      ['not json', form('{nope', [['index.ts', SRC]])],
      ['array', form('[]', [['index.ts', SRC]])],
      ['entry number', form({ entrypoint_path: 5 }, [['index.ts', SRC]])],
      ['verify_jwt string', form({ entrypoint_path: 'index.ts', verify_jwt: 'yes' }, [['index.ts', SRC]])],
      ['name object', form({ entrypoint_path: 'index.ts', name: {} }, [['index.ts', SRC]])],
      ['import map array', form({ entrypoint_path: 'index.ts', import_map_path: [] }, [['index.ts', SRC]])],
      ['name with NUL', form({ entrypoint_path: 'index.ts', name: 'a\u0000b' }, [['index.ts', SRC]])],
      ['entry with NUL', form({ entrypoint_path: 'index.ts\u0000' }, [['index.ts', SRC]])],
      ['entry elsewhere', form({ entrypoint_path: 'main.ts' }, [['index.ts', SRC]])],
      ['no files', form({ entrypoint_path: 'index.ts' }, [])],
    ];
    for (const [label, f] of cases) {
      const res = await post('malformed', f);
      expect(res.status, label).toBe(400);
      expect(typeof res.body.message, label).toBe('string');
    }
  });

  it('refuses file names that climb out, hold NUL or backslashes, or cannot be written', async () => {
    const names = [
      '../index.ts',
      'a/../../index.ts',
      'a\\index.ts',
      'a\u0000b/index.ts',
      `${'d'.repeat(300)}/index.ts`,
    ];
    for (const name of names) {
      const res = await post(
        'badnames',
        form({ entrypoint_path: 'index.ts' }, [
          ['index.ts', SRC],
          [name, ''],
        ]),
      );
      expect(res.status, JSON.stringify(name.slice(0, 30))).toBe(400);
      expect(typeof res.body.message).toBe('string');
    }
    // A file that is also a folder of another file.
    const clash = await post(
      'badnames',
      form({ entrypoint_path: 'index.ts' }, [
        ['index.ts', SRC],
        ['lib', 'x'],
        ['lib/a.ts', 'x'],
      ]),
    );
    expect(clash.status).toBe(400);
  });

  it('takes absolute paths as relative and a zero-byte file; refuses two parts for one path', async () => {
    const res = await post(
      'oddfiles',
      form({ entrypoint_path: '/abs/index.ts' }, [
        ['/abs/index.ts', `import './empty.ts';\nDeno.serve(() => new Response('abs'));`],
        ['/abs/empty.ts', ''],
      ]),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const out = await invokeFunction(tp, ctx.ref, 'oddfiles', { headers: auth() });
    expect(await out.text()).toBe('abs');
    for (const second of ['/abs/index.ts', 'abs/index.ts', 'abs//./index.ts']) {
      const dup = await post(
        'oddfiles',
        form({ entrypoint_path: '/abs/index.ts' }, [
          ['/abs/index.ts', `Deno.serve(() => new Response('first'));`],
          [second, `Deno.serve(() => new Response('second'));`],
        ]),
      );
      expect(dup.status, second).toBe(400);
      expect(dup.body.message).toContain('Duplicate file path');
    }
    expect(await invokeFunction(tp, ctx.ref, 'oddfiles', { headers: auth() }).then((r) => r.text())).toBe(
      'abs',
    );
  });

  it('runs an entrypoint whose path holds URL characters (#, ?, %, space)', async () => {
    for (const [i, entry] of ['in#dex.ts', 'a?b.ts', '%41.ts', 'my fn/index.ts'].entries()) {
      const res = await post(
        `urlish${i}`,
        form({ entrypoint_path: entry }, [[entry, `Deno.serve(() => new Response('ran ${i}'));`]]),
      );
      expect(res.status, entry).toBe(201);
      const out = await invokeFunction(tp, ctx.ref, `urlish${i}`, { headers: auth() });
      expect(await out.text(), entry).toBe(`ran ${i}`);
    }
  });

  it('refuses more than 10000 files with 400, before writing any', async () => {
    const files: [string, string][] = [['index.ts', SRC]];
    for (let i = 0; i < 10_000; i++) files.push([`f/${i}.ts`, '']);
    const res = await post('toomany', form({ entrypoint_path: 'index.ts' }, files));
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('A function may have at most 10000 files');
  });

  it('deploys a thousand tiny files', async () => {
    const files: [string, string][] = [
      ['index.ts', `import './f/0.ts';\nDeno.serve(() => new Response('many'));`],
    ];
    for (let i = 0; i < 1000; i++) files.push([`f/${i}.ts`, `export const v${i} = ${i};`]);
    const res = await post('manyfiles', form({ entrypoint_path: 'index.ts' }, files));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(await (await invokeFunction(tp, ctx.ref, 'manyfiles', { headers: auth() })).text()).toBe('many');
  });

  it('answers 400 to a truncated form, a form without boundary, and an import map that is not JSON', async () => {
    const res1 = await fetch(`${url()}?slug=trunc`, {
      method: 'POST',
      headers: { ...mgmt(), 'content-type': 'multipart/form-data; boundary=XX' },
      body: '--XX\r\ncontent-disposition: form-data; name="metadata"\r\n\r\n{"entrypoint_path":"index.ts"}\r\n--XX\r\ncontent-disposition: form-data; name="file"; filename="index.ts"\r\n\r\nDeno.se',
    });
    expect(res1.status).toBe(400);
    const res2 = await fetch(`${url()}?slug=trunc`, {
      method: 'POST',
      headers: { ...mgmt(), 'content-type': 'multipart/form-data;' },
      body: 'whatever',
    });
    expect(res2.status).toBe(400);
    const res3 = await post(
      'badmap',
      form({ entrypoint_path: 'index.ts', import_map_path: 'map.json' }, [
        ['index.ts', SRC],
        ['map.json', '{not json'],
      ]),
    );
    expect(res3.status, JSON.stringify(res3.body)).toBe(400);
    for (const slug of ['trunc', 'badmap'])
      expect((await api(tp, 'GET', `/v1/projects/${ctx.ref}/functions/${slug}`)).status).toBe(404);
  });

  it('answers 413 to a deploy over the upload limit', async () => {
    const res = await post(
      'toolarge',
      form({ entrypoint_path: 'index.ts' }, [['index.ts', 'x'.repeat(21 * 1024 * 1024)]]),
    );
    expect(res.status).toBe(413);
  });

  it('redeploying while the function is being invoked: every call answers one version', async () => {
    const version = (v: number) =>
      `Deno.serve(async () => { await new Promise((r) => setTimeout(r, 20)); return new Response('v${v}'); });`;
    expect((await deployOne(tp, ctx.ref, 'busy', version(0), { verify_jwt: false })).status).toBe(201);
    let stop = false;
    const answers: string[] = [];
    const callers = Array.from({ length: 4 }, async () => {
      while (!stop) {
        const r = await invokeFunction(tp, ctx.ref, 'busy');
        answers.push(`${r.status} ${await r.text()}`);
      }
    });
    for (let v = 1; v <= 3; v++)
      expect((await deployOne(tp, ctx.ref, 'busy', version(v), { verify_jwt: false })).status).toBe(201);
    // The last version is served once its worker has booted: up to the boot limit (30 s) on a loaded machine.
    const served = await eventually(() => answers.at(-1) === '200 v3', { timeoutMs: 30_000 }).then(
      () => true,
      () => false,
    );
    stop = true;
    await Promise.all(callers);
    expect(served, JSON.stringify(answers.slice(-12)) + ' of ' + answers.length).toBe(true);
    expect(answers.filter((a) => !/^200 v[0-3]$/.test(a))).toEqual([]);
    await eventually(() => stats().inflight === 0, { timeoutMs: 2_000 });
  });

  it('an empty entrypoint deploys and answers BOOT_ERROR', async () => {
    const res = await post('emptyentry', form({ entrypoint_path: 'index.ts' }, [['index.ts', '']]));
    expect(res.status).toBe(201);
    const out = await invokeFunction(tp, ctx.ref, 'emptyentry', { headers: auth() });
    expect(out.status).toBe(500);
    expect(out.headers.get('sb-error-code')).toBe('BOOT_ERROR');
  });

  it('refuses slugs that are too long or have invalid characters', async () => {
    for (const slug of ['a'.repeat(129), 'a%00b', 'a.b', 'a%20b', '%2e%2e']) {
      const res = await post(slug, form({ entrypoint_path: 'index.ts' }, [['index.ts', SRC]]));
      expect(res.status, slug.slice(0, 20)).toBe(400);
    }
  });

  it('garbage, truncated or bomb eszip bodies are stored as given and answer 503 BOOT_ERROR, saying why', async () => {
    const { brotliCompressSync, constants } = await import('node:zlib');
    const create = (slug: string, bytes: Buffer) =>
      fetch(`${tp.url}/v1/projects/${ctx.ref}/functions?slug=${slug}`, {
        method: 'POST',
        headers: { ...mgmt(), 'content-type': 'application/vnd.denoland.eszip' },
        body: new Uint8Array(bytes),
      });
    const eszip = await eszipOf({ 'file:///src/index.ts': `Deno.serve(() => new Response('ezbr'));` });
    // A brotli bomb: 57 KB that inflate to 300 MB, stopped at 128 MiB.
    const bomb = brotliCompressSync(Buffer.alloc(300 * 1024 * 1024), {
      params: { [constants.BROTLI_PARAM_QUALITY]: 1 },
    });
    const cases: [string, Buffer, string][] = [
      ['zipgarbage', Buffer.from('not an eszip at all'), 'eszip body could not be read'],
      ['zipezbr', Buffer.concat([Buffer.from('EZBR'), Buffer.from('junkjunk')]), 'brotli data is corrupt'],
      ['zipcut', Buffer.from(eszip).subarray(0, 40), 'eszip body could not be read'],
      ['zipbomb', Buffer.concat([Buffer.from('EZBR'), bomb]), 'decompresses to more than 128 MiB'],
    ];
    for (const [slug, bytes, why] of cases) {
      expect((await create(slug, bytes)).status, slug).toBe(201);
      const out = await invokeFunction(tp, ctx.ref, slug, { headers: auth() });
      expect(out.status, slug).toBe(503);
      expect(out.headers.get('sb-error-code')).toBe('BOOT_ERROR');
      const logs = (await api(tp, 'GET', `/v1/projects/${ctx.ref}/functions/${slug}/logs`)).body;
      expect(JSON.stringify(logs.result), slug).toContain(why);
    }
    // A sound EZBR body runs.
    expect(
      (await create('ezbr', Buffer.concat([Buffer.from('EZBR'), brotliCompressSync(eszip)]))).status,
    ).toBe(201);
    expect(await (await invokeFunction(tp, ctx.ref, 'ezbr', { headers: auth() })).text()).toBe('ezbr');
  });
});
