/**
 * Live-query scopes of one project database, cached at one schema version: the policy facts per
 * role (policy-facts.ts, one query per role and version) and the scope per (role, document,
 * operation, variables) (read-set.ts, from the engine's plan against the role's catalog). When a
 * load or a check sees another schema version, everything cached is dropped and `onStale` says
 * the groups must be rebuilt (their keys and read sets may be wrong now).
 */
import type pg from 'pg';
import type { Principal } from '../db/with-role.js';
import { compile } from '../graphql/engine.js';
import { catalogOnPool } from '../graphql/execute/run-pool.js';
import type { LiveRequest } from './live-request.js';
import { loadScopeFacts, type ScopeFacts } from './policy-facts.js';
import { opaqueScope, scopeOf, type SetScope } from './read-set.js';

/** More cached scopes than this: the cache starts again (each is one plan's walk). */
const MAX_SCOPES = 20_000;

export class Scopes {
  /** The schema version of everything cached (undefined until a load answered). */
  private version: number | undefined;
  private readonly facts = new Map<string, Promise<ScopeFacts | undefined>>();
  private readonly scopes = new Map<string, Promise<SetScope>>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly onStale: () => void,
  ) {}

  /** The scope of a member's live query; an opaque one when the database cannot tell. */
  scopeOf(principal: Principal, request: LiveRequest): Promise<SetScope> {
    const key = JSON.stringify([principal.role, request.operationName, request.query, request.variables]);
    let p = this.scopes.get(key);
    if (!p) {
      if (this.scopes.size >= MAX_SCOPES) this.scopes.clear();
      p = this.load(principal, request);
      this.scopes.set(key, p);
      // Not kept when it could not be told (the next member tries again) or the version moved on.
      const mine = p;
      void p.then((s) => {
        if ((s.version === undefined || s.version !== this.version) && this.scopes.get(key) === mine)
          this.scopes.delete(key);
      });
    }
    return p;
  }

  /**
   * The schema version is `v` now (a check's answer): when it is not the cached one, the cache is
   * dropped. True when scopes computed before are stale.
   */
  seen(v: number): boolean {
    if (this.version === v) return false;
    const stale = this.version !== undefined;
    this.version = v;
    this.facts.clear();
    this.scopes.clear();
    if (stale) this.onStale();
    return stale;
  }

  private async load(principal: Principal, request: LiveRequest): Promise<SetScope> {
    const facts = await this.factsOf(principal.role);
    if (!facts) return opaqueScope();
    try {
      // The catalog is checked against the version now, after the facts were loaded: not older.
      const catalog = await catalogOnPool(this.pool, principal);
      const compiled = compile(catalog, {
        query: request.query,
        variables: request.variables,
        operationName: request.operationName,
      });
      return scopeOf(compiled, facts);
    } catch {
      return opaqueScope();
    }
  }

  private factsOf(role: string): Promise<ScopeFacts | undefined> {
    let p = this.facts.get(role);
    if (!p) {
      p = loadScopeFacts(this.pool, role).then(
        (f) => {
          this.seen(f.version);
          this.facts.set(role, Promise.resolve(f));
          return f;
        },
        () => {
          this.facts.delete(role);
          return undefined;
        },
      );
      this.facts.set(role, p);
    }
    return p;
  }
}
