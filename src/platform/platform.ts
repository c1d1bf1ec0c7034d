/**
 * The platform: its PostgreSQL server(s), its own metadata database, and the registry of projects
 * (each a real database with its own keys). Shared by the HTTP gateway and the Management API.
 */
import type pg from 'pg';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import type { StrataConfig } from '../config.js';
import { startEmbedded } from '../db/embedded.js';
import { createPool, withClient, withDatabase, withUser } from '../db/pool.js';
import { withPooledClient } from '../db/pooled-client.js';
import { ensureClusterRoles, API_LOGIN_ROLE } from '../db/roles.js';
import { loadMigrations, migrate } from '../db/migrate.js';
import { sqlPath } from '../db/sql-dir.js';
import { bootstrapProjectDatabase } from '../db/bootstrap.js';
import { quoteIdent } from '../db/sql-text.js';
import { mintApiKey, newJwtSecret } from '../auth/jwt.js';
import { loadLocalState, newAccessToken, saveLocalState, type LocalState } from './local-state.js';
import { DbServers, type DbServer } from './db-servers.js';
import type { ProjectContext } from './project-context.js';
import { newProjectRef } from './refs.js';
import { DatabaseHealth } from './db-health.js';

/** Health results are shared for this long (a health endpoint polled hard opens at most one connection per period). */
const HEALTH_CACHE_MS = 500;
import { enableIntrospectionForLocalDevelopment } from '../graphql/extension/local-introspection.js';
import { dropProjectLogin, ensureProjectLogin } from './project-login.js';

export interface PlatformOptions {
  /** Name of the platform metadata database. */
  platformDatabase?: string;
  /** Database of the default project (created if missing). */
  defaultProjectDatabase?: string;
  log?: (line: string) => void;
  /** Lines shown even without verbose logging: the embedded server died, was restarted... (default: stderr). */
  notice?: (line: string) => void;
  /** Extra bootstrap steps run on every project database after the SQL migrations (e.g. the GraphQL engine's objects). */
  projectBootstrapHooks?: Array<(client: pg.ClientBase) => Promise<void>>;
  /** Password of the API login role; roles are cluster-wide, so platforms sharing a server must agree on it. */
  authenticatorPassword?: string;
}

export interface ProjectRow {
  ref: string;
  organization_id: string;
  name: string;
  region: string;
  status: string;
  db_server: string;
  db_name: string;
  jwt_secret: string;
  anon_key: string;
  service_role_key: string;
  is_default: boolean;
  created_at: Date;
}

export function sha256Hex(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

export class Platform {
  readonly pool: pg.Pool;
  /** Whether each database server answers (health endpoints, `strata status`). */
  readonly health: DatabaseHealth;
  private readonly cache = new Map<string, Promise<ProjectContext | undefined>>();
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
  }

  static async start(config: StrataConfig, options: PlatformOptions = {}): Promise<Platform> {
    const log = options.log ?? (() => {});
    mkdirSync(config.dataDir, { recursive: true });
    const state = loadLocalState(config.dataDir);
    if (options.authenticatorPassword) state.authenticatorPassword = options.authenticatorPassword;
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
    const platformDatabase = options.platformDatabase ?? 'strata_platform';
    try {
      for (const s of servers.all())
        await withClient(s.url, (c) => ensureClusterRoles(c, state.authenticatorPassword));
      await createDatabaseIfMissing(primary.url, platformDatabase);
      // Project logins must never reach the platform's own database.
      await withClient(primary.url, (c) =>
        c.query(`revoke connect, temporary on database ${quoteIdent(platformDatabase)} from public`),
      );
      const platform = new Platform(config, state, servers, platformDatabase, options);
      await platform.migrate();
      await platform.ensureDefaults(options.defaultProjectDatabase ?? defaultProjectDbName(primary.url));
      return platform;
    } catch (err) {
      await primary.embedded?.stop();
      throw err;
    }
  }

  private async migrate(): Promise<void> {
    await withPooledClient(this.pool, async (client) => {
      await migrate(client, loadMigrations(sqlPath('platform')), {
        schema: 'strata_meta',
        table: 'platform_migrations',
      });
      for (const s of this.servers.all()) {
        await client.query(
          'insert into db_servers (id, managed) values ($1, $2) on conflict (id) do update set managed = excluded.managed',
          [s.id, s.managed],
        );
      }
    });
  }

  /** The default user, organization, access token and project that `npm start` prints. */
  private async ensureDefaults(defaultDb: string): Promise<void> {
    await this.pool.query(
      `insert into users (email) values ('admin@localhost') on conflict (email) do nothing`,
    );
    await this.pool.query(
      `insert into organizations (id, name) values ('default-org', 'Default Organization') on conflict (id) do nothing`,
    );
    await this.pool.query(
      `insert into organization_members (organization_id, user_id)
       select 'default-org', id from users where email = 'admin@localhost' on conflict do nothing`,
    );
    let token = this.state.defaultAccessToken;
    if (!token) {
      token = newAccessToken();
      this.state.defaultAccessToken = token;
      saveLocalState(this.config.dataDir, this.state);
    }
    await this.pool.query(
      `insert into access_tokens (user_id, name, token_sha256)
       select id, 'default', $1 from users where email = 'admin@localhost' on conflict (token_sha256) do nothing`,
      [sha256Hex(token)],
    );
    const existing = await this.pool.query<{ ref: string }>('select ref from projects where is_default');
    if (existing.rows[0]) {
      this.defaultRef = existing.rows[0].ref;
    } else {
      const ctx = await this.createProject({
        name: 'Default Project',
        organizationId: 'default-org',
        dbName: defaultDb,
        isDefault: true,
      });
      this.defaultRef = ctx.ref;
      await withClient(ctx.superuserUrl, (c) => enableIntrospectionForLocalDevelopment(c));
    }
    await this.project(this.defaultRef);
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
      this.cache.set(ref, p);
    }
    return p;
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

  private async loadProject(ref: string): Promise<ProjectContext | undefined> {
    const { rows } = await this.pool.query<ProjectRow>(
      `select * from projects where ref = $1 and status <> 'REMOVED'`,
      [ref],
    );
    const row = rows[0];
    if (!row) return undefined;
    const ctx = this.contextOf(row);
    await withClient(ctx.superuserUrl, (c) => this.bootstrap(c, row.ref, null));
    return ctx;
  }

  private contextOf(row: ProjectRow): ProjectContext {
    const server = this.servers.get(row.db_server);
    const superuserUrl = withDatabase(server.url, row.db_name);
    const apiUrl = withUser(superuserUrl, API_LOGIN_ROLE, this.state.authenticatorPassword);
    return {
      ref: row.ref,
      name: row.name,
      organizationId: row.organization_id,
      region: row.region,
      status: row.status,
      createdAt: new Date(row.created_at).toISOString(),
      isDefault: row.is_default,
      dbServer: row.db_server,
      dbName: row.db_name,
      pool: createPool(apiUrl, {
        max: 10,
        applicationName: `strata-${row.ref}`,
        connectTimeoutMs: this.config.dbConnectTimeoutMs,
      }),
      superuserUrl,
      apiUrl,
      jwtSecret: row.jwt_secret,
      anonKey: row.anon_key,
      serviceRoleKey: row.service_role_key,
      filesDir: join(this.config.dataDir, 'projects', row.ref),
    };
  }

  /** The project database's versioned SQL, the engine hooks, then the project's own login (created with `password` when missing). */
  private async bootstrap(client: pg.ClientBase, ref: string, password: string | null): Promise<void> {
    await bootstrapProjectDatabase(client);
    for (const hook of this.options.projectBootstrapHooks ?? []) await hook(client);
    await ensureProjectLogin(client, { ref, platformKey: this.state.platformKey, password });
  }

  /** Creates a real project: its database, bootstrap, JWT secret and keys, and the registry row. */
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
    const ref = newProjectRef();
    const dbName = input.dbName ?? `project_${ref}`;
    const jwtSecret = newJwtSecret();
    const anonKey = await mintApiKey(jwtSecret, 'anon', ref);
    const serviceKey = await mintApiKey(jwtSecret, 'service_role', ref);
    const created = await createDatabaseIfMissing(server.url, dbName);
    try {
      await withClient(withDatabase(server.url, dbName), (c) =>
        this.bootstrap(c, ref, input.dbPassword ?? null),
      );
      await this.pool.query(
        `insert into projects (ref, organization_id, name, region, db_server, db_name, jwt_secret, anon_key, service_role_key, is_default)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [
          ref,
          input.organizationId,
          input.name,
          input.region ?? 'local',
          server.id,
          dbName,
          jwtSecret,
          anonKey,
          serviceKey,
          input.isDefault ?? false,
        ],
      );
    } catch (err) {
      if (created) await dropDatabase(server.url, dbName).catch(() => {});
      await withClient(server.url, (c) => dropProjectLogin(c, ref)).catch(() => {});
      throw err;
    }
    const project = await this.project(ref);
    if (!project) throw new Error(`project ${ref} was created but cannot be loaded`);
    return project;
  }

  /** Where a new project goes when the caller does not say: the server holding the fewest live projects (the primary on ties). */
  private async leastLoadedServer(): Promise<DbServer> {
    const all = this.servers.all();
    const [primary] = all;
    if (!primary) throw new Error('no database server is configured');
    if (all.length === 1) return primary;
    const { rows } = await this.pool.query<{ db_server: string; n: string }>(
      `select db_server, count(*) as n from projects where status <> 'REMOVED' group by db_server`,
    );
    const load = new Map(rows.map((r) => [r.db_server, Number(r.n)]));
    let best = primary;
    for (const s of all) if ((load.get(s.id) ?? 0) < (load.get(best.id) ?? 0)) best = s;
    return best;
  }

  /**
   * Removes the project: its database, files and secrets. The registry row stays as a tombstone
   * (status REMOVED), so the ref is never reused and the Management API can answer "Resource has
   * been removed"; project() no longer finds it. The default project cannot be removed.
   */
  async deleteProject(ref: string): Promise<boolean> {
    const { rows } = await this.pool.query<ProjectRow>(
      `select * from projects where ref = $1 and status <> 'REMOVED'`,
      [ref],
    );
    const row = rows[0];
    if (!row) return false;
    if (row.is_default) throw new Error('the default project cannot be deleted');
    await this.pool.query(`update projects set status = 'GOING_DOWN' where ref = $1`, [ref]);
    await this.forget(ref);
    await dropDatabase(this.servers.get(row.db_server).url, row.db_name);
    await withClient(this.servers.get(row.db_server).url, (c) => dropProjectLogin(c, ref));
    rmSync(join(this.config.dataDir, 'projects', row.ref), { recursive: true, force: true });
    await this.pool.query('delete from project_secrets where project_ref = $1', [ref]);
    // The tombstone keeps no credentials.
    await this.pool.query(
      `update projects set status = 'REMOVED', removed_at = now(), jwt_secret = '', anon_key = '', service_role_key = '' where ref = $1`,
      [ref],
    );
    await this.forget(ref);
    return true;
  }

  async close(): Promise<void> {
    for (const ref of [...this.cache.keys()]) await this.forget(ref);
    await this.pool.end().catch(() => {});
    await this.servers.primary.embedded?.stop();
  }
}

function defaultProjectDbName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.replace(/^\//, '')) || 'postgres';
}

/** Returns true when this call created it. */
export async function createDatabaseIfMissing(serverUrl: string, name: string): Promise<boolean> {
  return withClient(withDatabase(serverUrl, 'postgres'), async (c) => {
    const exists = await c.query('select 1 from pg_database where datname = $1', [name]);
    if (exists.rowCount) return false;
    try {
      await c.query(`create database ${quoteIdent(name)} template template0 encoding 'UTF8'`);
      return true;
    } catch (err) {
      if ((err as { code?: string }).code === '42P04') return false; // created concurrently
      throw err;
    }
  });
}

export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  await withClient(withDatabase(serverUrl, 'postgres'), (c) =>
    c.query(`drop database if exists ${quoteIdent(name)} with (force)`),
  );
}
