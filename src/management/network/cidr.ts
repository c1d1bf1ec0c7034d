/** Validation of network restriction CIDRs (ipaddr.js): IPv4 list and IPv6 list, normalised to the network address. */
import ipaddr from 'ipaddr.js';

export class CidrError extends Error {}

export function normalizeCidrs(input: unknown, family: 4 | 6, field: string): string[] {
  if (input === undefined || input === null) return [];
  if (!Array.isArray(input)) throw new CidrError(`${field} must be an array of CIDR strings`);
  const out: string[] = [];
  for (const item of input) {
    if (typeof item !== 'string') throw new CidrError(`${field} must be an array of CIDR strings`);
    let parsed: [ipaddr.IPv4 | ipaddr.IPv6, number];
    try {
      parsed = ipaddr.parseCIDR(item.trim());
    } catch {
      throw new CidrError(`Invalid ${family === 4 ? 'IPv4' : 'IPv6'} CIDR in ${field}: ${item}`);
    }
    const [addr, bits] = parsed;
    if ((family === 4) !== (addr.kind() === 'ipv4'))
      throw new CidrError(`Invalid ${family === 4 ? 'IPv4' : 'IPv6'} CIDR in ${field}: ${item}`);
    const network =
      family === 4
        ? ipaddr.IPv4.networkAddressFromCIDR(item.trim())
        : ipaddr.IPv6.networkAddressFromCIDR(item.trim());
    const text = `${network.toString()}/${bits}`;
    if (!out.includes(text)) out.push(text);
  }
  return out;
}
