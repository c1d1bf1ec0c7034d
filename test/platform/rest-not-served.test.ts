/**
 * supabase-js's first call, `from(table).select()`, goes to /rest/v1 (PostgREST on the hosted
 * platform). Strata has no REST API: the answer must be a JSON error in PostgREST's shape that
 * supabase-js surfaces as a message pointing at GraphQL, on every address form a client uses.
 */
import { createClient } from '@supabase/supabase-js';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REST_NOT_SERVED } from '../../src/platform/rest-not-served.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';

let tp: TestPlatform;
beforeAll(async () => {
  tp = await startTestPlatform();
});
afterAll(async () => {
  await tp?.close();
});

describe('/rest/v1 (supabase.from)', () => {
  it('supabase-js from().select() gets a PostgREST-shaped 404 that names /graphql/v1', async () => {
    const p = await tp.platform.defaultProject();
    for (const url of [tp.url, `${tp.url}/project/${p.ref}`]) {
      // Node 20 has no global WebSocket: supabase-js's realtime client needs `ws` (docs/ say so).
      const supabase = createClient(url, p.anonKey, {
        auth: { persistSession: false, autoRefreshToken: false },
        realtime: { transport: createRequire(import.meta.url)('ws') },
      });
      const { data, error, status } = await supabase.from('todos').select('*');
      expect(data).toBeNull();
      expect(status).toBe(404);
      expect(error).toMatchObject({ code: REST_NOT_SERVED.code, message: REST_NOT_SERVED.message });
      expect(error?.message).toContain('/graphql/v1');
    }
  });

  it('every method and the bare path answer the same JSON', async () => {
    for (const [method, path] of [
      ['GET', '/rest/v1'],
      ['POST', '/rest/v1/todos'],
      ['PATCH', '/rest/v1/todos?id=eq.1'],
      ['DELETE', '/rest/v1/rpc/x'],
    ]) {
      const res = await fetch(tp.url + path, { method });
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toEqual(REST_NOT_SERVED);
    }
  });
});
