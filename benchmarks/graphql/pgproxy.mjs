// A TCP proxy between a server under test and PostgreSQL that reads the frontend messages
// (client → server) and counts round trips: a simple-protocol Query ('Q') or an extended-protocol
// Sync ('S') each make the client wait for ReadyForQuery, i.e. one round trip. It also records
// what was sent (Query text; Parse text + Bind parameters), which is how the floor server gets
// literally the SQL Strata compiled. Server → client bytes are piped through untouched.
import net from 'node:net';
import { boundPort } from './util.mjs';

export async function startProxy(upstreamPort, upstreamHost = '127.0.0.1') {
  const stats = { query: 0, sync: 0, parse: 0, bind: 0, execute: 0, connections: 0 };
  let recording = null; // array of round trips while recording
  const history = []; // every simple-protocol Query text seen (bounded), to resolve prepared statements
  const sockets = new Set();

  const server = net.createServer((client) => {
    stats.connections++;
    sockets.add(client);
    const upstream = net.connect(upstreamPort, upstreamHost);
    sockets.add(upstream);
    upstream.on('data', (d) => client.write(d));
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    upstream.on('error', close).on('close', close);
    client.on('error', close).on('close', close);

    let buf = Buffer.alloc(0);
    let startup = true; // the startup packet (and an SSLRequest before it) has no type byte
    /** @type {{ parses: { name: string, text: string }[], binds: ReturnType<typeof parseBind>[] }} */
    let pending = { parses: [], binds: [] }; // extended-protocol messages up to the next Sync
    client.on('data', (d) => {
      upstream.write(d);
      buf = buf.length ? Buffer.concat([buf, d]) : d;
      for (;;) {
        if (startup) {
          if (buf.length < 8) break;
          const len = buf.readInt32BE(0);
          if (buf.length < len) break;
          const code = buf.readInt32BE(4);
          buf = buf.subarray(len);
          if (code !== 80877103 && code !== 80877104) startup = false; // not SSL/GSS request
          continue;
        }
        if (buf.length < 5) break;
        const type = String.fromCharCode(buf[0]);
        const len = buf.readInt32BE(1);
        if (buf.length < 1 + len) break;
        const body = buf.subarray(5, 1 + len);
        buf = buf.subarray(1 + len);
        onMessage(type, body);
      }
    });

    function onMessage(type, body) {
      switch (type) {
        case 'Q': {
          stats.query++;
          const text = body.toString('utf8', 0, body.length - 1);
          recording?.push({ kind: 'simple', text });
          if (/^\s*(prepare|deallocate)\s/i.test(text)) {
            history.push(text);
            if (history.length > 2000) history.shift();
          }
          break;
        }
        case 'P': {
          stats.parse++;
          const nameEnd = body.indexOf(0);
          const textEnd = body.indexOf(0, nameEnd + 1);
          pending.parses.push({
            name: body.toString('utf8', 0, nameEnd),
            text: body.toString('utf8', nameEnd + 1, textEnd),
          });
          break;
        }
        case 'B': {
          stats.bind++;
          pending.binds.push(parseBind(body));
          break;
        }
        case 'E':
          stats.execute++;
          break;
        case 'S':
          stats.sync++;
          recording?.push({ kind: 'extended', parses: pending.parses, binds: pending.binds });
          pending = { parses: [], binds: [] };
          break;
        default:
      }
    }
  });

  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  return {
    port: boundPort(server),
    stats,
    /** Round trips (Query + Sync messages) so far. */
    roundTrips: () => stats.query + stats.sync,
    reset() {
      for (const k of Object.keys(stats)) stats[k] = 0;
    },
    startRecording() {
      recording = [];
    },
    /** Query messages that prepared statements (for resolving a later `execute <name>`). */
    preparingMessages: () => [...history],
    stopRecording() {
      const r = recording ?? [];
      recording = null;
      return r;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(() => resolve(undefined)));
    },
  };
}

/** Bind: portal, statement, parameter format codes, parameter values (text format assumed). */
function parseBind(body) {
  let o = 0;
  const cstr = () => {
    const e = body.indexOf(0, o);
    const s = body.toString('utf8', o, e);
    o = e + 1;
    return s;
  };
  const portal = cstr();
  const statement = cstr();
  const nf = body.readInt16BE(o);
  o += 2;
  const formats = [];
  for (let i = 0; i < nf; i++, o += 2) formats.push(body.readInt16BE(o));
  const np = body.readInt16BE(o);
  o += 2;
  const values = [];
  for (let i = 0; i < np; i++) {
    const len = body.readInt32BE(o);
    o += 4;
    if (len < 0) values.push(null);
    else {
      const binary = (formats.length === 1 ? formats[0] : (formats[i] ?? 0)) === 1;
      values.push(binary ? { binary: body.toString('hex', o, o + len) } : body.toString('utf8', o, o + len));
      o += len;
    }
  }
  return { portal, statement, values };
}
