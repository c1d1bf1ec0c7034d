/**
 * The console's origin and the API origin (docs/security/origins.md): the same host name, each on
 * its own port. The console's page is on `http://<host>:<console port>`; it reaches the Management,
 * Storage and GraphQL APIs cross-origin at `http://<host>:<API port>`, where user content (function
 * answers, stored objects) is served, so that content never shares an origin with the owner's token.
 */
import { hostnameOf } from '../platform/routing.js';

/** The listening ports, filled in by startPlatform once each server listens. */
export interface PlatformPorts {
  api: number;
  /** undefined: no console (STRATA_CONSOLE_PORT=off). */
  console?: number;
}

/** A host name or address literal only: what may go into an origin, a CSP, a redirect. */
const PLAIN_HOST = /^(?:[a-z0-9](?:[a-z0-9.-]{0,252})|\[[0-9a-f:.]{2,45}\])$/;

/** The request's host name (lower case, without port) when it is a plain one; else undefined. */
export function requestHostname(hostHeader: string | undefined): string | undefined {
  const name = hostnameOf(hostHeader);
  return PLAIN_HOST.test(name) ? name : undefined;
}

/** `http://<host name>:<port>`. */
export function originOn(hostname: string, port: number): string {
  return `http://${hostname}:${port}`;
}

/** The console's origin for a request that reached either server as `hostHeader`. */
export function consoleOriginFor(ports: PlatformPorts, hostHeader: string | undefined): string | undefined {
  const name = requestHostname(hostHeader);
  return name === undefined || ports.console === undefined ? undefined : originOn(name, ports.console);
}

/** The API origin the console page served for `hostHeader` calls. */
export function apiOriginFor(ports: PlatformPorts, hostHeader: string | undefined): string | undefined {
  const name = requestHostname(hostHeader);
  return name === undefined ? undefined : originOn(name, ports.api);
}
