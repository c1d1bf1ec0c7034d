/**
 * Who may call the /iceberg routes: the service role only, as the reference (its JWT plugin with
 * `enforceJwtRoles: [service role]`). A missing or invalid token and any other role are 403.
 */
import type { FastifyRequest } from 'fastify';
import { isServiceRole, requireCaller } from '../auth.js';
import { StorageError } from '../errors.js';
import { type StorageDeps, scopeOf } from '../routes/context.js';
import type { CatalogScope } from './catalog.js';
import { IcebergError, iceErrors } from './errors.js';

export type IcebergDeps = StorageDeps;

export async function icebergScope(deps: IcebergDeps, req: FastifyRequest): Promise<CatalogScope> {
  const { project, backend } = scopeOf(deps, req);
  let caller: Awaited<ReturnType<typeof requireCaller>>;
  try {
    caller = await requireCaller(req, project);
  } catch (err) {
    // No token at all: the reference's role guard words it so; a refused token keeps its reason.
    if (err instanceof StorageError && err.code === 'InvalidRequest')
      throw new IcebergError(403, 'AccessDenied', 'Access denied: JWT is not authenticated');
    throw err;
  }
  if (!isServiceRole(caller)) throw iceErrors.invalidRole();
  return { project, caller, backend };
}
