/** Custom hostname operations (M15–M19) on top of the store, the DNS lookups and the state machine. */
import { isIP } from 'node:net';
import type { Platform } from '../../platform/platform.js';
import { dnsLookup } from './dns-lookup.js';
import {
  deleteHostname,
  getHostname,
  hostnameTakenElsewhere,
  insertHostname,
  updateHostnameStatus,
  type HostnameRecord,
} from './hostname-store.js';
import type { HostnameRouter } from './host-routing.js';
import {
  activate,
  HostnameStateError,
  MSG_EXISTS,
  MSG_NONE,
  MSG_TAKEN,
  normalizeHostname,
  reverify,
} from './state-machine.js';

/** The name a custom hostname must CNAME to: <ref>.<platform host>, or <ref>.localhost when the platform listens on an IP address. */
export function originServer(platform: Platform, ref: string): string {
  const host = platform.config.host.toLowerCase();
  return isIP(host) || host === 'localhost' || host === '' ? `${ref}.localhost` : `${ref}.${host}`;
}

export async function getConfig(platform: Platform, ref: string): Promise<HostnameRecord> {
  const r = await getHostname(platform, ref);
  if (!r) throw new HostnameStateError(MSG_NONE);
  return r;
}

export async function initializeHostname(
  platform: Platform,
  ref: string,
  input: unknown,
): Promise<HostnameRecord> {
  const hostname = normalizeHostname(input);
  if (!hostname)
    throw new HostnameStateError('custom_hostname must be a valid domain name such as api.example.com');
  if (await getHostname(platform, ref)) throw new HostnameStateError(MSG_EXISTS);
  if (await hostnameTakenElsewhere(platform, ref, hostname)) throw new HostnameStateError(MSG_TAKEN);
  const r = await insertHostname(platform, ref, hostname, originServer(platform, ref));
  if (!r) throw new HostnameStateError((await getHostname(platform, ref)) ? MSG_EXISTS : MSG_TAKEN);
  return r;
}

export async function reverifyHostname(platform: Platform, ref: string): Promise<HostnameRecord> {
  const r = await getConfig(platform, ref);
  const dns = dnsLookup(platform.config.dnsResolver);
  const [txt, cname] = await Promise.all([dns.txt(r.txtName), dns.cname(r.hostname)]);
  const outcome = reverify(
    r.status,
    { hostname: r.hostname, txtName: r.txtName, txtValue: r.txtValue, origin: r.originServer },
    { txt, cname },
  );
  return (
    (await updateHostnameStatus(platform, ref, r.status, outcome.status, outcome.errors)) ??
    getConfig(platform, ref)
  );
}

export async function activateHostname(
  platform: Platform,
  router: HostnameRouter,
  ref: string,
): Promise<HostnameRecord> {
  const r = await getConfig(platform, ref);
  const next = activate(r.status);
  if (next === r.status) return r;
  const updated = await updateHostnameStatus(platform, ref, r.status, next, []);
  router.forget(r.hostname);
  await platform.events.publish({ kind: 'hostname', ref, key: r.hostname });
  return updated ?? getConfig(platform, ref);
}

export async function removeHostname(platform: Platform, router: HostnameRouter, ref: string): Promise<void> {
  const r = await getHostname(platform, ref);
  await deleteHostname(platform, ref);
  if (!r) return;
  router.forget(r.hostname);
  await platform.events.publish({ kind: 'hostname', ref, key: r.hostname });
}
