/**
 * A group's refresh: its variable sets' requests (same document, operation, role and claims) in
 * one call. The engine's resolveBatchWithPoolText (engine.ts) answers them with one statement per
 * template in one round trip, each answer byte-identical to resolveWithPoolText's for its request.
 * Until it is there, this stand-in with the same signature runs them one after another.
 */
import type pg from 'pg';
import type { Principal } from '../db/with-role.js';
import { resolveWithPoolText, type GraphQLRequest } from '../graphql/engine.js';

export async function resolveBatchWithPoolText(
  pool: pg.Pool,
  principal: Principal,
  reqs: GraphQLRequest[],
): Promise<string[]> {
  const out: string[] = [];
  for (const r of reqs) out.push(await resolveWithPoolText(pool, principal, r));
  return out;
}

/** Statements one call runs for `n` requests (stats: `executions`). With the engine's batch: 1. */
export function statementsOf(n: number): number {
  return n;
}
