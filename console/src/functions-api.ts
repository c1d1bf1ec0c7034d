/**
 * Edge Functions through the Management API: list, sources (the deployed form), deploy (the same
 * multipart `functions/deploy` the Supabase CLI uses), delete, logs, and a test call whose answer
 * comes back as data (`functions/{slug}/invoke`), never rendered as a page.
 */
import { management, managementRaw } from './api';

export interface EdgeFunction {
  id: string;
  slug: string;
  name: string;
  status: string;
  version: number;
  created_at: number;
  updated_at: number;
  verify_jwt: boolean;
  entrypoint_path?: string;
  import_map_path?: string;
}

export interface SourceFile {
  path: string;
  text: string;
}

export interface FunctionLog {
  timestamp: string;
  type: 'invocation' | 'log';
  level: 'info' | 'error';
  message: string;
  status?: number;
  duration_ms?: number;
  error_code?: string;
}

export interface InvokeRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  role: 'anon' | 'service_role' | 'authenticated';
  sub?: string;
}

export interface InvokeAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  body_encoding: 'utf8' | 'base64';
  truncated: boolean;
  duration_ms: number;
}

export const defaultEntrypoint = (slug: string): string => `supabase/functions/${slug}/index.ts`;

export const listFunctions = (ref: string): Promise<EdgeFunction[]> =>
  management('GET', `/projects/${ref}/functions`);

/** The function's files as deployed (the stored form, or its one source file). */
export async function loadSources(ref: string, slug: string): Promise<SourceFile[]> {
  const res = await managementRaw('GET', `/projects/${ref}/functions/${encodeURIComponent(slug)}/body`, {
    headers: { accept: 'multipart/form-data' },
  });
  const form = await res.formData();
  const files: SourceFile[] = [];
  for (const [name, value] of form.entries()) {
    if (name === 'metadata' || typeof value === 'string') continue;
    files.push({ path: value.name, text: await value.text() });
  }
  return files;
}

export async function deployFunction(
  ref: string,
  slug: string,
  meta: { entrypoint_path: string; verify_jwt: boolean; import_map_path?: string },
  files: SourceFile[],
): Promise<EdgeFunction> {
  const form = new FormData();
  form.append('metadata', JSON.stringify({ ...meta, name: slug }));
  for (const f of files) form.append('file', new Blob([f.text], { type: 'application/typescript' }), f.path);
  const res = await managementRaw(
    'POST',
    `/projects/${ref}/functions/deploy?slug=${encodeURIComponent(slug)}`,
    {
      body: form,
    },
  );
  return (await res.json()) as EdgeFunction;
}

export const deleteFunction = (ref: string, slug: string): Promise<unknown> =>
  management('DELETE', `/projects/${ref}/functions/${encodeURIComponent(slug)}`);

export const functionLogs = async (ref: string, slug: string): Promise<FunctionLog[]> =>
  (
    await management<{ result: FunctionLog[] }>(
      'GET',
      `/projects/${ref}/functions/${encodeURIComponent(slug)}/logs?limit=100`,
    )
  ).result;

export const invokeFunction = (ref: string, slug: string, req: InvokeRequest): Promise<InvokeAnswer> =>
  management('POST', `/projects/${ref}/functions/${encodeURIComponent(slug)}/invoke`, req);

/** `name: value` lines → headers; blank lines skipped; a line without a colon is an error. */
export function parseHeaderLines(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (!line) continue;
    const at = line.indexOf(':');
    if (at <= 0) throw new Error(`Header line ${i + 1} is not "name: value"`);
    out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return out;
}

export const NEW_FUNCTION_SOURCE = `Deno.serve(async (req) => {
  const { name } = await req.json().catch(() => ({ name: 'world' }));
  return Response.json({ message: \`Hello \${name}!\` });
});
`;
