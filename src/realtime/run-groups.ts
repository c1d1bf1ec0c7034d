/**
 * A refresh's statements: each group's variable sets in one call (the engine's resolveBatchWithPoolText: one statement per SQL text, one round trip), at most
 * `concurrency` groups at once, and the results pushed to the subscribers whose hash they change.
 * A narrow group's results (its key holds only some claims) are handed back instead: they are
 * pushed only once the schema version they were keyed at is confirmed (live-queries.ts).
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { Group, VarSet } from './live-groups.js';
import { resolveBatchWithPoolText } from '../graphql/engine.js';
import { RawResult } from './raw-result.js';

export interface Ran {
  set: VarSet;
  text: string;
}

export interface RunCounts {
  executions: number;
  refreshedSets: number;
}

/** Pushes each result to its set's subscribers (a subscriber gets it only if it differs from their last). */
export function publish(results: Ran[]): void {
  for (const { set, text } of results) {
    if (set.dead) continue;
    const hash = createHash('sha256').update(text).digest('base64');
    if (set.last?.hash !== hash) set.last = { result: new RawResult(text), hash };
    const last = set.last;
    for (const m of set.members) m.stream.push(last.result, last.hash);
  }
}

/** Runs the groups' sets; answers the narrow groups' results and the sets whose run failed. */
export async function runGroups(
  pool: pg.Pool,
  runs: Map<Group, Set<VarSet>>,
  concurrency: number,
  counts: RunCounts,
): Promise<{ held: Ran[]; failed: VarSet[] }> {
  const queue = [...runs];
  const held: Ran[] = [];
  const failed: VarSet[] = [];
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const [g, set] = next;
      const sets = [...set];
      // The project's pool was closed (deleted or moved project, new JWT secret): the caller retires.
      if (pool.ending) return;
      const reqs = sets.map((s) => ({
        query: g.query,
        operationName: g.operationName,
        variables: s.variables,
      }));
      counts.refreshedSets += sets.length;
      let texts: string[];
      try {
        texts = await resolveBatchWithPoolText(pool, g.principal, reqs, {
          onStatements: (n) => {
            counts.executions += n;
          },
        });
      } catch {
        // The database is unreachable: the next refresh tries again.
        failed.push(...sets);
        continue;
      }
      const out = sets.map((set, i) => ({ set, text: texts[i] as string }));
      if (g.narrow) held.push(...out);
      else publish(out);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, queue.length) }, worker));
  return { held, failed };
}
