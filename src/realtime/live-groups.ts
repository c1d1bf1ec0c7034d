/**
 * The multiplexer's shapes: a subscriber (member) belongs to a variable set, a variable set to a
 * group. A group is the subscribers whose document, operation, role and the claims their policies
 * read are equal (read-set.ts says which claims, groupKeyOf picks them); its variable sets differ
 * only in variables and are refreshed together (resolveBatchWithPoolText).
 */
import type { Principal } from '../db/with-role.js';
import type { ClaimsRead } from './claims-read.js';
import type { LiveRequest } from './live-request.js';
import type { SetScope } from './read-set.js';
import type { GroupIndex } from './relevance.js';
import type { NewestBase, RowsDocument } from './newest-rows.js';
import type { LiveResult, Subscriber } from './subscriber.js';

export interface Member {
  stream: Subscriber;
  principal: Principal;
  request: LiveRequest;
  set: VarSet;
}

export interface VarSet {
  /** JSON of its variables. */
  key: string;
  group: Group;
  variables: Record<string, unknown> | null;
  scope: SetScope;
  members: Set<Member>;
  /** The last result and its hash (undefined until the first run ends). */
  last?: { result: LiveResult; hash: string };
  /**
   * The last result, parsed, when changed rows may be merged into it (its scope has an append
   * shape and the result was one of that shape: newest-rows.ts).
   */
  base?: NewestBase;
  /** Left its group (its members left, or the groups were rebuilt). */
  dead?: boolean;
}

export interface Group {
  key: string;
  query: string;
  operationName: string | null;
  /** The principal its statements run as (its first member's: the claims that matter are equal). */
  principal: Principal;
  /** Its key holds only some claims: its results are pushed only if the schema version held. */
  narrow: boolean;
  /** The schema version its scopes were computed at. */
  version: number | undefined;
  sets: Map<string, VarSet>;
  /** Built when a commit is judged, dropped when its sets change. */
  index?: GroupIndex<VarSet>;
  /** Its document for changed rows only (newest-rows.ts rowsDocument), per append shape; null: none. */
  rowsDocs?: Map<string, RowsDocument | null>;
}

/**
 * The group key: version, document, operation, role and the claims the scope reads (all of them
 * when it cannot tell; absent and present-but-null told apart).
 */
export function groupKeyOf(request: LiveRequest, principal: Principal, scope: SetScope): string {
  const picked = pickClaims(principal.claims, scope.claims);
  return JSON.stringify([
    scope.version ?? null,
    request.query,
    request.operationName,
    principal.role,
    picked,
  ]);
}

/** The claims at `paths` (every claim for 'all'), as a value to key by: absent and null told apart. */
export function pickClaims(claims: Record<string, unknown>, paths: ClaimsRead): unknown {
  return paths === 'all' ? claims : [...paths].sort().map((path) => [path, ...valueAt(claims, path)]);
}

/**
 * The value at a claim path (claims-read.ts), as `[value]`, or `[]` where PostgreSQL's `->` finds
 * nothing (no such key, or not an object: an array or a scalar has no member of that name).
 */
function valueAt(claims: Record<string, unknown>, path: string): [unknown] | [] {
  let at: unknown = claims;
  for (const k of JSON.parse(path) as string[]) {
    if (typeof at !== 'object' || at === null || Array.isArray(at) || !Object.hasOwn(at, k)) return [];
    at = (at as Record<string, unknown>)[k];
  }
  return [at];
}
