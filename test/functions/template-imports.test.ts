/**
 * Deploy-time imports as the Supabase CLI's templates write them (issue 31 item 3): the type-only
 * `import "@supabase/functions-js/edge-runtime.d.ts"` (CLI 3, mapped through deno.json), and its
 * `jsr:` and esm.sh forms, are satisfied by the platform without the network, so the function
 * answers 200; an import that resolves nowhere fails the deploy with 400 naming it (it used to
 * deploy and then answer every call with 500 BOOT_ERROR).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProjectContext } from '../../src/platform/project-context.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { deploy, invokeFunction } from '../support/functions.js';

let tp: TestPlatform;
let ctx: ProjectContext;

beforeAll(async () => {
  tp = await startTestPlatform();
  ctx = await tp.platform.defaultProject();
}, 120_000);
afterAll(async () => {
  await tp?.close();
});

const dir = (slug: string) => `supabase/functions/${slug}`;

async function call(slug: string): Promise<{ status: number; text: string }> {
  const res = await invokeFunction(tp, ctx.ref, slug, {
    method: 'POST',
    headers: { authorization: `Bearer ${ctx.anonKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Strata' }),
  });
  return { status: res.status, text: await res.text() };
}

const HANDLER = `Deno.serve(async (req) => {
  const { name } = await req.json();
  return Response.json({ message: \`Hello \${name}!\` });
});
`;

describe('imports of the CLI templates', { timeout: 120_000 }, () => {
  it('CLI 3 template: the bare edge-runtime.d.ts import mapped by deno.json deploys and answers 200', async () => {
    const slug = 'tpl-cli3';
    const r = await deploy(
      tp,
      ctx.ref,
      slug,
      {
        [`${dir(slug)}/index.ts`]: `import "@supabase/functions-js/edge-runtime.d.ts";\nimport { who } from "@/who.ts";\n${HANDLER.replace('Hello', `\${who}`)}`,
        [`${dir(slug)}/lib/who.ts`]: `export const who = "Hi";\n`,
        [`${dir(slug)}/deno.json`]: JSON.stringify({
          imports: { '@supabase/functions-js': 'jsr:@supabase/functions-js@^2', '@/': './lib/' },
        }),
      },
      { import_map_path: `${dir(slug)}/deno.json` },
    );
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const res = await call(slug);
    expect(res, res.text).toEqual({ status: 200, text: JSON.stringify({ message: 'Hi Strata!' }) });
  });

  it('older templates: the jsr: and esm.sh forms without an import map', async () => {
    for (const [slug, spec] of [
      ['tpl-jsr', 'jsr:@supabase/functions-js/edge-runtime.d.ts'],
      ['tpl-esm', 'https://esm.sh/@supabase/functions-js/src/edge-runtime.d.ts'],
    ] as const) {
      const r = await deploy(tp, ctx.ref, slug, {
        [`${dir(slug)}/index.ts`]: `import "${spec}";\n${HANDLER}`,
      });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      expect(await call(slug)).toEqual({ status: 200, text: JSON.stringify({ message: 'Hello Strata!' }) });
    }
  });

  it('an import in no import map fails the deploy with 400 naming it, and nothing is deployed', async () => {
    const slug = 'tpl-missing';
    const r = await deploy(
      tp,
      ctx.ref,
      slug,
      {
        [`${dir(slug)}/index.ts`]: `import "@supabase/functions-js/edge-runtime.d.ts";\nimport { nothing } from "no-such-package/thing.ts";\nconsole.log(nothing);\n${HANDLER}`,
        [`${dir(slug)}/deno.json`]: JSON.stringify({ imports: {} }),
      },
      { import_map_path: `${dir(slug)}/deno.json` },
    );
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.message).toContain('no-such-package/thing.ts');
    expect(r.body.message).not.toContain(tp.dataDir);
    expect((await call(slug)).status).toBe(404);
  });

  it("a function's own mapping of the types module is kept", async () => {
    const slug = 'tpl-own';
    const r = await deploy(
      tp,
      ctx.ref,
      slug,
      {
        [`${dir(slug)}/index.ts`]: `import "@supabase/functions-js/edge-runtime.d.ts";\nimport { marker } from "@supabase/functions-js/edge-runtime.d.ts";\nDeno.serve(() => new Response(String(marker)));\n`,
        [`${dir(slug)}/own.ts`]: 'export const marker = "own module";\n',
        [`${dir(slug)}/import_map.json`]: JSON.stringify({
          imports: { '@supabase/functions-js/edge-runtime.d.ts': './own.ts' },
        }),
      },
      { import_map_path: `${dir(slug)}/import_map.json` },
    );
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(await call(slug)).toEqual({ status: 200, text: 'own module' });
  });
});
