// Child process of run.mjs: the proxied floor. The hello handler (hello.mjs) runs on Deno (the
// binary Strata uses, found as Strata finds it), behind a bare node:http server that forwards each
// request over an undici Pool and does nothing else: no keys, routing, leases, limits or logs.
// That is the cheapest design with the hop Strata's functions need (a Node front, a Deno worker).
// Deno listens on a Unix socket, as Strata's workers do; BENCH_FLOOR_TRANSPORT=tcp: 127.0.0.1.
// Answers 'cpu' with this process's own CPU time (µs) and 'stop' by stopping Deno and itself.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { denoBinary } from '../../dist/functions/deno-binary.js';
import { HELLO_HANDLER } from './hello.mjs';

const TCP = process.env.BENCH_FLOOR_TRANSPORT === 'tcp';
const dir = mkdtempSync(join(tmpdir(), 'strata-bench-proxied-'));
const script = join(dir, 'hello.js');
writeFileSync(
  script,
  `const at = Deno.args[0] === 'tcp' ? { hostname: '127.0.0.1', port: 0 } : { path: Deno.args[0] };
Deno.serve({ ...at, onListen: (addr) => console.log(JSON.stringify(addr)) }, ${HELLO_HANDLER});
`,
);

const deno = spawn(
  denoBinary(),
  [
    'run',
    '--quiet',
    '--no-prompt',
    '--no-config',
    '--no-lock',
    '--allow-net',
    `--allow-read=${dir}`,
    `--allow-write=${dir}`,
    script,
    TCP ? 'tcp' : join(dir, 'hello.sock'),
  ],
  {
    cwd: dir,
    env: { DENO_DIR: join(dir, 'deno-dir'), DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
/** @type {{ path?: string, port?: number }} */
const addr = await new Promise((resolve, reject) => {
  let out = '';
  deno.stdout.on('data', (c) => {
    out += c;
    const nl = out.indexOf('\n');
    if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)));
  });
  deno.once('exit', (code) => reject(new Error(`deno exited with ${code} before listening`)));
});
deno.stdout.resume();

const pool = new Pool(addr.path ? 'http://localhost' : `http://127.0.0.1:${addr.port}`, {
  ...(addr.path ? { socketPath: addr.path } : {}),
  connections: 256,
  pipelining: 1,
  headersTimeout: 0,
  bodyTimeout: 0,
});

// Headers of one connection, not of the message: never forwarded.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'host',
]);

const server = createServer((req, res) => {
  /** @type {Record<string, string | string[]>} */
  const headers = {};
  for (const [name, value] of Object.entries(req.headers))
    if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
  const hasBody =
    req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
  if (!hasBody) req.resume();
  pool.dispatch(
    {
      method: /** @type {import('undici').Dispatcher.HttpMethod} */ (req.method),
      path: req.url ?? '/',
      headers,
      body: hasBody ? req : null,
    },
    {
      onConnect() {},
      onError() {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      },
      onHeaders(status, raw, resume) {
        /** @type {string[]} */
        const out = [];
        for (let i = 0; i + 1 < raw.length; i += 2) {
          const name = raw[i].toString('latin1');
          if (!HOP_BY_HOP.has(name.toLowerCase())) out.push(name, raw[i + 1].toString('latin1'));
        }
        res.writeHead(status, out);
        res.on('drain', resume);
        return true;
      },
      onData(chunk) {
        return res.write(chunk);
      },
      onComplete() {
        res.end();
      },
    },
  );
});
server.listen(0, '127.0.0.1', () => {
  const a = server.address();
  process.send?.({
    url: `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}/hello`,
    denoPid: deno.pid,
    transport: TCP ? 'tcp' : 'unix',
  });
});

process.on('message', async (m) => {
  if (m === 'cpu') {
    const { user, system } = process.cpuUsage();
    process.send?.({ cpu: user + system });
  } else if (m === 'stop') {
    server.close();
    server.closeAllConnections();
    deno.kill('SIGTERM');
    await pool.destroy();
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  }
});
