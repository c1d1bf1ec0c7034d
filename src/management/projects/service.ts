/** Projects as the Management API shows them, from the platform registry. */
import type { Platform } from '../../platform/platform.js';
import { withClient } from '../../db/pool.js';
import { listProjectsOfMember, type Project } from '../../platform/projects.js';

export interface ProjectResponse {
  id: string;
  ref: string;
  organization_id: string;
  organization_slug: string;
  name: string;
  region: string;
  created_at: string;
  status: string;
}

export interface ProjectWithDatabaseResponse extends ProjectResponse {
  database: { host: string; version: string; postgres_engine: string; release_channel: string };
}

export function projectResponse(p: Project): ProjectResponse {
  return {
    id: p.ref,
    ref: p.ref,
    organization_id: p.organizationId,
    organization_slug: p.organizationId,
    name: p.name,
    region: p.region,
    created_at: p.createdAt,
    status: p.status,
  };
}

/**
 * The PostgreSQL version of each database server, asked once per process (a failed question is
 * asked again next time). One per platform, built with the Management API's services.
 */
export class ServerVersions {
  private readonly byServer = new Map<string, Promise<{ version: string; engine: string }>>();

  constructor(private readonly platform: Platform) {}

  of(serverId: string): Promise<{ version: string; engine: string }> {
    const { byServer } = this;
    let v = byServer.get(serverId);
    if (!v) {
      v = withClient(this.platform.servers.get(serverId).url, async (c) => {
        const { rows } = await c.query<{ v: string; n: string }>(
          `select current_setting('server_version') as v, current_setting('server_version_num') as n`,
        );
        const [row] = rows;
        if (!row) throw new Error('the server version query returned no row');
        return {
          version: row.v.split(' ', 1)[0] ?? '',
          engine: String(Math.floor(Number(row.n) / 10000)),
        };
      }).catch((err) => {
        byServer.delete(serverId);
        throw err;
      });
      byServer.set(serverId, v);
    }
    return v;
  }

  /** A project as GET /v1/projects{/ref} shows it, with its database server's address and version. */
  async projectWithDatabase(p: Project): Promise<ProjectWithDatabaseResponse> {
    const { version, engine } = await this.of(p.dbServer);
    const host = new URL(this.platform.servers.get(p.dbServer).url).hostname;
    return {
      ...projectResponse(p),
      database: { host, version, postgres_engine: engine, release_channel: 'ga' },
    };
  }
}

/** All live projects of the organizations `userId` belongs to. */
export function listProjects(platform: Platform, userId: string): Promise<Project[]> {
  return listProjectsOfMember(platform.pool, userId);
}

/** The project's legacy API keys, shaped like the reference `GET /v1/projects/{ref}/api-keys` (and Studio's self-hosted copy of it). */
export function legacyApiKeys(keys: { anonKey: string; serviceRoleKey: string }) {
  return [
    {
      name: 'anon',
      api_key: keys.anonKey,
      id: 'anon',
      type: 'legacy',
      hash: '',
      prefix: '',
      description: 'Legacy anon API key',
    },
    {
      name: 'service_role',
      api_key: keys.serviceRoleKey,
      id: 'service_role',
      type: 'legacy',
      hash: '',
      prefix: '',
      description: 'Legacy service_role API key',
    },
  ];
}
