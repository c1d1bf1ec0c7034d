/**
 * What the invocation path knows about deployed functions: the record (status, verify_jwt) and,
 * once needed, the worker spec — its files written once per body under
 * {dataDir}/functions/bundles/{ref}/{slug}/{sha256}/ and its environment (project secrets plus
 * SUPABASE_URL, SUPABASE_ANON_KEY, SUPABASE_SERVICE_ROLE_KEY, SUPABASE_DB_URL). Cached in memory;
 * invalidated on deploy/update/delete and on secret changes (which also recycles the running
 * workers), as the Management API announces them on the platform's function events (index.ts).
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { withUser } from '../db/pool.js';
import type { Platform } from '../platform/platform.js';
import { projectFunctionPassword, projectFunctionRole } from '../platform/project-login.js';
import type { ProjectContext } from '../platform/project-context.js';
import { bundleOf } from './bundle.js';
import { writeBundle } from './bundle-files.js';
import { getFunction, getFunctionBody, type FunctionRecord } from './function-store.js';
import { runtimeConfig } from './runtime-config.js';
import { withPlatformImports } from './platform-imports.js';
import type { FunctionSpec, FunctionsRuntime } from './runtime.js';

interface Entry {
  record?: FunctionRecord;
  spec?: Promise<FunctionSpec>;
  expires: number;
}

/** SUPABASE_DB_URL: the project's functions login (its own database only; see project-login.ts). */
function functionDatabaseUrl(platform: Platform, ctx: ProjectContext): string {
  return withUser(
    ctx.superuserUrl,
    projectFunctionRole(ctx.ref),
    projectFunctionPassword(platform.state.platformKey, ctx.ref),
  );
}

/** Records are re-read after this long even without an invalidation (another process may write). */
const RECORD_TTL_MS = 5_000;

export class FunctionCatalog {
  private readonly entries = new Map<string, Entry>();
  /** The last API URL each project's functions were invoked at (SUPABASE_URL of pre-started workers). */
  private readonly apiUrls = new Map<string, string>();
  /** What each spec promise resolved to (keyed by the promise: a replaced one is never answered). */
  private readonly builtSpecs = new WeakMap<Promise<FunctionSpec>, FunctionSpec>();

  constructor(
    private readonly platform: Platform,
    readonly runtime: FunctionsRuntime,
    /** http://host:port the platform listens on, when known: pre-started workers' API URL before any invocation. */
    private readonly serverUrl: () => string | undefined = () => undefined,
  ) {}

  /** Functions cached (records and specs). */
  get size(): number {
    return this.entries.size;
  }

  /** The record when cached and fresh, without a promise (the invocation's hot path); else undefined: ask record(). */
  cachedRecord(ref: string, slug: string): FunctionRecord | undefined {
    const hit = this.entries.get(`${ref}/${slug}`);
    return hit && hit.expires > Date.now() ? hit.record : undefined;
  }

  async record(ref: string, slug: string): Promise<FunctionRecord | undefined> {
    const key = `${ref}/${slug}`;
    const hit = this.entries.get(key);
    if (hit && hit.expires > Date.now()) return hit.record;
    const record = await getFunction(this.platform, ref, slug);
    // A miss is not cached: any client can ask for any number of made-up slugs.
    if (!record) {
      if (hit) this.entries.delete(key);
      return undefined;
    }
    const keep =
      hit?.record &&
      record &&
      hit.record.bodySha256 === record.bodySha256 &&
      hit.record.version === record.version;
    this.entries.set(key, { record, spec: keep ? hit.spec : undefined, expires: Date.now() + RECORD_TTL_MS });
    return record;
  }

  /** The worker spec of a function's current version (files written on first use). */
  spec(ctx: ProjectContext, record: FunctionRecord, apiUrl: string): Promise<FunctionSpec> {
    const key = `${ctx.ref}/${record.slug}`;
    this.apiUrls.set(ctx.ref, apiUrl);
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { record, expires: Date.now() + RECORD_TTL_MS };
      this.entries.set(key, entry);
    }
    if (!entry.spec) {
      const p = this.buildSpec(ctx, record, apiUrl);
      entry.spec = p;
      p.then(
        (spec) => this.builtSpecs.set(p, spec),
        () => {
          if (entry.spec === p) entry.spec = undefined;
        },
      );
    }
    return entry.spec;
  }

  /** spec() when its promise has settled already (the usual case): the spec itself, no promise; else undefined. */
  specNow(ctx: ProjectContext, record: FunctionRecord, apiUrl: string): FunctionSpec | undefined {
    return this.builtSpecs.get(this.spec(ctx, record, apiUrl));
  }

  private async buildSpec(
    ctx: ProjectContext,
    record: FunctionRecord,
    apiUrl: string,
  ): Promise<FunctionSpec> {
    const dir = join(this.runtime.rootDir, 'bundles', ctx.ref, record.slug, record.bodySha256);
    const stored = await getFunctionBody(this.platform, ctx.ref, record.slug);
    if (!stored) throw new Error('function body is gone');
    const uploaded = await bundleOf({
      bytes: stored.bytes,
      contentType: stored.contentType,
      entrypointPath: stored.record.entrypointPath,
      importMapPath: stored.record.importMapPath,
    });
    const { bundle, added } = withPlatformImports(uploaded);
    if (!existsSync(dir)) {
      const staging = `${dir}.${process.pid}.${Date.now()}`;
      try {
        writeBundle(staging, bundle);
        renameSync(staging, dir);
      } catch (err) {
        rmSync(staging, { recursive: true, force: true });
        if (!existsSync(dir)) throw err;
      }
      this.pruneBundles(dirname(dir), record.bodySha256);
    } else if (added.some((rel) => !existsSync(join(dir, rel)))) {
      // Written by an earlier version, before the platform added its files.
      writeBundle(dir, {
        files: new Map(added.map((rel) => [rel, bundle.files.get(rel) as Buffer])),
        entry: bundle.entry,
      });
    }
    const config = await runtimeConfig(this.platform, ctx, apiUrl, stored.record);
    const env = { ...config.env, SUPABASE_DB_URL: functionDatabaseUrl(this.platform, ctx) };
    const fingerprint = createHash('sha256')
      .update(`${stored.record.version}\0${stored.sha256}\0${JSON.stringify(env)}`)
      .digest('hex');
    return {
      ref: ctx.ref,
      slug: record.slug,
      fingerprint,
      bundleDir: dir,
      entryPath: join(dir, bundle.entry),
      importMapPath: bundle.importMap ? join(dir, bundle.importMap) : undefined,
      env,
    };
  }

  /** The project is being deleted: its workers are stopped and its functions' files removed. */
  async removeProject(ref: string): Promise<void> {
    for (const key of [...this.entries.keys()]) if (key.startsWith(`${ref}/`)) this.entries.delete(key);
    this.apiUrls.delete(ref);
    await this.runtime.stopProject(ref);
    // Its logs go with it (the workers are stopped: no line is written after this).
    await this.runtime.logs.forget(ref);
    rmSync(join(this.runtime.rootDir, 'bundles', ref), { recursive: true, force: true });
  }

  /**
   * Removes the function's other versions' files once no live worker runs them (a retired worker
   * still finishing requests keeps its own; the next deploy removes it). Staging folders (with a
   * dot) belong to a write in progress and are left alone.
   */
  private pruneBundles(slugDir: string, current: string): void {
    let names: string[];
    try {
      names = readdirSync(slugDir);
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(slugDir, name);
      if (name === current || name.includes('.') || this.runtime.runsBundle(path)) continue;
      rmSync(path, { recursive: true, force: true });
    }
  }

  /** After a deploy/update/delete of one function, or (no slug) a change of the project's secrets. */
  invalidate(ref: string, slug?: string): void {
    for (const key of [...this.entries.keys()])
      if (key.startsWith(`${ref}/`) && (!slug || key === `${ref}/${slug}`)) this.entries.delete(key);
    const recycled = this.runtime.recycle(ref, slug);
    if (this.runtime.config.prewarm === false) return;
    // A deploy/update starts its function's worker now; a secrets change restarts the ones that ran.
    for (const s of slug ? [slug] : recycled)
      this.prewarm(ref, s).catch((err: unknown) =>
        this.runtime.logs.add(ref, {
          function_slug: s,
          type: 'log',
          level: 'error',
          message: `boot error: ${err instanceof Error ? err.message : String(err)}`,
        }),
      );
  }

  /** Every project's entries (another process's changes may have been missed). */
  invalidateAll(): void {
    const refs = new Set([...this.entries.keys()].map((k) => k.slice(0, k.indexOf('/'))));
    for (const ref of refs) this.invalidate(ref);
  }

  private async prewarm(ref: string, slug: string): Promise<void> {
    const base = this.apiUrls.get(ref);
    const server = this.serverUrl();
    const apiUrl = base ?? (server ? `${server}/project/${ref}` : undefined);
    if (!apiUrl) return;
    const ctx = await this.platform.project(ref);
    if (!ctx) return;
    const record = await this.record(ref, slug);
    if (record?.status !== 'ACTIVE') return;
    this.runtime.warm(await this.spec(ctx, record, apiUrl));
  }
}
