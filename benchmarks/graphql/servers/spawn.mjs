// Starting and stopping the three servers, each in its own child process (so its RSS is its own),
// and timing process start → first answer (cold start).
import { spawn } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dist, root } from '../paths.mjs';
import { log, sleep } from '../util.mjs';

const serverFile = (name) => fileURLToPath(new URL(`./${name}.mjs`, import.meta.url));

export async function freePort() {
  const { findFreePort } = await import(dist('db/free-port.js'));
  return findFreePort(0);
}

/** POST a GraphQL body; resolves to { status, text, json } (json undefined if not JSON). */
export async function post(url, headers, body) {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  const text = await r.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: r.status, text, json };
}

/**
 * Starts one server. `engine` is strata | postgraphile | floor; `env` is passed through.
 * The server is ready when it answers `probe` (a POST body) with any HTTP status;
 * coldStartMs is spawn → that first answer.
 */
export async function startServer({
  engine,
  env,
  headers,
  probe,
  logDir,
  strataMode = 'handler',
  nodeArgs = /** @type {string[]} */ ([]),
  timeoutMs = 60_000,
}) {
  const port = await freePort();
  // 'strata-engine': Strata's engine behind a bare node:http listener, without the HTTP layer.
  if (engine === 'strata-engine') strataMode = 'engine';
  const cmd = process.execPath;
  let args;
  if (engine === 'strata' && strataMode === 'serve') {
    // `strata serve` takes the superuser URL (it installs the roles and the engine's objects) and,
    // with --authenticator-password, serves requests as the API login role.
    args = [
      ...nodeArgs,
      join(root, 'bin', 'strata.js'),
      'serve',
      '--database-url',
      env.SUPERUSER_URL ?? env.DATABASE_URL,
      '--jwt-secret',
      env.JWT_SECRET,
      '--port',
      String(port),
      '--host',
      '127.0.0.1',
    ];
    if (env.SUPERUSER_URL && env.AUTHENTICATOR_PASSWORD)
      args.push('--authenticator-password', env.AUTHENTICATOR_PASSWORD);
  } else {
    args = [...nodeArgs, serverFile(engine === 'strata-engine' ? 'strata' : engine)];
  }
  const logFile = join(logDir, `${engine}-${port}.log`);
  const out = createWriteStream(logFile);
  const t0 = performance.now();
  const child = spawn(cmd, args, {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), STRATA_MODE: strataMode, NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.pipe(out);
  child.stderr.pipe(out);
  /** @type {{ code: number | null, signal: string | null } | null} */
  let exited = null;
  child.on('exit', (code, signal) => {
    exited = { code, signal };
  });
  const url = `http://127.0.0.1:${port}/graphql/v1`;
  let first;
  while (!first) {
    const gone = /** @type {{ code: number | null, signal: string | null } | null} */ (exited);
    if (gone)
      throw new Error(
        `${engine} exited (${gone.code ?? gone.signal}) before answering; log ${logFile}:\n${tail(logFile)}`,
      );
    if (performance.now() - t0 > timeoutMs) {
      child.kill('SIGKILL');
      throw new Error(`${engine} did not answer within ${timeoutMs} ms; log ${logFile}:\n${tail(logFile)}`);
    }
    try {
      first = await post(url, headers, probe);
    } catch {
      await sleep(10);
    }
  }
  const coldStartMs = performance.now() - t0;
  log(
    `${engine}${engine === 'strata' ? ` (${strataMode})` : ''} up: pid ${child.pid}, first answer after ${coldStartMs.toFixed(0)} ms (HTTP ${first.status})`,
  );
  return {
    engine,
    url,
    pid: child.pid,
    coldStartMs,
    firstAnswer: first,
    logFile,
    async stop() {
      if (exited) return;
      const done = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await done;
      clearTimeout(t);
    },
  };
}

function tail(file, n = 30) {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-n).join('\n');
  } catch {
    return '';
  }
}
