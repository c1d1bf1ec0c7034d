/**
 * Edge Functions in tests: deploying them through the Management API the way the CLI's
 * `--use-api` does, and invoking them at /project/<ref>/functions/v1/<slug>.
 */
import type { TestPlatform } from './platform.js';

export interface DeployAnswer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers are inspected freely in tests
  body: any;
}

/** POST /v1/projects/{ref}/functions/deploy?slug=… with metadata + one `file` part per source. */
export async function deploy(
  tp: TestPlatform,
  ref: string,
  slug: string,
  files: Record<string, string>,
  meta: { verify_jwt?: boolean; entrypoint_path?: string; import_map_path?: string; token?: string } = {},
): Promise<DeployAnswer> {
  const form = new FormData();
  const entry = meta.entrypoint_path ?? `supabase/functions/${slug}/index.ts`;
  form.append(
    'metadata',
    JSON.stringify({
      entrypoint_path: entry,
      import_map_path: meta.import_map_path,
      name: slug,
      verify_jwt: meta.verify_jwt ?? true,
    }),
  );
  for (const [path, source] of Object.entries(files)) form.append('file', new Blob([source]), path);
  const res = await fetch(`${tp.url}/v1/projects/${ref}/functions/deploy?slug=${encodeURIComponent(slug)}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${meta.token ?? tp.platform.defaultAccessToken}` },
    body: form,
  });
  const text = await res.text();
  return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) : text };
}

/** The one-file form: `supabase/functions/<slug>/index.ts`. */
export function deployOne(
  tp: TestPlatform,
  ref: string,
  slug: string,
  source: string,
  meta: { verify_jwt?: boolean; token?: string } = {},
): Promise<DeployAnswer> {
  return deploy(tp, ref, slug, { [`supabase/functions/${slug}/index.ts`]: source }, meta);
}

/**
 * An eszip bundle (as `supabase functions deploy` uploads) of TypeScript modules given by
 * specifier, the first being the entrypoint: `{ 'file:///src/index.ts': 'Deno.serve(…)' }`.
 */
export async function eszipOf(modules: Record<string, string>): Promise<Uint8Array> {
  const { build } = await import('@deno/eszip');
  const [entry] = Object.keys(modules);
  if (entry === undefined) throw new Error('eszipOf needs at least one module');
  return build([entry], async (specifier: string) => {
    const content = modules[specifier];
    return content === undefined
      ? undefined
      : { kind: 'module', specifier, headers: { 'content-type': 'application/typescript' }, content };
  });
}

/**
 * Invokes project `ref`'s function at `path` (its slug, then any sub-path and query) under
 * /project/<ref>/functions/v1/; `init` as fetch takes it.
 */
export function invokeFunction(
  tp: TestPlatform,
  ref: string,
  path: string,
  init: RequestInit = {},
): Promise<Response> {
  return fetch(`${tp.url}/project/${ref}/functions/v1/${path}`, init);
}
