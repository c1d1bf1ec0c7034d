/** The management infrastructure routes use (see the comment at the top of ../index.ts). */
export type { ManagementModule } from './module.js';
export {
  ApiError,
  badRequest,
  unauthorized,
  forbidden,
  notFound,
  conflict,
  RESOURCE_REMOVED,
  sendError,
  badRequestOn,
  refuse,
} from './errors.js';
export { callerOf, type ManagementCaller } from './auth.js';
export {
  projectOf,
  organizationOf,
  loadManagedProject,
  loadManagedOrganization,
  authorizeRole,
  type ManagedProject,
  type ManagedOrganization,
} from './project-access.js';
export type { RateLimitPolicy } from './route-config.js';
export { ORGANIZATION_ROLES, ROLE_NAMES, type OrganizationRole } from './permissions.js';
export { Optional, Strict, StringEnum, Name, optionalBody, oneMessage, conditional } from './schemas.js';
