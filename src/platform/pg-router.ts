/**
 * The platform's PostgreSQL router (what the hosted platform's pooler does for its address):
 * a client logs in as `<role>.<ref>` (e.g. `postgres.<ref>`) to any database name, and the router
 * opens a connection to that project's database on the server holding it, as that same role,
 * then relays bytes both ways (session mode: one server connection per client connection).
 *
 * Authentication is PostgreSQL's own (SCRAM passes through untouched); the router only reads the
 * startup packet and, until the session is ready, the server's answers: a failed password counts
 * towards the project's network bans, BackendKeyData is remembered so cancel requests reach the
 * right server. Banned addresses, addresses outside the project's network restrictions, unknown
 * projects and the platform's internal roles are refused before any server is contacted.
 * TLS is not offered (SSLRequest → 'N'): clients that insist on TLS must be told sslmode=disable.
 */
import net from 'node:net';

export interface RouterTarget {
  host: string;
  port: number;
  dbName: string;
}

export interface RouterDeps {
  /** The project's server and database, or undefined when there is no such live project. */
  resolve(ref: string): Promise<RouterTarget | undefined>;
  /** Undefined when the client may go on; otherwise the message of the refusal. */
  refuse(ref: string, ip: string): Promise<string | undefined>;
  recordAuthFailure(ref: string, ip: string): Promise<void>;
  log(line: string): void;
}

export interface PgRouter {
  host: string;
  port: number;
  close(): Promise<void>;
}

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const MAX_STARTUP = 10_000;
const STARTUP_TIMEOUT_MS = 10_000;
const LOGIN_TIMEOUT_MS = 30_000;
/** `<role>.<ref>`: a project ref is 20 lowercase letters. */
const USER_PATTERN = /^(.+)\.([a-z]{20})$/;
/** Roles of the platform itself that the router never lets in. */
const INTERNAL_ROLE = /^strata_/;

function errorPacket(code: string, message: string): Buffer {
  const parts: Buffer[] = [];
  for (const [k, v] of [
    ['S', 'FATAL'],
    ['V', 'FATAL'],
    ['C', code],
    ['M', message],
  ] as const)
    parts.push(Buffer.from(k, 'latin1'), Buffer.from(v, 'utf8'), Buffer.from([0]));
  parts.push(Buffer.from([0]));
  const body = Buffer.concat(parts);
  const head = Buffer.alloc(5);
  head.write('E', 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

function parseParams(packet: Buffer): Map<string, string> | undefined {
  const params = new Map<string, string>();
  let i = 8;
  for (;;) {
    const end = packet.indexOf(0, i);
    if (end < 0) return undefined;
    if (end === i) return params;
    const key = packet.toString('utf8', i, end);
    const vEnd = packet.indexOf(0, end + 1);
    if (vEnd < 0) return undefined;
    params.set(key, packet.toString('utf8', end + 1, vEnd));
    i = vEnd + 1;
  }
}

function startupPacket(protocol: number, params: Map<string, string>): Buffer {
  const parts: Buffer[] = [];
  for (const [k, v] of params)
    parts.push(Buffer.from(k, 'utf8'), Buffer.from([0]), Buffer.from(v, 'utf8'), Buffer.from([0]));
  parts.push(Buffer.from([0]));
  const body = Buffer.concat(parts);
  const head = Buffer.alloc(8);
  head.writeInt32BE(body.length + 8, 0);
  head.writeInt32BE(protocol, 4);
  return Buffer.concat([head, body]);
}

/** The SQLSTATE of an ErrorResponse body. */
function sqlStateOf(body: Buffer): string | undefined {
  let i = 0;
  while (i < body.length && body[i] !== 0) {
    const type = String.fromCharCode(body[i] ?? 0);
    const end = body.indexOf(0, i + 1);
    if (end < 0) return undefined;
    if (type === 'C') return body.toString('utf8', i + 1, end);
    i = end + 1;
  }
  return undefined;
}

export async function startPgRouter(host: string, port: number, deps: RouterDeps): Promise<PgRouter> {
  /** Cancel keys (pid + secret) → the server that issued them. */
  const cancelKeys = new Map<string, { host: string; port: number }>();
  const sockets = new Set<net.Socket>();

  function forwardCancel(packet: Buffer): void {
    const key = packet.subarray(8).toString('hex');
    const target = cancelKeys.get(key);
    if (!target) return;
    const s = net.connect(target.port, target.host, () => s.end(packet));
    s.on('error', () => s.destroy());
    s.setTimeout(5_000, () => s.destroy());
  }

  function handle(client: net.Socket): void {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    const ip = normalize(client.remoteAddress);
    let buf = Buffer.alloc(0);
    let routed = false;
    const timer = setTimeout(() => client.destroy(), STARTUP_TIMEOUT_MS);
    client.on('close', () => clearTimeout(timer));

    const refuse = (code: string, message: string) => {
      clearTimeout(timer);
      client.end(errorPacket(code, message));
    };

    const onData = (chunk: Buffer) => {
      if (routed) return;
      buf = Buffer.concat([buf, chunk]);
      while (buf.length >= 8) {
        const len = buf.readInt32BE(0);
        if (len < 8 || len > MAX_STARTUP) return client.destroy();
        if (buf.length < len) return;
        const packet = buf.subarray(0, len);
        buf = buf.subarray(len);
        const code = packet.readInt32BE(4);
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          client.write('N');
          continue;
        }
        if (code === CANCEL_REQUEST) {
          forwardCancel(packet);
          clearTimeout(timer);
          client.end();
          routed = true;
          return;
        }
        if (code >> 16 !== 3) return refuse('08P01', 'unsupported frontend protocol');
        routed = true;
        client.pause();
        client.removeListener('data', onData);
        route(client, ip, code, packet, buf, timer).catch((err: unknown) => {
          deps.log(`pooler: ${err instanceof Error ? err.message : String(err)}`);
          refuse('XX000', 'internal error in the platform pooler');
        });
        return;
      }
    };
    client.on('data', onData);
  }

  async function route(
    client: net.Socket,
    ip: string,
    protocol: number,
    packet: Buffer,
    rest: Buffer,
    timer: NodeJS.Timeout,
  ): Promise<void> {
    const refuse = (code: string, message: string) => {
      clearTimeout(timer);
      client.end(errorPacket(code, message));
    };
    const params = parseParams(packet);
    const user = params?.get('user');
    const m = user ? USER_PATTERN.exec(user) : null;
    const [, role = '', ref = ''] = m ?? [];
    if (!params || !m || INTERNAL_ROLE.test(role)) return refuse('XX000', 'Tenant or user not found');
    const target = await deps.resolve(ref);
    if (!target) return refuse('XX000', 'Tenant or user not found');
    const refusal = await deps.refuse(ref, ip);
    if (refusal) return refuse('28000', refusal);
    params.set('database', target.dbName);
    clearTimeout(timer);
    const loginTimer = setTimeout(() => client.destroy(), LOGIN_TIMEOUT_MS);
    const server = net.connect(target.port, target.host);
    sockets.add(server);
    let cancelKey: string | undefined;
    /** An auth error held back while its failure is counted. */
    let holding: Promise<void> | undefined;
    const cleanup = () => {
      clearTimeout(loginTimer);
      if (cancelKey) cancelKeys.delete(cancelKey);
      client.destroy();
      server.destroy();
      sockets.delete(server);
    };
    server.on('error', (err) => {
      if (!client.destroyed && client.bytesWritten === 0)
        client.end(errorPacket('08006', `could not connect to the project's database: ${err.message}`));
      cleanup();
    });
    client.on('close', cleanup);
    server.on('close', () => {
      if (holding === undefined) cleanup();
      else void holding.then(() => client.end(), cleanup);
    });
    server.on('connect', () => {
      server.write(startupPacket(protocol, params));
      if (rest.length) server.write(rest);
      client.pipe(server);
    });
    // Until ReadyForQuery, watch the server's messages (auth failures, cancel keys); relay everything.
    let watching = true;
    let pending = Buffer.alloc(0);
    const relay = (chunk: Buffer) => {
      if (!client.write(chunk)) {
        server.pause();
        client.once('drain', () => server.resume());
      }
    };
    server.on('data', (chunk: Buffer) => {
      if (!watching) return relay(chunk);
      let authFailed = false;
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 5) {
        const len = pending.readInt32BE(1);
        if (pending.length < len + 1) break;
        const type = String.fromCharCode(pending[0] ?? 0);
        const body = pending.subarray(5, len + 1);
        pending = pending.subarray(len + 1);
        if (type === 'E' && sqlStateOf(body) === '28P01') authFailed = true;
        if (type === 'K' && body.length >= 8) {
          cancelKey = body.toString('hex');
          cancelKeys.set(cancelKey, { host: target.host, port: target.port });
        }
        if (type === 'Z') {
          watching = false;
          pending = Buffer.alloc(0);
          clearTimeout(loginTimer);
          break;
        }
      }
      if (!authFailed) return relay(chunk);
      // Counted before the client sees the error, so its next attempt already meets the ban.
      server.pause();
      holding = deps
        .recordAuthFailure(ref, ip)
        .catch(() => {})
        .then(() => {
          relay(chunk);
          server.resume();
        });
    });
  }

  const srv = net.createServer(handle);
  srv.maxConnections = 1000;
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(port, host, () => {
      srv.off('error', reject);
      resolve();
    });
  });
  srv.on('error', (err) => deps.log(`pooler: ${err.message}`));
  const addr = srv.address();
  return {
    host,
    port: typeof addr === 'object' && addr ? addr.port : port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        srv.close(() => resolve());
      }),
  };
}

function normalize(ip: string | undefined): string {
  if (!ip) return '';
  return ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip;
}
