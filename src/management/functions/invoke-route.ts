/**
 * `POST /v1/projects/{ref}/functions/{function_slug}/invoke` (a Strata extension, the console's
 * request builder): sends one request to the project's function as `anon`, `service_role` or an
 * `authenticated` user, and answers what the function answered as data — `{status, headers, body,
 * body_encoding, truncated, duration_ms}` — never as the function's own response. So the console
 * (on its own origin) can try a function without the function answering CORS, and nothing the
 * function returns is ever rendered or run on the console's origin. The request goes through the
 * same routing, limits and `verify_jwt` check as any client's (Fastify's in-process inject on
 * `/project/<ref>/functions/v1/<slug>…`). Who may read the project's service_role key may already
 * call the function with it: the same permission as api-keys.
 */
import { Type } from '@sinclair/typebox';
import { signUserToken } from '../role-tokens/user-token.js';
import type { ManagementModule } from '../http/module.js';
import { ApiError } from '../http/errors.js';
import { projectOf } from '../http/project-access.js';
import { Strict, StringEnum } from '../http/schemas.js';

/** What the function's answer may weigh in the reply; the rest is cut (`truncated: true`). */
const MAX_BODY_BYTES = 1024 * 1024;
const MAX_REQUEST_BODY_BYTES = 1024 * 1024;
const USER_TOKEN_TTL_SECONDS = 300;
/** How long a test request may take, body included. */
const TIMEOUT_MS = 60_000;
/** Headers the role decides or the transport owns; a caller's own values for them are ignored. */
const RESERVED = new Set([
  'authorization',
  'apikey',
  'host',
  'content-length',
  'connection',
  'transfer-encoding',
]);

const InvokeBody = Strict({
  method: StringEnum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD']),
  /** After the function's name: `''`, `/sub/path`, `?query`. */
  path: Type.Optional(Type.String({ maxLength: 2048, pattern: '^(|[/?][^#\\s\\u0000-\\u001f\\u007f]*)$' })),
  headers: Type.Optional(
    Type.Record(
      Type.String({ pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$" }),
      Type.String({ maxLength: 8192, pattern: '^[^\\u0000-\\u0008\\u000a-\\u001f\\u007f]*$' }),
      { additionalProperties: false, maxProperties: 100 },
    ),
  ),
  body: Type.Optional(Type.String({ maxLength: MAX_REQUEST_BODY_BYTES })),
  role: StringEnum(['anon', 'service_role', 'authenticated']),
  sub: Type.Optional(
    Type.String({ pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' }),
  ),
});

const SlugParams = Type.Object({
  ref: Type.String(),
  function_slug: Type.String({ pattern: '^[A-Za-z0-9_-]{1,100}$' }),
});

function isText(contentType: string | undefined, bytes: Buffer): boolean {
  if (
    contentType &&
    /^(text\/|application\/(json|xml|javascript|x-www-form-urlencoded)|[^;]*\+(json|xml))/i.test(contentType)
  )
    return true;
  if (contentType) return false;
  return !bytes.includes(0);
}

export const functionInvokeRoutes: ManagementModule = async (app) => {
  app.post(
    '/projects/:ref/functions/:function_slug/invoke',
    {
      schema: { params: SlugParams, body: InvokeBody },
      config: { failureMessage: 'Failed to invoke the function' },
    },
    async (req) => {
      const { method, path = '', headers = {}, body, role, sub } = req.body;
      const ctx = await projectOf(req).context();
      let token: string;
      if (role === 'anon') token = ctx.anonKey;
      else if (role === 'service_role') token = ctx.serviceRoleKey;
      else {
        ({ token } = await signUserToken(
          ctx,
          sub ?? '00000000-0000-4000-8000-000000000000',
          USER_TOKEN_TTL_SECONDS,
        ));
      }
      const sent: Record<string, string> = {};
      for (const [k, v] of Object.entries(headers))
        if (!RESERVED.has(k.toLowerCase())) sent[k.toLowerCase()] = v;
      sent.apikey = role === 'authenticated' ? ctx.anonKey : token;
      sent.authorization = `Bearer ${token}`;
      const started = performance.now();
      // Streamed, and cut at MAX_BODY_BYTES: a function answering a huge (or endless) body never
      // makes this process hold more than that; a silent one is given up after the timeout.
      const stop = new AbortController();
      const timer = setTimeout(() => stop.abort(), TIMEOUT_MS);
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      let res: Awaited<ReturnType<typeof app.inject>>;
      try {
        res = await app.inject({
          method,
          url: `/project/${ctx.ref}/functions/v1/${encodeURIComponent(req.params.function_slug)}${path}`,
          headers: sent,
          payloadAsStream: true,
          signal: stop.signal,
          ...(body !== undefined && method !== 'GET' && method !== 'HEAD' ? { payload: body } : {}),
        });
        const stream = res.stream();
        try {
          for await (const chunk of stream) {
            const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
            if (size + b.length > MAX_BODY_BYTES) {
              chunks.push(b.subarray(0, MAX_BODY_BYTES - size));
              size = MAX_BODY_BYTES;
              truncated = true;
              break;
            }
            chunks.push(b);
            size += b.length;
          }
        } catch (err) {
          if (!stop.signal.aborted) throw err;
          truncated = true;
        } finally {
          stream.destroy();
        }
      } catch (err) {
        if (stop.signal.aborted)
          throw new ApiError(504, `The function did not answer within ${TIMEOUT_MS / 1000} s`);
        throw err;
      } finally {
        clearTimeout(timer);
        stop.abort();
      }
      const duration_ms = Math.round((performance.now() - started) * 10) / 10;
      const bytes = Buffer.concat(chunks, size);
      const contentType = res.headers['content-type'];
      const text = isText(typeof contentType === 'string' ? contentType : undefined, bytes);
      const answered: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) {
        if (v !== undefined) answered[k] = Array.isArray(v) ? v.join(', ') : String(v);
      }
      return {
        status: res.statusCode,
        headers: answered,
        body: bytes.toString(text ? 'utf8' : 'base64'),
        body_encoding: text ? 'utf8' : 'base64',
        truncated,
        duration_ms,
      };
    },
  );
};
