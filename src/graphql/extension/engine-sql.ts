/**
 * The SQL text of the engine's database-side objects, taken from the engine itself so that the
 * extension script and installSchema() can never disagree: the engine's `installSchemaSql(client)`
 * when it exports one, else the statements installSchema() sends, recorded: its catalog reads
 * (SELECT) run for real on the given client, everything else is kept and not run.
 */
import type pg from 'pg';
import { inlineParams } from '../../db/sql-text.js';
import { engineInstallSqlExport, loadEngine } from '../http/engine-port.js';

const TRANSACTION_CONTROL = /^\s*(begin|start\s+transaction|commit|end|rollback|savepoint\b|release\b)/i;
const ADVISORY_LOCKS = /^\s*select\s+pg_(try_)?advisory_(xact_)?(un)?lock/i;

type QueryArg = string | { text: string; values?: unknown[] };

const READ = /^\s*(select|with)\b/i;

/** A stand-in client: reads go to the real client, the rest is kept (not run) and answered with no rows. */
class RecordingClient {
  readonly statements: string[] = [];
  constructor(private readonly real: pg.ClientBase) {}
  async query(q: QueryArg, values?: unknown[]): Promise<unknown> {
    const text = typeof q === 'string' ? q : q.text;
    const params = (typeof q === 'string' ? values : (q.values ?? values)) ?? [];
    if (ADVISORY_LOCKS.test(text) || TRANSACTION_CONTROL.test(text))
      return { rows: [], rowCount: 0, command: '', fields: [] };
    if (READ.test(text) && !text.includes(';')) return this.real.query(text, params);
    this.statements.push(inlineParams(text, params).trim().replace(/;\s*$/, ''));
    return { rows: [], rowCount: 0, command: '', fields: [] };
  }
}

export interface EngineSql {
  sql: string;
  /** Where it came from: the engine's export, or recorded from installSchema(). */
  source: string;
}

export async function engineObjectsSql(client: pg.ClientBase): Promise<EngineSql> {
  const engine = await loadEngine();
  const exported = engineInstallSqlExport();
  if (typeof exported === 'string') return { sql: exported, source: 'engine' };
  if (typeof exported === 'function')
    return { sql: String(await (exported as (c: pg.ClientBase) => unknown)(client)), source: 'engine' };
  const recorder = new RecordingClient(client);
  try {
    await engine.installSchema(recorder as unknown as pg.ClientBase);
  } catch (err) {
    // An incomplete script would install an extension the engine cannot run on: refuse instead.
    throw new Error(
      `could not take the engine's install SQL from installSchema(): ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  return { sql: recorder.statements.join(';\n\n') + ';\n', source: 'recorded' };
}

/** Names of the event triggers the SQL creates (they live outside schema graphql). */
export function eventTriggerNames(sql: string): string[] {
  return [...sql.matchAll(/create\s+event\s+trigger\s+("?)([\w$]+)\1/gi)].map((m) => m[2]);
}
