/** Calls to the vector routes (`POST /vector/<op>`) for the vector tests, with status checks. */
import { expect } from 'vitest';
import type { StorageHarness } from '../support/storage.js';

export interface Reply {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: replies are read field by field in the checks
  body: any;
}

export interface VectorApi {
  /** POST /vector/<op> with a JSON body as `token` (default: the service role); `base` picks the project. */
  call(op: string, body: unknown, token?: string | null, base?: string): Promise<Reply>;
  /** A 200; its body. */
  ok(op: string, body: unknown): Promise<Reply['body']>;
  /** The error `code` with `status` (400 by default); its message. */
  refused(op: string, body: unknown, code: string, status?: number): Promise<string>;
}

export function vectorApi(h: StorageHarness): VectorApi {
  const call: VectorApi['call'] = async (op, body, token = h.project.serviceRoleKey, base = h.base) => {
    const res = await fetch(`${base}/vector/${op}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
  };
  return {
    call,
    async ok(op, body) {
      const r = await call(op, body);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body;
    },
    async refused(op, body, code, status = 400) {
      const r = await call(op, body);
      expect(r.status, JSON.stringify(r.body)).toBe(status);
      expect(r.body).toMatchObject({ statusCode: String(status), code });
      return r.body.message as string;
    },
  };
}
