/**
 * Shared by the lifecycle tests: one request of each API against a running platform, and
 * polling helpers (bounded waits, never timing assertions).
 */
import { expect } from 'vitest';

export interface Target {
  url: string;
  serviceKey: string;
  accessToken: string;
}

export interface Answer {
  status: number;
  body: unknown;
  text: string;
  retryAfter: string | null;
}

async function call(url: string, init: RequestInit): Promise<Answer> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, body, text, retryAfter: res.headers.get('retry-after') };
}

export const api = {
  health: (t: Target) => call(`${t.url}/health`, {}),
  storageHealth: (t: Target) => call(`${t.url}/storage/v1/health`, { headers: { apikey: t.serviceKey } }),
  graphql: (t: Target, query = '{ notesCollection { edges { node { body } } } }') =>
    call(`${t.url}/graphql/v1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', apikey: t.serviceKey },
      body: JSON.stringify({ query }),
    }),
  storageBucket: (t: Target, id: string) =>
    call(`${t.url}/storage/v1/bucket/${id}`, {
      headers: { apikey: t.serviceKey, authorization: `Bearer ${t.serviceKey}` },
    }),
  createBucket: (t: Target, id: string) =>
    call(`${t.url}/storage/v1/bucket`, {
      method: 'POST',
      headers: {
        apikey: t.serviceKey,
        authorization: `Bearer ${t.serviceKey}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ id, name: id }),
    }),
  management: (t: Target) =>
    call(`${t.url}/v1/projects`, { headers: { authorization: `Bearer ${t.accessToken}` } }),
};

/** No driver text (ECONNREFUSED, host:port, "Connection terminated") in a client-facing answer. */
export function expectNoDriverInternals(a: Answer): void {
  expect(a.text).not.toMatch(
    /ECONN|EPIPE|ETIMEDOUT|127\.0\.0\.1:\d+|Connection terminated|terminating connection/i,
  );
}

/** The 503 of each API, in its own error shape. */
export function expectUnavailable(kind: 'graphql' | 'storage' | 'management' | 'platform', a: Answer): void {
  expect(a.status, a.text).toBe(503);
  expect(a.retryAfter).not.toBeNull();
  expectNoDriverInternals(a);
  const body = a.body as Record<string, unknown>;
  if (kind === 'graphql') {
    expect(body).toMatchObject({ errors: [{ message: expect.stringMatching(/database/i) }] });
  } else if (kind === 'storage') {
    expect(body).toMatchObject({
      statusCode: '503',
      error: expect.any(String),
      message: expect.stringMatching(/database/i),
    });
  } else {
    expect(body).toMatchObject({ message: expect.stringMatching(/database/i) });
  }
}
