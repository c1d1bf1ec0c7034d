/**
 * Which project a request is for: the `/project/<ref>/` path prefix, a `<ref>.localhost` Host, a
 * custom hostname, or the default project at the bare address.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import type { Platform } from './platform.js';
import type { ProjectContext } from './project-context.js';
import { isProjectRef } from './refs.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The project this request addresses; undefined for an unknown ref or host. */
    project?: ProjectContext;
    /** True when the request named a project explicitly (prefix, subdomain, custom hostname). */
    projectExplicit?: boolean;
  }
}

const PREFIX = /^\/project\/([a-z]{20})(?=\/|\?|$)/;
/**
 * The ref a request's path named, kept on the request itself (a symbol-keyed property): a WeakMap
 * entry per request cost more, in the map and in the garbage collector's handling of weak entries.
 */
const PREFIXED_REF = Symbol('strata.prefixedRef');
type RoutedMessage = IncomingMessage & { [PREFIXED_REF]?: string };

function prefixedRef(req: IncomingMessage): string | undefined {
  return (req as RoutedMessage)[PREFIXED_REF];
}

/** Fastify `rewriteUrl`: strips `/project/<ref>` and remembers the ref. */
export function rewriteProjectUrl(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const m = url.startsWith('/project/') ? PREFIX.exec(url) : null;
  const ref = m?.[1];
  if (!m || ref === undefined) return url;
  (req as RoutedMessage)[PREFIXED_REF] = ref;
  const rest = url.slice(m[0].length);
  return rest === '' || rest.startsWith('?') ? '/' + rest : rest;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1', '0.0.0.0']);

export function hostnameOf(hostHeader: string | undefined): string {
  if (!hostHeader) return '';
  const h = hostHeader.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  const i = h.lastIndexOf(':');
  return i >= 0 ? h.slice(0, i) : h;
}

export async function projectForRequest(
  platform: Platform,
  req: FastifyRequest,
): Promise<{ project?: ProjectContext; explicit: boolean }> {
  return projectForIncoming(platform, req.raw);
}

/**
 * projectForRequest for a request Fastify does not route (a WebSocket upgrade): rewriteProjectUrl
 * must have seen it first.
 */
export async function projectForIncoming(
  platform: Platform,
  raw: IncomingMessage,
): Promise<{ project?: ProjectContext; explicit: boolean }> {
  const prefixed = prefixedRef(raw);
  if (prefixed) return { project: await platform.project(prefixed), explicit: true };
  const host = hostnameOf(raw.headers.host);
  const subRef = /^([a-z]{20})\.localhost$/.exec(host)?.[1];
  if (subRef !== undefined && isProjectRef(subRef))
    return { project: await platform.project(subRef), explicit: true };
  if (host === '' || LOOPBACK_HOSTS.has(host) || host === platform.config.host) {
    return { project: await platform.defaultProject(), explicit: false };
  }
  const ref = await platform.refForHost(host);
  if (ref) return { project: await platform.project(ref), explicit: true };
  return { project: undefined, explicit: true };
}

/**
 * projectForIncoming answered without waiting when the project it names is loaded already (the
 * usual case: a ref prefix, a `<ref>.localhost` Host or the default project); undefined when the
 * answer needs a wait (a project not loaded yet or unknown, a custom hostname).
 */
function projectForIncomingNow(
  platform: Platform,
  raw: IncomingMessage,
): { project: ProjectContext; explicit: boolean } | undefined {
  const prefixed = prefixedRef(raw);
  let ref: string | undefined;
  let explicit = true;
  if (prefixed) ref = prefixed;
  else {
    const host = hostnameOf(raw.headers.host);
    const subRef = /^([a-z]{20})\.localhost$/.exec(host)?.[1];
    if (subRef !== undefined && isProjectRef(subRef)) ref = subRef;
    else if (host === '' || LOOPBACK_HOSTS.has(host) || host === platform.config.host) {
      ref = platform.defaultRef;
      explicit = false;
    }
  }
  const project = ref === undefined ? undefined : platform.projectIfLoaded(ref);
  return project ? { project, explicit } : undefined;
}

export function registerProjectRouting(app: FastifyInstance, platform: Platform): void {
  app.decorateRequest('project', undefined);
  app.decorateRequest('projectExplicit', false);
  // A callback hook: a loaded project is routed to at once (no promise per request), the rest waits.
  app.addHook('onRequest', (req, _reply, done) => {
    const now = projectForIncomingNow(platform, req.raw);
    if (now) {
      req.project = now.project;
      req.projectExplicit = now.explicit;
      return done();
    }
    projectForRequest(platform, req).then(({ project, explicit }) => {
      req.project = project;
      req.projectExplicit = explicit;
      done();
    }, done);
  });
}
