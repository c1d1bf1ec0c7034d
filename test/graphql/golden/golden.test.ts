/**
 * Golden files of the planner (src/graphql/plan) and the transpiler (src/graphql/transpile): for
 * each document in documents.ts, its plan (__snapshots__/<name>.json) and its SQL
 * (__snapshots__/<name>.sql). A change to either shows as a diff of those files; accept an
 * intended one with `npx vitest run test/graphql/golden -u`. Each statement is also run, and a
 * query's answer must be what the engine (resolve) answers for the same document.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installSchema, resolve } from '../../../src/graphql/engine.js';
import { planRequest } from '../../../src/graphql/execute/plan.js';
import { loadCatalog } from '../../../src/graphql/introspect/load.js';
import type { Catalog } from '../../../src/graphql/introspect/model.js';
import { connect, createTestDatabase, type TestDatabase } from '../../support/database.js';
import { DOCUMENTS, GOLDEN_SCHEMA } from './documents.js';
import { planAndTranspile, planText, sqlText } from './stages.js';

let db: TestDatabase;
let client: pg.Client;
let catalog: Catalog;

beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'golden' });
  client = await connect(db.url);
  await installSchema(client);
  await client.query(GOLDEN_SCHEMA);
  catalog = await loadCatalog(client);
});
afterAll(async () => {
  await client?.end();
  await db?.drop();
});

/** Runs `fn` in a transaction that is always rolled back (mutations leave the fixed data as it is). */
async function rolledBack<T>(fn: () => Promise<T>): Promise<T> {
  await client.query('begin');
  try {
    return await fn();
  } finally {
    await client.query('rollback');
  }
}

describe('golden plans and SQL', () => {
  it('the documents have distinct names', () => {
    expect(new Set(DOCUMENTS.map((d) => d.name)).size).toBe(DOCUMENTS.length);
  });

  for (const d of DOCUMENTS) {
    it(d.name, async () => {
      const fields = planAndTranspile(catalog, d.query, d.variables, d.operationName);
      await expect(planText(fields)).toMatchFileSnapshot(`__snapshots__/${d.name}.json`);
      await expect(sqlText(fields)).toMatchFileSnapshot(`__snapshots__/${d.name}.sql`);

      // The same statements as the request pipeline plans (execute/plan.ts).
      const req = { query: d.query, variables: d.variables, operationName: d.operationName };
      const piped = planRequest(catalog, req);
      expect(piped.kind).toBe('plan');
      if (piped.kind !== 'plan') return;
      expect(piped.items.map((i) => (i.kind === 'sql' ? i.compiled : i.kind))).toEqual(
        fields.map((f) => f.compiled),
      );

      // Each statement runs; a query's answer is the engine's.
      const answers = await rolledBack(async () => {
        const out: Record<string, unknown> = {};
        for (const f of fields) {
          const { rows } = await client.query(f.compiled.sql, f.compiled.params);
          expect(rows).toHaveLength(1);
          out[f.alias] = Object.values(rows[0] as object)[0];
        }
        return out;
      });
      for (const f of fields) expect(answers[f.alias], f.alias).not.toBeNull();
      if (d.query.trimStart().startsWith('mutation')) return;
      const engine = await resolve(client, req);
      expect(engine).toEqual({ data: answers });
    });
  }
});
