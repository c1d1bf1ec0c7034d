/** What every Storage route needs: the project of the request, its backend, the global limit. */
import type { FastifyRequest } from 'fastify';
import type { Platform } from '../../platform/platform.js';
import type { ProjectContext } from '../../platform/project-context.js';
import type { StorageBackend } from '../backend/interface.js';
import type { Backends } from '../backend/index.js';
import { errors } from '../errors.js';
import { assertBucketName } from '../keys.js';

export interface StorageDeps {
  platform: Platform;
  backends: Backends;
}

export interface RequestScope {
  project: ProjectContext;
  backend: StorageBackend;
  globalLimit: number;
}

export function scopeOf(deps: StorageDeps, req: FastifyRequest): RequestScope {
  const project = req.project;
  if (!project) throw errors.projectNotFound();
  return {
    project,
    backend: deps.backends.for(project),
    globalLimit: deps.platform.config.storageFileSizeLimit,
  };
}

export interface ObjectParams {
  bucket: string;
  '*': string;
}

/** `{bucket}` and `{path*}` of an object route (percent-decoded once by the router). */
export function objectParams(req: FastifyRequest): { bucket: string; key: string } {
  const p = req.params as ObjectParams;
  assertBucketName(p.bucket);
  return { bucket: p.bucket, key: p['*'] ?? '' };
}

export function headerValue(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
