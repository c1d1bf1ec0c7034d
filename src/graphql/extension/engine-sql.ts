/**
 * The SQL text of the engine's database-side objects, as the engine gives it (its one source is
 * sql/graphql/objects.sql): the extension script's body and the digest that tells whether the
 * installed objects are current.
 */
import { loadEngine } from '../http/engine-port.js';

export async function engineObjectsSql(): Promise<string> {
  return (await loadEngine()).installSchemaSql();
}

/** Names of the event triggers the SQL creates (they live outside schema graphql). */
export function eventTriggerNames(sql: string): string[] {
  return [...sql.matchAll(/create\s+event\s+trigger\s+("?)([\w$]+)\1/gi)].map((m) => m[2]);
}
