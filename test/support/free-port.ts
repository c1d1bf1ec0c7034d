/**
 * Ports for servers a test starts itself (a `strata start` child, a port nobody listens on). They
 * are taken below the kernel's ephemeral range, where every outgoing connection of the machine
 * takes its local port: a port found free there can be taken again by any connection before the
 * server under test binds it, which on a busy run happens (the test then fails with EADDRINUSE or
 * reaches a stranger). Below the range only another test's random pick can collide, and a pick is
 * checked free.
 */
import { readFileSync } from 'node:fs';
import { findFreePort } from '../../src/db/free-port.js';

function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 12_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/** A free TCP port on 127.0.0.1 outside the ephemeral range (or, failing that, any free one). */
export async function freeTestPort(): Promise<number> {
  const high = ephemeralLow();
  const low = Math.max(10_000, high - 12_000);
  for (let i = 0; i < 50; i++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if ((await findFreePort(port)) === port) return port;
  }
  return findFreePort(0);
}
