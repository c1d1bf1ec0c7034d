/**
 * Which project or organization a management request is about, and whether the caller may touch
 * it. Routes with a `:ref` path parameter get `req.managedProject` filled in by the hook before
 * their handler runs; routes with `:slug` get `req.managedOrganization`.
 *
 * Order of checks (documented in the README): malformed ref → 400; unknown ref → 404 "Project not
 * found"; a project of an organization the caller is not a member of → 403 "Forbidden resource";
 * a deleted (REMOVED) project → 400 "Resource has been removed".
 */
import type { FastifyRequest } from 'fastify';
import type { Platform } from '../../platform/platform.js';
import type { ProjectContext } from '../../platform/project-context.js';
import { isProjectRef } from '../../platform/refs.js';
import { ApiError, badRequest, forbidden, notFound, RESOURCE_REMOVED } from './errors.js';
import { callerOf } from './auth.js';

export interface ManagedProject {
  ref: string;
  organizationId: string;
  name: string;
  region: string;
  status: string;
  createdAt: string;
  dbServer: string;
  dbName: string;
  /** The live project (database pool, keys); loaded on first use. */
  context(): Promise<ProjectContext>;
}

export interface ManagedOrganization {
  slug: string;
  name: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    managedProject?: ManagedProject;
    managedOrganization?: ManagedOrganization;
  }
}

export const ORGANIZATION_SLUG_PATTERN = /^[\w-]+$/;

interface ProjectAccessRow {
  ref: string;
  organization_id: string;
  name: string;
  region: string;
  status: string;
  created_at: Date;
  db_server: string;
  db_name: string;
  member: boolean;
}

/** Looks up `ref` for `userId`, applying the checks above. */
export async function loadManagedProject(
  platform: Platform,
  userId: string,
  ref: string,
): Promise<ManagedProject> {
  if (!isProjectRef(ref)) throw badRequest('Invalid project ref: must be 20 lowercase letters');
  const { rows } = await platform.pool.query<ProjectAccessRow>(
    `select p.ref, p.organization_id, p.name, p.region, p.status, p.created_at, p.db_server, p.db_name,
            exists (select 1 from organization_members m where m.organization_id = p.organization_id and m.user_id = $2) as member
       from projects p where p.ref = $1`,
    [ref, userId],
  );
  const row = rows[0];
  if (!row) throw notFound('Project not found');
  if (!row.member) throw forbidden();
  if (row.status === 'REMOVED') throw badRequest(RESOURCE_REMOVED);
  return {
    ref: row.ref,
    organizationId: row.organization_id,
    name: row.name,
    region: row.region,
    status: row.status,
    createdAt: new Date(row.created_at).toISOString(),
    dbServer: row.db_server,
    dbName: row.db_name,
    async context() {
      const ctx = await platform.project(row.ref);
      if (!ctx) throw new ApiError(400, RESOURCE_REMOVED);
      return ctx;
    },
  };
}

/** Looks up an organization slug for `userId`: malformed → 400, unknown → 404, not a member → 403. */
export async function loadManagedOrganization(
  platform: Platform,
  userId: string,
  slug: string,
  field = 'slug',
): Promise<ManagedOrganization> {
  if (!ORGANIZATION_SLUG_PATTERN.test(slug)) throw badRequest(`${field} must match pattern "^[\\w-]+$"`);
  const { rows } = await platform.pool.query<{ id: string; name: string; member: boolean }>(
    `select o.id, o.name,
            exists (select 1 from organization_members m where m.organization_id = o.id and m.user_id = $2) as member
       from organizations o where o.id = $1`,
    [slug, userId],
  );
  const row = rows[0];
  if (!row) throw notFound('Organization not found');
  if (!row.member) throw forbidden();
  return { slug: row.id, name: row.name };
}

/** The project the route's `:ref` names (set by the hook); throws if the route has none. */
export function projectOf(req: FastifyRequest): ManagedProject {
  if (!req.managedProject) throw new Error(`route ${req.routeOptions.url} has no :ref parameter`);
  return req.managedProject;
}

export function organizationOf(req: FastifyRequest): ManagedOrganization {
  if (!req.managedOrganization) throw new Error(`route ${req.routeOptions.url} has no :slug parameter`);
  return req.managedOrganization;
}

/** Hook body: resolves `:ref` / `:slug` path parameters for the authenticated caller. */
export async function resolvePathResources(platform: Platform, req: FastifyRequest): Promise<void> {
  const params = (req.params ?? {}) as Record<string, string | undefined>;
  if (params.ref !== undefined)
    req.managedProject = await loadManagedProject(platform, callerOf(req).userId, params.ref);
  if (params.slug !== undefined)
    req.managedOrganization = await loadManagedOrganization(platform, callerOf(req).userId, params.slug);
}
