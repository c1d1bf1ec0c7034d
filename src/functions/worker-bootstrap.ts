/**
 * The script each function worker runs under Deno. It patches `Deno.serve` so the function's own
 * call only records its handler (an `export default { fetch }` works too), serves that handler on
 * a Unix socket in the worker's own temp folder (Deno.args[1]: no TCP port, so no other process's
 * function can reach it: Deno lets a worker open only the paths it may read and write), and prints
 * `READY_MARKER` on stdout. It removes the runtime's own DENO_* settings from the environment the
 * function sees. Every other stdout and
 * stderr line is the function's console output. A module that throws while loading still gets
 * its port: each request is then answered with the boot error (500, logged once).
 */
export const READY_MARKER = '\u0000strata-worker-ready';

export const BOOTSTRAP_SOURCE = `// Strata Edge Functions worker bootstrap (generated; do not edit).
const entry = Deno.args[0];
const socketPath = Deno.args[1];
for (const name of Object.keys(Deno.env.toObject())) if (name.startsWith('DENO_') || name === 'NO_COLOR' || name === 'PWD') Deno.env.delete(name);
const json = (status, code, message) =>
  new Response(JSON.stringify({ code, message }), {
    status,
    headers: { 'content-type': 'application/json', 'sb-error-code': code },
  });
let handler;
let bootError;
const serve = Deno.serve.bind(Deno);
const never = new Promise(() => {});
Deno.serve = (...args) => {
  for (const a of args) {
    if (typeof a === 'function') handler = a;
    else if (a && typeof a.handler === 'function') handler = a.handler;
    if (a && typeof a.onListen === 'function') {
      try { a.onListen({ hostname: '0.0.0.0', port: 8000, transport: 'tcp' }); } catch {}
    }
  }
  return {
    finished: never,
    addr: { hostname: '0.0.0.0', port: 8000, transport: 'tcp' },
    ref() {}, unref() {},
    shutdown: async () => {},
    [Symbol.asyncDispose]: async () => {},
  };
};
globalThis.EdgeRuntime = {
  waitUntil(p) { Promise.resolve(p).catch((e) => console.error(e)); },
};
globalThis.addEventListener('unhandledrejection', (e) => {
  e.preventDefault();
  console.error('Uncaught (in promise)', e.reason);
});
globalThis.addEventListener('error', (e) => {
  e.preventDefault();
  console.error('Uncaught', e.error ?? e.message);
});
// The platform holds our stdin open; EOF means it is gone, so no worker outlives it.
(async () => {
  const buf = new Uint8Array(64);
  try { while ((await Deno.stdin.read(buf)) !== null) {} } catch {}
  Deno.exit(0);
})();
const PEER = Object.freeze({ transport: 'tcp', hostname: '127.0.0.1', port: 0 });
let ready;
const loaded = new Promise((r) => (ready = r));
serve(
  {
    path: socketPath,
    onListen: () => {
      Deno.stdout.writeSync(new TextEncoder().encode(${JSON.stringify(READY_MARKER)} + '\\n'));
    },
  },
  async (req, info) => {
    await loaded;
    if (bootError) return json(500, 'BOOT_ERROR', 'Function failed to start (please check logs)');
    if (!handler) return json(500, 'BOOT_ERROR', 'Function did not call Deno.serve (please check logs)');
    let res;
    try {
      // The peer is the platform on a Unix socket; functions written for TCP read remoteAddr.hostname.
      res = await handler(req, { completed: info.completed, remoteAddr: PEER });
    } catch (e) {
      console.error(e);
      return json(500, 'WORKER_ERROR', 'Function exited due to an error (please check logs)');
    }
    if (!(res instanceof Response) || res.bodyUsed) {
      console.error(
        res instanceof Response
          ? 'TypeError: the handler returned a Response whose body was already used'
          : 'TypeError: the handler did not return a Response (got ' + (res === null ? 'null' : typeof res) + ')',
      );
      return json(500, 'WORKER_ERROR', 'Function exited due to an error (please check logs)');
    }
    return res;
  },
);
try {
  const mod = await import(entry);
  if (!handler && mod.default && typeof mod.default.fetch === 'function') {
    handler = (req, info) => mod.default.fetch(req, info);
  }
} catch (e) {
  bootError = e;
  console.error('worker boot error:', e);
}
ready();
`;
