/**
 * The projects store: the platform database's `projects` table (sql/platform) and the one shape of
 * a project the code passes around. Every statement on that table alone is here; statements of
 * other tables that join it stay with those tables' modules.
 *
 * A removed project keeps its row as a tombstone (status REMOVED, no credentials): its ref is never
 * handed out again and the Management API can answer "Resource has been removed".
 */
import type pg from 'pg';

/** A project as the platform registers it. */
export interface Project {
  ref: string;
  /** The numeric id the reference API returns from DELETE /v1/projects/{ref}. */
  id: number;
  organizationId: string;
  name: string;
  region: string;
  status: string;
  /** ISO 8601. */
  createdAt: string;
  isDefault: boolean;
  /** Which database server holds the project, and the database's name there. */
  dbServer: string;
  dbName: string;
  jwtSecret: string;
  anonKey: string;
  serviceRoleKey: string;
}

/** What creating a project registers (the rest is the table's defaults). */
export type NewProject = Pick<
  Project,
  | 'ref'
  | 'organizationId'
  | 'name'
  | 'region'
  | 'dbServer'
  | 'dbName'
  | 'jwtSecret'
  | 'anonKey'
  | 'serviceRoleKey'
  | 'isDefault'
>;

/** Anything that runs a query: the platform's pool or one of its clients. */
type Queryable = Pick<pg.ClientBase, 'query'>;

interface ProjectRow {
  ref: string;
  id: string;
  organization_id: string;
  name: string;
  region: string;
  status: string;
  created_at: Date;
  is_default: boolean;
  db_server: string;
  db_name: string;
  jwt_secret: string;
  anon_key: string;
  service_role_key: string;
}

const COLUMNS = `p.ref, p.id, p.organization_id, p.name, p.region, p.status, p.created_at, p.is_default,
  p.db_server, p.db_name, p.jwt_secret, p.anon_key, p.service_role_key`;

const LIVE = `p.status <> 'REMOVED'`;

function projectOf(row: ProjectRow): Project {
  return {
    ref: row.ref,
    id: Number(row.id),
    organizationId: row.organization_id,
    name: row.name,
    region: row.region,
    status: row.status,
    createdAt: new Date(row.created_at).toISOString(),
    isDefault: row.is_default,
    dbServer: row.db_server,
    dbName: row.db_name,
    jwtSecret: row.jwt_secret,
    anonKey: row.anon_key,
    serviceRoleKey: row.service_role_key,
  };
}

/** Registers a project; returns it as stored. */
export async function insertProject(db: Queryable, p: NewProject): Promise<Project> {
  const { rows } = await db.query<ProjectRow>(
    `insert into projects as p (ref, organization_id, name, region, db_server, db_name, jwt_secret, anon_key, service_role_key, is_default)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     returning ${COLUMNS}`,
    [
      p.ref,
      p.organizationId,
      p.name,
      p.region,
      p.dbServer,
      p.dbName,
      p.jwtSecret,
      p.anonKey,
      p.serviceRoleKey,
      p.isDefault,
    ],
  );
  const [row] = rows;
  if (!row) throw new Error(`the insert of project ${p.ref} returned no row`);
  return projectOf(row);
}

/** A live (not removed) project. */
export async function findLiveProject(db: Queryable, ref: string): Promise<Project | undefined> {
  const { rows } = await db.query<ProjectRow>(
    `select ${COLUMNS} from projects p where p.ref = $1 and ${LIVE}`,
    [ref],
  );
  return rows[0] && projectOf(rows[0]);
}

/** Any project, tombstones included, with `userId`'s role in its organization (null: not a member). */
export async function findProjectForUser(
  db: Queryable,
  ref: string,
  userId: string,
): Promise<{ project: Project; role: string | null } | undefined> {
  const { rows } = await db.query<ProjectRow & { role: string | null }>(
    `select ${COLUMNS},
            (select m.role from organization_members m where m.organization_id = p.organization_id and m.user_id = $2) as role
       from projects p where p.ref = $1`,
    [ref, userId],
  );
  const row = rows[0];
  return row && { project: projectOf(row), role: row.role };
}

/** The live projects of the organizations `userId` belongs to, oldest first. */
export async function listProjectsOfMember(db: Queryable, userId: string): Promise<Project[]> {
  const { rows } = await db.query<ProjectRow>(
    `select ${COLUMNS}
       from projects p join organization_members m on m.organization_id = p.organization_id and m.user_id = $1
      where ${LIVE}
      order by p.created_at, p.ref`,
    [userId],
  );
  return rows.map(projectOf);
}

/** Refs of every live project. */
export async function liveProjectRefs(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ ref: string }>(
    `select p.ref from projects p where ${LIVE} order by p.ref`,
  );
  return rows.map((r) => r.ref);
}

/** The projects on `serverId` that are neither removed nor being removed. */
export async function activeProjectsOnServer(db: Queryable, serverId: string): Promise<Project[]> {
  const { rows } = await db.query<ProjectRow>(
    `select ${COLUMNS} from projects p where p.db_server = $1 and p.status not in ('REMOVED', 'GOING_DOWN')`,
    [serverId],
  );
  return rows.map(projectOf);
}

/** How many live projects each database server holds (servers holding none are absent). */
export async function liveProjectCountByServer(db: Queryable): Promise<Map<string, number>> {
  const { rows } = await db.query<{ db_server: string; n: string }>(
    `select p.db_server, count(*) as n from projects p where ${LIVE} group by p.db_server`,
  );
  return new Map(rows.map((r) => [r.db_server, Number(r.n)]));
}

/** The ids of the database servers taking no new projects. */
export async function drainingServers(db: Queryable): Promise<Set<string>> {
  const { rows } = await db.query<{ id: string }>('select id from db_servers where draining');
  return new Set(rows.map((r) => r.id));
}

export async function defaultProjectRef(db: Queryable): Promise<string | undefined> {
  const { rows } = await db.query<{ ref: string }>('select p.ref from projects p where p.is_default');
  return rows[0]?.ref;
}

/** Points the project at another database server (its database there already holds its data). */
export async function setProjectServer(db: Queryable, ref: string, serverId: string): Promise<void> {
  await db.query('update projects set db_server = $2 where ref = $1', [ref, serverId]);
}

/**
 * Claims the project's removal: status GOING_DOWN, `removed_at` the time of the claim. Atomic (one
 * UPDATE; a concurrent one re-reads the row it waited for): of parallel deletes exactly one gets
 * true. A claim released by a removal that failed (`releaseRemoval`), or older than
 * REMOVAL_CLAIM_STALE (its process died), can be taken again, so a retried delete resumes.
 */
export async function claimRemoval(db: Queryable, ref: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `update projects set status = 'GOING_DOWN', removed_at = now()
      where ref = $1 and status <> 'REMOVED'
        and (status <> 'GOING_DOWN' or removed_at is null or removed_at < now() - $2::interval)`,
    [ref, REMOVAL_CLAIM_STALE],
  );
  return rowCount === 1;
}

/** How long a removal claim holds without its removal finishing. */
const REMOVAL_CLAIM_STALE = '10 minutes';

/** A removal that failed gives its claim back (the project stays GOING_DOWN). */
export async function releaseRemoval(db: Queryable, ref: string): Promise<void> {
  await db.query(`update projects set removed_at = null where ref = $1 and status = 'GOING_DOWN'`, [ref]);
}

/** Leaves the tombstone: status REMOVED, and no credentials. */
export async function markRemoved(db: Queryable, ref: string): Promise<void> {
  await db.query(
    `update projects set status = 'REMOVED', removed_at = now(), jwt_secret = '', anon_key = '', service_role_key = '' where ref = $1`,
    [ref],
  );
}
