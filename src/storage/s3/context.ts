/** What every S3 operation gets: the request, its project and backend, the signed-in caller. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Platform } from '../../platform/platform.js';
import type { ProjectContext } from '../../platform/project-context.js';
import type { Caller } from '../auth.js';
import type { StorageBackend } from '../backend/interface.js';
import type { S3Auth } from './auth.js';

export interface S3Request {
  req: FastifyRequest;
  reply: FastifyReply;
  platform: Platform;
  project: ProjectContext;
  backend: StorageBackend;
  caller: Caller;
  /** Frame verification of a signed aws-chunked body. */
  chunks?: S3Auth['chunks'];
  globalLimit: number;
  bucket: string;
  /** '' for bucket-level requests. */
  key: string;
  query: Record<string, string | string[]>;
}

export function q(r: S3Request, name: string): string | undefined {
  const v = r.query[name];
  return Array.isArray(v) ? v[0] : v;
}

export function h(r: S3Request, name: string): string | undefined {
  const v = r.req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** `x-amz-meta-*` headers as user metadata (names lower-cased, as HTTP gives them). */
export function userMetadataOf(r: S3Request): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(r.req.headers)) {
    if (name.startsWith('x-amz-meta-') && typeof v === 'string') out[name.slice('x-amz-meta-'.length)] = v;
  }
  return out;
}

export function sendXml(r: S3Request, status: number, xml: string): FastifyReply {
  return r.reply.code(status).type('application/xml').send(xml);
}
