/**
 * A tiny authoritative DNS server on loopback UDP for tests (dns-packet + node:dgram): answers TXT,
 * CNAME and A questions from an in-memory zone; everything else is NXDOMAIN. Point the platform at
 * it with `dnsResolver: server.address`.
 */
import { createSocket, type Socket } from 'node:dgram';
import dnsPacket from 'dns-packet';

export interface TestDnsServer {
  /** "127.0.0.1:<port>" */
  address: string;
  setTxt(name: string, values: string[]): void;
  setCname(name: string, target: string): void;
  remove(name: string): void;
  close(): Promise<void>;
}

interface Entry {
  txt?: string[];
  cname?: string;
}

export async function startDnsServer(): Promise<TestDnsServer> {
  const zone = new Map<string, Entry>();
  const key = (n: string) => n.toLowerCase().replace(/\.$/, '');
  const socket: Socket = createSocket('udp4');
  socket.on('message', (msg, rinfo) => {
    let query: dnsPacket.Packet;
    try {
      query = dnsPacket.decode(msg);
    } catch {
      return;
    }
    const q = query.questions?.[0];
    const answers: dnsPacket.Answer[] = [];
    let found = false;
    if (q) {
      const e = zone.get(key(q.name));
      if (e) found = true;
      if (e?.txt && q.type === 'TXT')
        for (const v of e.txt) answers.push({ type: 'TXT', name: q.name, ttl: 1, data: [v] });
      if (e?.cname && (q.type === 'CNAME' || q.type === 'A'))
        answers.push({ type: 'CNAME', name: q.name, ttl: 1, data: e.cname });
    }
    const reply = dnsPacket.encode({
      type: 'response',
      id: query.id,
      flags: dnsPacket.AUTHORITATIVE_ANSWER | (found ? 0 : 3), // rcode 3 = NXDOMAIN
      questions: query.questions,
      answers,
    });
    socket.send(reply, rinfo.port, rinfo.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const port = socket.address().port;
  return {
    address: `127.0.0.1:${port}`,
    setTxt: (name, values) => zone.set(key(name), { ...zone.get(key(name)), txt: values }),
    setCname: (name, target) => zone.set(key(name), { ...zone.get(key(name)), cname: target }),
    remove: (name) => zone.delete(key(name)),
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
