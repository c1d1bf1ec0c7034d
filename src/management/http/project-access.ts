/**
 * Which project or organization a management request is about, and whether the caller may touch
 * it. Routes with a `:ref` path parameter get `req.managedProject` filled in by the hook before
 * their handler runs; routes with `:slug` get `req.managedOrganization`.
 *
 * Order of checks (documented in docs/management.md): malformed ref → 400; unknown ref → 404 "Project not
 * found"; a project of an organization the caller is not a member of → 403 "Forbidden resource";
 * a role below the route's (permissions.ts) → 403 naming the role needed; a deleted (REMOVED)
 * project → 400 "Resource has been removed".
 */
import type { FastifyRequest } from 'fastify';
import type { Platform } from '../../platform/platform.js';
import type { ProjectContext } from '../../platform/project-context.js';
import { findProjectForUser, type Project } from '../../platform/projects.js';
import { isProjectRef } from '../../platform/refs.js';
import { ApiError, badRequest, forbidden, notFound, RESOURCE_REMOVED } from './errors.js';
import { callerOf } from './auth.js';
import { organizationWithRole } from '../organizations/store.js';
import {
  isOrganizationRole,
  permissionOf,
  ROLE_NAMES,
  roleAtLeast,
  type OrganizationRole,
} from './permissions.js';

export interface ManagedProject extends Project {
  /** The caller's role in the project's organization. */
  role: OrganizationRole;
  /** The live project (database pool, keys); loaded on first use. */
  context(): Promise<ProjectContext>;
}

export interface ManagedOrganization {
  slug: string;
  name: string;
  /** The caller's role in it. */
  role: OrganizationRole;
}

declare module 'fastify' {
  interface FastifyRequest {
    managedProject?: ManagedProject;
    managedOrganization?: ManagedOrganization;
    /** Set once the caller's role was checked against the route's row in permissions.ts. */
    roleChecked?: boolean;
  }
}

/** A stored role this code does not know counts as the weakest one. */
function roleOf(stored: string | null): OrganizationRole {
  return isOrganizationRole(stored) ? stored : 'read_only';
}

/**
 * Checks the caller's `role` in the organization a request is about against the route's row in
 * permissions.ts: 403 when it is below. Called by `resolvePathResources` for `:ref` / `:slug`
 * routes and by routes whose organization is in the body.
 */
export function authorizeRole(req: FastifyRequest, role: OrganizationRole): void {
  const row = permissionOf(req.method === 'HEAD' ? 'GET' : req.method, req.routeOptions.url ?? '');
  if (!row) throw forbidden();
  if (!roleAtLeast(role, row.role))
    throw forbidden(
      `Your role in this organization (${ROLE_NAMES[role]}) does not allow this action: it needs ${ROLE_NAMES[row.role]} or above (${row.permission})`,
    );
  req.roleChecked = true;
}

export const ORGANIZATION_SLUG_PATTERN = /^[\w-]+$/;

/** Looks up `ref` for `userId`, applying the checks above. */
export async function loadManagedProject(
  platform: Platform,
  userId: string,
  ref: string,
  /** Checks the role before the REMOVED status (so that status is not disclosed below the role). */
  authorize: (role: OrganizationRole) => void = () => {},
): Promise<ManagedProject> {
  if (!isProjectRef(ref)) throw badRequest('Invalid project ref: must be 20 lowercase letters');
  const found = await findProjectForUser(platform.pool, ref, userId);
  if (!found) throw notFound('Project not found');
  if (found.role === null) throw forbidden();
  const role = roleOf(found.role);
  authorize(role);
  const { project } = found;
  if (project.status === 'REMOVED') throw badRequest(RESOURCE_REMOVED);
  return {
    ...project,
    role,
    async context() {
      const ctx = await platform.project(project.ref);
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
  const row = await organizationWithRole(platform.pool, slug, userId);
  if (!row) throw notFound('Organization not found');
  if (row.role === null) throw forbidden();
  return { slug: row.id, name: row.name, role: roleOf(row.role) };
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

/**
 * Hook body: resolves `:ref` / `:slug` path parameters for the authenticated caller and checks the
 * caller's role there against the route's row in permissions.ts (routes about no organization
 * need none; routes whose organization is in the body check it in their handler).
 */
export async function resolvePathResources(platform: Platform, req: FastifyRequest): Promise<void> {
  if (req.is404) return; // the not-found handler answers
  const row = permissionOf(req.method === 'HEAD' ? 'GET' : req.method, req.routeOptions.url ?? '');
  if (!row) throw forbidden();
  const params = (req.params ?? {}) as Record<string, string | undefined>;
  const userId = callerOf(req).userId;
  if (row.where === 'project') {
    if (params.ref === undefined) throw new Error(`route ${req.routeOptions.url} has no :ref parameter`);
    req.managedProject = await loadManagedProject(platform, userId, params.ref, (role) =>
      authorizeRole(req, role),
    );
  } else if (row.where === 'organization') {
    if (params.slug === undefined) throw new Error(`route ${req.routeOptions.url} has no :slug parameter`);
    const org = await loadManagedOrganization(platform, userId, params.slug);
    authorizeRole(req, org.role);
    req.managedOrganization = org;
  } else if (row.where === 'caller') {
    req.roleChecked = true;
  }
}
