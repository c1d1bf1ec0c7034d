/**
 * DNS lookups for custom hostname verification: a node:dns Resolver pointed at
 * config.dnsResolver ("host:port", e.g. a loopback test server) or the system's servers.
 */
import { Resolver } from 'node:dns/promises';

export interface DnsLookup {
  /** TXT records of `name`, each record's chunks joined; [] when there are none. */
  txt(name: string): Promise<string[]>;
  /** CNAME targets of `name` (lowercase, no trailing dot); [] when there are none. */
  cname(name: string): Promise<string[]>;
}

const ABSENT = new Set(['ENODATA', 'ENOTFOUND', 'NXDOMAIN', 'ENONAME']);

export function dnsLookup(server: string | undefined): DnsLookup {
  const resolver = new Resolver({ timeout: 2000, tries: 2 });
  if (server) resolver.setServers([server]);
  const absentAsEmpty = async <T>(p: Promise<T[]>): Promise<T[]> => {
    try {
      return await p;
    } catch (err) {
      if (ABSENT.has((err as { code?: string }).code ?? '')) return [];
      throw err;
    }
  };
  return {
    txt: async (name) => (await absentAsEmpty(resolver.resolveTxt(name))).map((chunks) => chunks.join('')),
    cname: async (name) =>
      (await absentAsEmpty(resolver.resolveCname(name))).map((t) => t.toLowerCase().replace(/\.$/, '')),
  };
}
