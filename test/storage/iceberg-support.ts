/** Helpers of the Iceberg catalog tests: raw requests to /storage/v1/iceberg and a table payload. */
import { expect } from 'vitest';
import { type StorageHarness, uuid } from '../support/storage.js';

export interface Reply {
  status: number;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: test replies are read loosely
  json: any;
}

export const hex = () => uuid().replace(/-/g, '').slice(0, 10);

/** `ice(method, path, body?, token?)`: the service role's token unless given (null: none). */
export function icebergClient(harness: () => StorageHarness) {
  async function ice(method: string, path: string, body?: unknown, token?: string | null): Promise<Reply> {
    const h = harness();
    const init: RequestInit & { token?: string } = { method };
    if (token !== null) init.token = token ?? h.project.serviceRoleKey;
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      init.headers = { 'content-type': 'application/json' };
    }
    const res = await h.api(`/iceberg${path}`, init);
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, text, json };
  }

  /** A new analytics bucket with one namespace. */
  async function warehouse(): Promise<{ bucket: string; ns: string }> {
    const bucket = `wh-${hex()}`;
    const ns = `ns${hex()}`;
    expect((await ice('POST', '/bucket', { name: bucket })).status).toBe(200);
    expect((await ice('POST', `/v1/${bucket}/namespaces`, { namespace: ns })).status).toBe(200);
    return { bucket, ns };
  }

  return { ice, warehouse };
}

/** A create-table body: ids 10, 20 (list element 30), 40, partitioned by `day`. */
export const tablePayload = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  properties: { purpose: 'test' },
  schema: {
    type: 'struct',
    'schema-id': 7,
    'identifier-field-ids': [10],
    fields: [
      { id: 10, name: 'id', required: true, type: 'long' },
      {
        id: 20,
        name: 'tags',
        required: false,
        type: { type: 'list', 'element-id': 30, element: 'string', 'element-required': false },
      },
      { id: 40, name: 'day', required: false, type: 'date' },
    ],
  },
  spec: { 'spec-id': 0, fields: [{ 'source-id': 40, transform: 'identity', name: 'day' }] },
  'write-order': { 'order-id': 0, fields: [] },
  ...extra,
});
