/**
 * The GraphQL API over HTTP in tests: a request and its answer as status, headers, text and
 * JSON (when the text is JSON), POST or GET; and a project's endpoint on a test platform.
 */
import type { TestPlatform } from './platform.js';

export interface HttpResult {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: response JSON, asserted by each test
  json: any;
}

export async function http(url: string, init: RequestInit = {}): Promise<HttpResult> {
  const res = await fetch(url, init);
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, headers: res.headers, text, json };
}

export function postGraphQL(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<HttpResult> {
  return http(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export function getGraphQL(
  url: string,
  params: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<HttpResult> {
  return http(`${url}?${new URLSearchParams(params)}`, {
    headers: { accept: 'application/json', ...headers },
  });
}

/** `tp`'s GraphQL endpoint: /graphql/v1 (the default project), or /project/<ref>/graphql/v1. */
export function graphqlUrl(tp: TestPlatform, ref?: string): string {
  return ref === undefined ? `${tp.url}/graphql/v1` : `${tp.url}/project/${ref}/graphql/v1`;
}
