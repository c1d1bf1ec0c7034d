/**
 * The platform: its PostgreSQL server(s), its own metadata database, and the registry of projects
 * (each a real database with its own keys). Shared by the HTTP gateway and the Management API.
 *
 * This class wires the parts and keeps the caches; the parts are: platform-database.ts (the
 * metadata database: creation, migrations, default account), projects.ts (the projects store:
 * the one Project type and the SQL of the projects table), project-database.ts (a project's
 * database: create, bootstrap, drop, with its logins), db-servers.ts (placement).
 */
import { removeAllProjectSecrets } from './project-secrets.js';
import type pg from 'pg';
import { mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { StrataConfig } from '../config.js';
import { startEmbedded } from '../db/embedded.js';
import { createPool, withClient, withDatabase, withUser } from '../db/pool.js';
import { ensureClusterRoles, API_LOGIN_ROLE } from '../db/roles.js';
import { mintApiKey, newJwtSecret } from '../auth/jwt.js';
import { loadLocalState, newAccessToken, saveLocalState, type LocalState } from './local-state.js';
import { DbServers, type DbServer } from './db-servers.js';
import type { ProjectContext } from './project-context.js';
import { newProjectRef } from './refs.js';
import { DatabaseHealth } from './db-health.js';
import { ClusterEvents } from './cluster-events.js';
import { FunctionEvents } from './function-events.js';
import { withStartupLock } from './startup-lock.js';
import { sha256Hex } from './sha256.js';
import {
  DEFAULT_ORGANIZATION_ID,
  createPlatformDatabase,
  ensureDefaultAccount,
  migratePlatformDatabase,
} from './platform-database.js';
import {
  bootstrapProject,
  createProjectDatabase,
  dropProjectDatabase,
  type ProjectBootstrapHook,
} from './project-database.js';
import {
  defaultProjectRef,
  drainingServers,
  findLiveProject,
  insertProject,
  liveProjectCountByServer,
  claimRemoval,
  releaseRemoval,
  markRemoved,
  type Project,
} from './projects.js';
import { withSuperuserSession } from '../db/superuser-session.js';
import {
  defaultProjectPassword,
  projectLoginHasPassword,
  projectLoginRole,
  setProjectLoginPassword,
} from './project-login.js';

/** Health results are shared for this long (a health endpoint polled hard opens at most one connection per period). */
const HEALTH_CACHE_MS = 500;

export interface PlatformOptions {
  /** Name of the platform metadata database. */
  platformDatabase?: string;
  /** Database of the default project (created if missing). */
  defaultProjectDatabase?: string;
  log?: (line: string) => void;
  /** Lines shown even without verbose logging: the embedded server died, was restarted... (default: stderr). */
  notice?: (line: string) => void;
  /** Extra bootstrap steps run on every project database after the SQL migrations (e.g. the GraphQL engine's objects). */
  projectBootstrapHooks?: ProjectBootstrapHook[];
  /** The ref of each new project (refs.ts newProjectRef unless given: tests that must know it first). */
  newProjectRef?: () => string;
  /** Run once on the default project's database when it is created (e.g. local development settings). */
  defaultProjectSetup?: (client: pg.ClientBase) => Promise<unknown>;
  /** Removes a deleted project's stored files (default: its folder `filesDir`). */
  removeProjectFiles?: (ref: string, filesDir: string) => Promise<void>;
  /** Password of the API login role; roles are cluster-wide, so platforms sharing a server must agree on it. */
  authenticatorPassword?: string;
}

export class Platform {
  readonly pool: pg.Pool;
  /** Whether each database server answers (health endpoints, `strata status`). */
  readonly health: DatabaseHealth;
  /** Cache invalidation between the processes sharing this platform database (cluster-events.ts). */
  readonly events: ClusterEvents;
  /** Function deploys, secret changes and project removals, for the functions runtime (function-events.ts). */
  readonly functionEvents: FunctionEvents;
  private readonly cache = new Map<string, Promise<ProjectContext | undefined>>();
  /**
   * The value each cached promise settled with (keyed by the promise: a context dropped from the
   * cache or replaced in it is never answered from here), for `projectIfLoaded`.
   */
  private readonly settled = new WeakMap<Promise<ProjectContext | undefined>, ProjectContext | undefined>();
  private readonly hostResolvers: Array<(host: string) => Promise<string | undefined>> = [];
  defaultRef = '';
  /** Address of the platform's PostgreSQL router (pooler.ts), when it runs. */
  pooler?: { host: string; port: number };

  private constructor(
    readonly config: StrataConfig,
    readonly state: LocalState,
    readonly servers: DbServers,
    readonly platformDatabase: string,
    private readonly options: PlatformOptions,
  ) {
    this.pool = createPool(withDatabase(servers.primary.url, platformDatabase), {
      max: 5,
      applicationName: 'strata-platform',
      connectTimeoutMs: config.dbConnectTimeoutMs,
    });
    this.health = new DatabaseHealth((id) => servers.get(id), {
      timeoutMs: config.dbHealthTimeoutMs,
      cacheMs: HEALTH_CACHE_MS,
    });
    this.events = new ClusterEvents(
      withDatabase(servers.primary.url, platformDatabase),
      this.pool,
      options.notice ?? ((l) => console.error(`[strata] ${l}`)),
    );
    this.functionEvents = new FunctionEvents(this.events);
    this.events.subscribe((e) => {
      if (!e) for (const ref of [...this.cache.keys()]) void this.revalidate(ref);
      else if (e.kind === 'project') void this.revalidate(e.ref);
    });
  }

  static async start(config: StrataConfig, options: PlatformOptions = {}): Promise<Platform> {
    const log = options.log ?? (() => {});
    mkdirSync(config.dataDir, { recursive: true });
    const state = loadLocalState(config.dataDir);
    // Cluster nodes share these (config.shared); a single process keeps its own in state.json.
    const shared = config.shared ?? {};
    if (shared.platformKey) state.platformKey = shared.platformKey;
    if (shared.accessToken) state.defaultAccessToken = shared.accessToken;
    const authenticatorPassword = options.authenticatorPassword ?? shared.authenticatorPassword;
    if (authenticatorPassword) state.authenticatorPassword = authenticatorPassword;
    let primary: DbServer;
    if (config.databaseUrl) {
      primary = { id: 'primary', url: config.databaseUrl, managed: false };
    } else {
      const embedded = await startEmbedded({
        dataDir: join(config.dataDir, 'db'),
        port: config.dbPort,
        password: state.superuserPassword,
        log: (l) => log(`[postgres] ${l}`),
        notice: options.notice ?? ((l) => console.error(`[strata] ${l}`)),
        supervise: true,
      });
      primary = { id: 'primary', url: embedded.superuserUrl('postgres'), managed: true, embedded };
    }
    const servers = new DbServers(primary, config.extraDbServers);
    const platformDatabase = options.platformDatabase ?? config.platformDatabase ?? 'strata_platform';
    let platform: Platform | undefined;
    try {
      // Nodes of a cluster may start at once: one at a time creates, migrates and seeds.
      await withStartupLock(primary.url, platformDatabase, async () => {
        for (const s of servers.all())
          await withClient(s.url, (c) => ensureClusterRoles(c, state.authenticatorPassword));
        await createPlatformDatabase(primary.url, platformDatabase);
        platform = new Platform(config, state, servers, platformDatabase, options);
        await migratePlatformDatabase(platform.pool, servers.all());
        await platform.ensureDefaults(options.defaultProjectDatabase ?? defaultProjectDbName(primary.url));
      });
      if (!platform) throw new Error('the platform did not start');
      await platform.events.start();
      return platform;
    } catch (err) {
      await platform?.pool.end().catch(() => {});
      await primary.embedded?.stop();
      throw err;
    }
  }

  /** The default user, organization, access token and project that `npm start` prints. */
  private async ensureDefaults(defaultDb: string): Promise<void> {
    let token = this.state.defaultAccessToken;
    if (!token) {
      token = newAccessToken();
      this.state.defaultAccessToken = token;
      saveLocalState(this.config.dataDir, this.state);
    }
    await ensureDefaultAccount(this.pool, sha256Hex(token));
    const existing = await defaultProjectRef(this.pool);
    if (existing) {
      this.defaultRef = existing;
    } else {
      const ctx = await this.createProject({
        name: 'Default Project',
        organizationId: DEFAULT_ORGANIZATION_ID,
        dbName: defaultDb,
        isDefault: true,
      });
      this.defaultRef = ctx.ref;
      const setup = this.options.defaultProjectSetup;
      if (setup) await withSuperuserSession(ctx.superuserUrl, (c) => setup(c));
    }
    const ctx = await this.project(this.defaultRef);
    // The banner's DB URL logs in as the project's login: it needs a password (a default project
    // made before this had none; one set since through the Management API is kept).
    if (ctx)
      await withSuperuserSession(ctx.superuserUrl, async (c) => {
        if (!(await projectLoginHasPassword(c, ctx.ref)))
          await setProjectLoginPassword(c, ctx.ref, defaultProjectPassword(this.state.platformKey));
      });
  }

  /**
   * The default project's DB URL (banner, `strata status` db_url): its own login `postgres.<ref>`,
   * the tenant admin role every door uses (docs/security/roles.md), never the platform's superuser.
   */
  async defaultProjectDbUrl(): Promise<string> {
    const ctx = await this.defaultProject();
    return withUser(
      withDatabase(this.servers.get(ctx.dbServer).url, ctx.dbName),
      projectLoginRole(ctx.ref),
      defaultProjectPassword(this.state.platformKey),
    );
  }

  get defaultAccessToken(): string {
    const token = this.state.defaultAccessToken;
    if (!token)
      throw new Error('the default access token is missing (it is created when the platform starts)');
    return token;
  }

  /** Registers a lookup from a Host header to a project ref (custom hostnames). */
  addHostResolver(fn: (host: string) => Promise<string | undefined>): void {
    this.hostResolvers.push(fn);
  }

  async refForHost(host: string): Promise<string | undefined> {
    for (const fn of this.hostResolvers) {
      const ref = await fn(host);
      if (ref) return ref;
    }
    return undefined;
  }

  /** The project's context, loaded and bootstrapped once per process. */
  project(ref: string): Promise<ProjectContext | undefined> {
    let p = this.cache.get(ref);
    if (!p) {
      p = this.loadProject(ref).catch((err) => {
        this.cache.delete(ref);
        throw err;
      });
      this.cacheProject(ref, p);
    }
    return p;
  }

  /**
   * What `project(ref)` resolves to when that is known already (loaded, found, still cached), with
   * no promise to wait on: the routing of every request asks this first. Undefined otherwise (not
   * loaded yet, being loaded, or no such project): ask `project(ref)`.
   */
  projectIfLoaded(ref: string): ProjectContext | undefined {
    const p = this.cache.get(ref);
    return p && this.settled.get(p);
  }

  private cacheProject(ref: string, p: Promise<ProjectContext | undefined>): void {
    this.cache.set(ref, p);
    p.then(
      (ctx) => this.settled.set(p, ctx),
      () => {},
    );
  }

  async defaultProject(): Promise<ProjectContext> {
    const project = await this.project(this.defaultRef);
    if (!project) throw new Error(`the default project ${this.defaultRef} is not in the platform database`);
    return project;
  }

  /** Drops a cached context (after keys or placement change). */
  async forget(ref: string): Promise<void> {
    const p = this.cache.get(ref);
    this.cache.delete(ref);
    const ctx = await p?.catch(() => undefined);
    await ctx?.pool.end().catch(() => {});
  }

  /**
   * After another process changed a project (deleted it, moved it, new keys): drops the cached
   * context when its registry row no longer matches (gone, other server, database or JWT secret).
   */
  async revalidate(ref: string): Promise<void> {
    const cached = this.cache.get(ref);
    if (!cached) return;
    const ctx = await cached.catch(() => undefined);
    const now = await findLiveProject(this.pool, ref).catch(() => 'unknown' as const);
    if (now === 'unknown') return;
    if (
      !ctx ||
      !now ||
      now.dbServer !== ctx.dbServer ||
      now.dbName !== ctx.dbName ||
      now.jwtSecret !== ctx.jwtSecret ||
      now.status !== ctx.status
    ) {
      if (this.cache.get(ref) === cached) await this.forget(ref);
    }
  }

  /** How a project's database is brought up to date (migrations, hooks, its logins). */
  private bootstrapOf(ref: string) {
    return { ref, platformKey: this.state.platformKey, hooks: this.options.projectBootstrapHooks ?? [] };
  }

  private async loadProject(ref: string): Promise<ProjectContext | undefined> {
    const project = await findLiveProject(this.pool, ref);
    if (!project) return undefined;
    const ctx = this.contextOf(project);
    await withSuperuserSession(ctx.superuserUrl, (c) => bootstrapProject(c, this.bootstrapOf(ref)));
    return ctx;
  }

  private contextOf(project: Project): ProjectContext {
    const superuserUrl = withDatabase(this.servers.get(project.dbServer).url, project.dbName);
    const apiUrl = withUser(superuserUrl, API_LOGIN_ROLE, this.state.authenticatorPassword);
    return {
      ...project,
      pool: createPool(apiUrl, {
        max: 10,
        applicationName: `strata-${project.ref}`,
        connectTimeoutMs: this.config.dbConnectTimeoutMs,
      }),
      superuserUrl,
      apiUrl,
      filesDir: this.filesDirOf(project.ref),
    };
  }

  private removeFiles(ref: string, filesDir: string): Promise<void> {
    const remove = this.options.removeProjectFiles;
    return remove ? remove(ref, filesDir) : rm(filesDir, { recursive: true, force: true });
  }

  private filesDirOf(ref: string): string {
    return join(this.config.dataDir, 'projects', ref);
  }

  /**
   * Creates a real project: its database (bootstrapped once, here), JWT secret and keys, and the
   * registry row. A failure leaves neither a row nor a database this call created.
   */
  async createProject(input: {
    name: string;
    organizationId: string;
    region?: string;
    dbServer?: string;
    dbName?: string;
    isDefault?: boolean;
    /** Password of the project's login `postgres.<ref>` (`db_pass`); none: it cannot log in until one is set. */
    dbPassword?: string | null;
  }): Promise<ProjectContext> {
    const server = input.dbServer ? this.servers.placeNew(input.dbServer) : await this.leastLoadedServer();
    const ref = (this.options.newProjectRef ?? newProjectRef)();
    const dbName = input.dbName ?? `project_${ref}`;
    const jwtSecret = newJwtSecret();
    const database = await createProjectDatabase(server.url, dbName, {
      ...this.bootstrapOf(ref),
      password: input.dbPassword ?? null,
    });
    let project: Project;
    try {
      project = await insertProject(this.pool, {
        ref,
        organizationId: input.organizationId,
        name: input.name,
        region: input.region ?? 'local',
        dbServer: server.id,
        dbName,
        jwtSecret,
        anonKey: await mintApiKey(jwtSecret, 'anon', ref),
        serviceRoleKey: await mintApiKey(jwtSecret, 'service_role', ref),
        isDefault: input.isDefault ?? false,
      });
    } catch (err) {
      await database.undo();
      throw err;
    }
    // Already bootstrapped: cached as loaded, not bootstrapped a second time.
    const ctx = this.contextOf(project);
    this.cacheProject(ref, Promise.resolve(ctx));
    return ctx;
  }

  /**
   * Where a new project goes when the caller does not say: the server with the most headroom, i.e.
   * holding the fewest live projects (the primary on ties), among those not draining.
   */
  private async leastLoadedServer(): Promise<DbServer> {
    const all = this.servers.all();
    const [primary] = all;
    if (!primary) throw new Error('no database server is configured');
    if (all.length === 1) return primary;
    const load = await liveProjectCountByServer(this.pool);
    const draining = await drainingServers(this.pool);
    let best: DbServer | undefined;
    for (const s of all)
      if (!draining.has(s.id) && (!best || (load.get(s.id) ?? 0) < (load.get(best.id) ?? 0))) best = s;
    if (!best) throw new Error('every database server is draining: undrain one (strata servers undrain ID)');
    return best;
  }

  /**
   * Removes the project: its database, files and secrets. The registry row stays as a tombstone
   * (status REMOVED), so the ref is never reused and the Management API can answer "Resource has
   * been removed"; project() no longer finds it. The default project cannot be removed.
   * False when there is no live project `ref`, or another delete claimed it first (parallel
   * deletes: one removes it, the others get false). `beforeDrop` runs once the claim is taken
   * (e.g. stopping the project's function workers). A removal that fails gives its claim back.
   */
  async deleteProject(ref: string, beforeDrop?: () => Promise<void>): Promise<boolean> {
    const project = await findLiveProject(this.pool, ref);
    if (!project) return false;
    if (project.isDefault) throw new Error('the default project cannot be deleted');
    if (!(await claimRemoval(this.pool, ref))) return false;
    try {
      await this.forget(ref);
      await this.events.publish({ kind: 'project', ref });
      await beforeDrop?.();
      await dropProjectDatabase(this.servers.get(project.dbServer).url, project.dbName, ref);
      await this.removeFiles(ref, this.filesDirOf(ref));
      await removeAllProjectSecrets(this.pool, ref);
      await markRemoved(this.pool, ref);
    } catch (err) {
      await releaseRemoval(this.pool, ref).catch(() => {});
      throw err;
    }
    await this.forget(ref);
    await this.events.publish({ kind: 'project', ref });
    return true;
  }

  async close(): Promise<void> {
    await this.events.close();
    for (const ref of [...this.cache.keys()]) await this.forget(ref);
    await this.pool.end().catch(() => {});
    await this.servers.primary.embedded?.stop();
  }
}

function defaultProjectDbName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.replace(/^\//, '')) || 'postgres';
}
