#!/usr/bin/env node
// pg_graphql conformance runner.
//
// Runs the conformance cases derived from pg_graphql's regression suite (JSON
// files, see ../conformance/README.md) against a GraphQL engine module that
// exports:
//
//   export async function installSchema(client)            // idempotent
//   export async function resolve(client, { query, variables, operationName })
//
// Usage:
//   node pg-graphql-conformance.mjs --engine <module> --database-url <url>
//        [--cases <dir>] [--only a,b] [--json <file>] [--verbose] [--jobs N]
//
// Run it from the engine project's root: the `pg` package is resolved from
// the current working directory, and --engine is resolved against it too.
// Node flags are passed on to the worker processes, so an engine written in
// TypeScript can be loaded with e.g. `node --import tsx <runner> --engine src/index.ts`.
//
// Case files run in worker processes (--jobs of them), each file in a fresh
// database. The parent process creates and drops the databases and kills a
// worker that stops responding, so no case can hang the run.

import { fork } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath, pathToFileURL } from 'node:url';

const RUNNER_PATH = fileURLToPath(import.meta.url);
const DEFAULT_CASES_DIR = path.join(path.dirname(RUNNER_PATH), 'cases');
const WORKER_FLAG = '--conformance-worker-process';

const STEP_TIMEOUT_MS = 20_000; // JS-level limit for one step (SQL statement or engine.resolve)
const STATEMENT_TIMEOUT = '15s'; // server-side limit, fires before the JS one
const INSTALL_TIMEOUT_MS = 120_000; // engine.installSchema
const WATCHDOG_GRACE_MS = 10_000; // parent kills a worker silent this long past a step's limit
const WORKER_START_TIMEOUT_MS = 120_000;

const CLASSES = ['pass', 'errors_text', 'fail', 'exception', 'not_runnable'];
const FAILED_CLASSES = ['errors_text', 'fail', 'exception'];

// Statements that only make sense for the pg_graphql extension itself. They are
// matched against every SQL step (fixtures and cases) after leading comments.
const SKIP_RULES = [
  {
    id: 'drop-extension-pg_graphql',
    pattern: /^drop\s+extension\s+(if\s+exists\s+)?"?pg_graphql"?/i,
    action: 'skip',
    why: 'the engine replaces the pg_graphql extension',
  },
  {
    id: 'create-extension-pg_graphql',
    pattern: /^create\s+extension\s+(if\s+not\s+exists\s+)?"?pg_graphql"?/i,
    action: 'replace',
    replacement: 'create schema if not exists graphql',
    why: 'replaced by "create schema if not exists graphql": the cases create objects in and grant usage on that schema',
  },
  {
    id: 'privilege-on-graphql.resolve',
    pattern: /^(grant|revoke)\b[\s\S]*\bon\s+function\s+graphql\.resolve\b/i,
    action: 'skip-unless',
    unlessSql:
      "select exists (select 1 from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace " +
      "where n.nspname = 'graphql' and p.proname = 'resolve') as present",
    why: "pg_graphql's SQL entry point; skipped unless the engine installs a function graphql.resolve",
  },
];

class UsageError extends Error {}
class RunnerError extends Error {}

// ---------------------------------------------------------------------------
// Shared helpers

function stripLeadingComments(sql) {
  let s = sql;
  for (;;) {
    s = s.replace(/^\s+/, '');
    if (s.startsWith('--')) {
      const nl = s.indexOf('\n');
      s = nl < 0 ? '' : s.slice(nl + 1);
    } else if (s.startsWith('/*')) {
      const end = s.indexOf('*/');
      s = end < 0 ? '' : s.slice(end + 2);
    } else {
      return s;
    }
  }
}

function stepKind(step) {
  if (step.unparsed_reason !== undefined || step.graphql_call !== undefined) return 'not_runnable';
  if (typeof step.graphql === 'string') return 'graphql';
  if (step.psql_meta !== undefined) return 'psql_meta';
  if (typeof step.sql === 'string') return step.expected_error !== undefined ? 'sql_expect_error' : 'sql';
  return 'unknown';
}

// Transaction-control statements are run as they are, never inside the
// runner's own savepoint (releasing that savepoint would also release any
// savepoint the case creates after it).
function txControlKind(sql) {
  const s = stripLeadingComments(sql).toLowerCase();
  if (/^(begin|start\s+transaction)\b/.test(s)) return 'begin';
  if (/^(rollback|abort)(\s+(work|transaction))?\s+to\b/.test(s)) return 'rollback_to';
  if (/^release\b/.test(s)) return 'release';
  if (/^savepoint\b/.test(s)) return 'savepoint';
  if (/^(commit|end|rollback|abort)\b/.test(s)) return 'end';
  if (/^prepare\s+transaction\b/.test(s)) return 'end';
  return null;
}

function deepEqual(a, b) {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k)) return false;
    if (!deepEqual(a[k], b[k])) return false;
  }
  return true;
}

function isPlainObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function withoutKey(obj, key) {
  const out = { ...obj };
  delete out[key];
  return out;
}

function classify(expected, actual) {
  if (deepEqual(expected, actual)) return 'pass';
  if (
    isPlainObject(expected) &&
    isPlainObject(actual) &&
    Array.isArray(expected.errors) &&
    expected.errors.length > 0 &&
    Array.isArray(actual.errors) &&
    actual.errors.length > 0 &&
    deepEqual(withoutKey(expected, 'errors'), withoutKey(actual, 'errors'))
  ) {
    return 'errors_text';
  }
  return 'fail';
}

function errMessage(e) {
  if (e && typeof e === 'object' && typeof e.message === 'string') return e.message;
  return String(e);
}

function shorten(s, n) {
  if (s === undefined) return 'undefined';
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

function compactJson(v, n = 300) {
  let s;
  try {
    s = JSON.stringify(v);
  } catch (e) {
    s = `<not serialisable: ${errMessage(e)}>`;
  }
  return shorten(s, n);
}

function oneLine(s, n) {
  return shorten(String(s).replace(/\s+/g, ' ').trim(), n);
}

// ---------------------------------------------------------------------------
// pg and engine loading (parent and worker)

function loadPg() {
  const req = createRequire(path.join(process.cwd(), 'package.json'));
  try {
    const mod = req('pg');
    return mod.default && mod.default.Client ? mod.default : mod;
  } catch (e) {
    if (e && e.code === 'MODULE_NOT_FOUND' && /['"]pg['"]/.test(errMessage(e))) {
      throw new RunnerError(
        `cannot find the "pg" package from the current directory (${process.cwd()}). ` +
          'Run the runner from the engine project\'s root, after "npm install" there (the project must depend on pg).',
      );
    }
    throw new RunnerError(`cannot load the "pg" package: ${errMessage(e)}`);
  }
}

async function loadEngine(enginePath) {
  let mod;
  try {
    mod = await import(pathToFileURL(enginePath).href);
  } catch (e) {
    throw new RunnerError(`cannot import the engine module ${enginePath}: ${e && e.stack ? e.stack : errMessage(e)}`);
  }
  const pick = (name) =>
    typeof mod[name] === 'function' ? mod[name] : mod.default && typeof mod.default[name] === 'function' ? mod.default[name] : null;
  const installSchema = pick('installSchema');
  const resolve = pick('resolve');
  if (!installSchema || !resolve) {
    throw new RunnerError(
      `the engine module ${enginePath} must export async functions installSchema(client) and resolve(client, { query, variables, operationName })`,
    );
  }
  return { installSchema, resolve };
}

// ---------------------------------------------------------------------------
// Worker process: runs the steps of one case file at a time on one connection.

class AbortFile extends Error {}

function withTimeout(promiseFactory, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new AbortFile(`${what} did not finish within ${ms / 1000} s`)), ms);
  });
  const work = (async () => promiseFactory())();
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

async function workerMain(enginePath) {
  const send = (msg) => {
    if (process.connected) process.send(msg);
  };
  let pg;
  let engine;
  try {
    pg = loadPg();
    engine = await loadEngine(enginePath);
  } catch (e) {
    send({ type: 'fatal', message: errMessage(e) });
    process.disconnect();
    return;
  }

  let current = null; // name of the file being run, for stray errors
  process.on('unhandledRejection', (reason) => {
    send({ type: 'event', kind: 'note', note: { what: 'unhandled promise rejection in the worker', message: errMessage(reason) } });
  });
  process.on('uncaughtException', (e) => {
    send({ type: 'event', kind: 'note', note: { what: `uncaught exception in the worker${current ? ` while running ${current}` : ''}`, message: errMessage(e) } });
    process.exit(70);
  });

  process.on('message', async (msg) => {
    if (msg.type === 'exit') {
      process.disconnect();
      process.exit(0);
    }
    if (msg.type !== 'run') return;
    current = msg.job.name;
    let aborted = null;
    try {
      aborted = await runCaseFile(pg, engine, msg.job, send);
    } catch (e) {
      aborted = `runner error in worker: ${e && e.stack ? e.stack : errMessage(e)}`;
    }
    current = null;
    send({ type: 'done', aborted });
  });
  send({ type: 'ready' });
}

async function runCaseFile(pg, engine, job, send) {
  const setupError = (source, line, sql, e) =>
    send({
      type: 'event',
      kind: 'setup_error',
      error: { source, line, sql: sql === null ? null : oneLine(sql, 200), message: errMessage(e), code: e && e.code ? e.code : null },
    });
  const note = (what, message) => send({ type: 'event', kind: 'note', note: { what, message } });
  const violation = (line, message) => send({ type: 'event', kind: 'contract_violation', violation: { line, message } });
  const watch = (ms, what) => send({ type: 'watch', ms, what });

  const client = new pg.Client({ connectionString: job.dbUrl, application_name: 'pg-graphql-conformance' });
  client.on('error', (e) => note('connection error', errMessage(e)));
  client.on('notice', () => {});
  const conn = client.connection;
  if (!conn || typeof conn.on !== 'function') throw new Error('unsupported pg version: client.connection is not an event emitter');
  // Transaction status from ReadyForQuery: 'I' idle, 'T' in a transaction, 'E' in a failed transaction.
  const sess = { status: 'I' };
  conn.on('readyForQuery', (m) => {
    if (m && typeof m.status === 'string') sess.status = m.status;
  });
  const q = (sql, params) => client.query(sql, params);
  // pg rejects a failed query as soon as ErrorResponse arrives, possibly before
  // the ReadyForQuery that carries the new status. An empty query is answered
  // (without error, even in a failed transaction) only after that status has
  // been seen, so read the status through it.
  const txStatus = async () => {
    await q('');
    return sess.status;
  };

  const destroy = () => {
    try {
      conn.stream.destroy();
    } catch {
      /* ignore */
    }
  };

  watch(STEP_TIMEOUT_MS, 'connect');
  try {
    await withTimeout(() => client.connect(), STEP_TIMEOUT_MS, 'connect');
  } catch (e) {
    destroy();
    return `cannot connect to the case database: ${errMessage(e)}`;
  }

  try {
    // Session settings, plus a server-side statement timeout.
    watch(STEP_TIMEOUT_MS, 'session settings');
    const settings = { ...job.sessionSettings, statement_timeout: STATEMENT_TIMEOUT };
    for (const [name, value] of Object.entries(settings)) {
      try {
        await withTimeout(() => q('select pg_catalog.set_config($1, $2, false)', [name, String(value)]), STEP_TIMEOUT_MS, `SET ${name}`);
      } catch (e) {
        if (e instanceof AbortFile) throw e;
        setupError('session_settings', null, `SET ${name} = ${value}`, e);
      }
    }

    // Engine schema.
    watch(INSTALL_TIMEOUT_MS, 'engine.installSchema');
    try {
      await withTimeout(() => engine.installSchema(client), INSTALL_TIMEOUT_MS, 'engine.installSchema');
    } catch (e) {
      if (e instanceof AbortFile) throw e;
      setupError('installSchema', null, null, e);
    }
    if ((await txStatus()) !== 'I') {
      violation(null, `engine.installSchema left a transaction open (status ${sess.status}); rolled back`);
      await q('rollback');
    }

    const runSql = async (source, step) => {
      if ((await txStatus()) === 'E') {
        note('transaction found aborted before a SQL step', `line ${step.line}: rolling back the whole transaction`);
        await q('rollback');
      }
      let sql = step.sql;
      const head = stripLeadingComments(sql);
      for (const rule of SKIP_RULES) {
        if (!rule.pattern.test(head)) continue;
        if (rule.action === 'skip') {
          send({ type: 'event', kind: 'skip', skip: { source, line: step.line, rule: rule.id, sql: oneLine(sql, 120) } });
          return;
        }
        if (rule.action === 'replace') {
          send({ type: 'event', kind: 'skip', skip: { source, line: step.line, rule: rule.id, sql: oneLine(sql, 120), replacement: rule.replacement } });
          sql = rule.replacement;
          break;
        }
        if (rule.action === 'skip-unless') {
          const r = await q(rule.unlessSql);
          if (!r.rows[0].present) {
            send({ type: 'event', kind: 'skip', skip: { source, line: step.line, rule: rule.id, sql: oneLine(sql, 120) } });
            return;
          }
          break;
        }
      }

      const kind = txControlKind(sql);
      const guarded = (await txStatus()) === 'T' && (kind === null || kind === 'rollback_to' || kind === 'release');
      if (guarded) await q('savepoint pggqlc_guard');
      let error = null;
      try {
        await withTimeout(() => q(sql), STEP_TIMEOUT_MS, `SQL at line ${step.line}`);
      } catch (e) {
        if (e instanceof AbortFile) throw e;
        error = e;
      }
      if (error === null) {
        // A successful rollback-to / release consumed the guard already.
        if (guarded && kind === null) await q('release savepoint pggqlc_guard');
      } else if (guarded) {
        if ((await txStatus()) === 'E') await q('rollback to savepoint pggqlc_guard');
        if ((await txStatus()) === 'T') await q('release savepoint pggqlc_guard');
      }
      if (step.expected_error !== undefined) {
        if (error === null) setupError(source, step.line, sql, new Error(`expected an error (${oneLine(String(step.expected_error), 120)}), but the statement succeeded`));
      } else if (error !== null) {
        setupError(source, step.line, sql, error);
      }
    };

    const callEngine = async (index, step) => {
      const request = {
        query: step.graphql,
        variables: step.variables === undefined ? null : step.variables,
        operationName: step.operationName === undefined ? null : step.operationName,
      };
      const base = { line: step.line, comment: step.comment ?? null, query: step.graphql, variables: request.variables, operationName: request.operationName, expected: step.expected };
      if ((await txStatus()) === 'E') {
        note('transaction found aborted before a GraphQL step', `line ${step.line}: rolling back the whole transaction`);
        await q('rollback');
      }
      const inTx = (await txStatus()) === 'T';
      if (inTx) await q('savepoint pggqlc_engine');
      const t0 = Date.now();
      let response;
      let thrown = null;
      try {
        response = await withTimeout(() => engine.resolve(client, request), STEP_TIMEOUT_MS, `engine.resolve at line ${step.line}`);
      } catch (e) {
        if (e instanceof AbortFile) {
          send({ type: 'event', kind: 'graphql', index, result: { ...base, class: 'exception', error: `timeout: ${e.message}`, duration_ms: Date.now() - t0 } });
          throw e;
        }
        thrown = e;
      }
      const duration = Date.now() - t0;
      const after = await txStatus();
      if (inTx) {
        if (after === 'E') {
          violation(step.line, 'engine.resolve left the transaction aborted (it must use a savepoint inside a transaction); the runner rolled back to its own savepoint');
          await q('rollback to savepoint pggqlc_engine');
          await q('release savepoint pggqlc_engine');
        } else if (after === 'T') {
          try {
            await q('release savepoint pggqlc_engine');
          } catch (e) {
            violation(step.line, `the runner's savepoint around engine.resolve was gone (${errMessage(e)})`);
            throw new AbortFile(`transaction state lost after engine.resolve at line ${step.line}`);
          }
        } else {
          violation(step.line, "engine.resolve ended the caller's transaction");
        }
      } else if (after !== 'I') {
        violation(step.line, `engine.resolve left a transaction open (status ${after}); rolled back`);
        await q('rollback');
      }

      let result;
      if (thrown !== null) {
        result = { ...base, class: 'exception', error: thrown && thrown.stack ? thrown.stack.split('\n').slice(0, 4).join('\n') : errMessage(thrown) };
      } else {
        let actual;
        let problem = null;
        try {
          let value = response;
          if (typeof value === 'string') value = JSON.parse(value);
          const text = JSON.stringify(value);
          actual = text === undefined ? null : JSON.parse(text);
          if (text === undefined) problem = 'engine.resolve returned undefined';
        } catch (e) {
          problem = `response is not JSON: ${errMessage(e)}`;
        }
        // A response that is not JSON fails (exception means that the engine threw).
        result = problem
          ? { ...base, class: 'fail', actual: null, error: problem }
          : { ...base, class: classify(step.expected, actual), actual };
      }
      result.duration_ms = duration;
      send({ type: 'event', kind: 'graphql', index, result });
    };

    // Fixtures, then the file's own steps.
    for (const step of job.fixtures) {
      if (stepKind(step) !== 'sql' && stepKind(step) !== 'sql_expect_error') continue;
      watch(STEP_TIMEOUT_MS, `fixtures line ${step.line}`);
      await runSql('fixtures', step);
    }
    for (let index = 0; index < job.steps.length; index++) {
      const step = job.steps[index];
      const kind = stepKind(step);
      if (kind === 'sql' || kind === 'sql_expect_error') {
        watch(STEP_TIMEOUT_MS, `SQL at line ${step.line}`);
        await runSql('case', step);
      } else if (kind === 'graphql') {
        watch(STEP_TIMEOUT_MS, `engine.resolve at line ${step.line}`);
        await callEngine(index, step);
      } else if (kind === 'unknown') {
        note('unknown step shape, skipped', `line ${step.line}: keys ${Object.keys(step).join(', ')}`);
      }
      // psql_meta and not_runnable steps are skipped (the parent counts the latter).
    }
  } catch (e) {
    destroy();
    return e instanceof AbortFile ? e.message : `runner error: ${e && e.stack ? e.stack : errMessage(e)}`;
  }

  // Roll back whatever is still open, reset the role, disconnect.
  watch(STEP_TIMEOUT_MS, 'finish');
  try {
    await withTimeout(
      async () => {
        if ((await txStatus()) !== 'I') await q('rollback');
        await q('reset role');
        await client.end();
      },
      STEP_TIMEOUT_MS,
      'closing the connection',
    );
  } catch (e) {
    destroy();
    note('closing the connection failed', errMessage(e));
  }
  return null;
}

// ---------------------------------------------------------------------------
// Parent process

const USAGE = `usage: node pg-graphql-conformance.mjs --engine <module> --database-url <superuser postgres URL>
         [--cases <dir>] [--only name1,name2] [--json <report file>] [--verbose] [--jobs N]

  --engine        engine module (path resolved against the current directory) exporting
                  installSchema(client) and resolve(client, { query, variables, operationName })
  --database-url  superuser connection URL (default: $DATABASE_URL); one database per case
                  file is created and dropped through it
  --cases         case directory (default: ../conformance/pg_graphql next to this file)
  --only          comma-separated case names (file names without .json)
  --json          write the full machine-readable report to this file
  --verbose       print skip rules, setup errors and every non-passing step
  --jobs          case files run concurrently (default 2)

Run from the engine project's root: the "pg" package is resolved from the current directory.
Exit status: 0 when the run completed (whatever the pass rate), 2 usage error, 1 runner failure.`;

function parseArgs(argv) {
  const opts = { engine: null, databaseUrl: null, cases: null, only: null, json: null, verbose: false, jobs: 2, help: false };
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    let inline;
    if (arg.startsWith('--') && arg.includes('=')) {
      inline = arg.slice(arg.indexOf('=') + 1);
      arg = arg.slice(0, arg.indexOf('='));
    }
    const value = () => {
      if (inline !== undefined) return inline;
      if (i + 1 >= argv.length) throw new UsageError(`${arg} needs a value`);
      return argv[++i];
    };
    switch (arg) {
      case '--engine':
        opts.engine = value();
        break;
      case '--database-url':
        opts.databaseUrl = value();
        break;
      case '--cases':
        opts.cases = value();
        break;
      case '--only':
        opts.only = value()
          .split(',')
          .map((s) => s.trim().replace(/\.json$/, ''))
          .filter(Boolean);
        break;
      case '--json':
        opts.json = value();
        break;
      case '--jobs': {
        const v = value();
        if (!/^[1-9][0-9]*$/.test(v)) throw new UsageError(`--jobs needs a positive integer, got "${v}"`);
        opts.jobs = Number(v);
        break;
      }
      case '--verbose':
      case '-v':
        if (inline !== undefined) throw new UsageError('--verbose takes no value');
        opts.verbose = true;
        break;
      case '--help':
      case '-h':
        opts.help = true;
        break;
      default:
        throw new UsageError(`unknown argument: ${argv[i]}`);
    }
  }
  if (opts.help) return opts;
  if (!opts.databaseUrl) opts.databaseUrl = process.env.DATABASE_URL || null;
  if (!opts.engine) throw new UsageError('--engine is required');
  if (!opts.databaseUrl) throw new UsageError('--database-url (or DATABASE_URL) is required');
  return opts;
}

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new RunnerError(`cannot read ${file}: ${errMessage(e)}`);
  }
}

function loadCases(dir, only) {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new UsageError(`case directory not found: ${dir}`);
  const fixturesPath = path.join(dir, '_fixtures.json');
  if (!fs.existsSync(fixturesPath)) throw new UsageError(`no _fixtures.json in ${dir}`);
  const fixtures = readJson(fixturesPath);
  const summaryPath = path.join(dir, '_summary.json');
  const summary = fs.existsSync(summaryPath) ? readJson(summaryPath) : {};
  let names = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json') && !f.startsWith('_'))
    .map((f) => f.slice(0, -5))
    .sort();
  if (only) {
    const missing = only.filter((n) => !names.includes(n));
    if (missing.length) throw new UsageError(`unknown case name(s) for --only: ${missing.join(', ')}`);
    names = names.filter((n) => only.includes(n));
  }
  const files = names.map((name) => {
    const data = readJson(path.join(dir, `${name}.json`));
    if (!Array.isArray(data.steps)) throw new RunnerError(`${name}.json has no steps array`);
    const roleNames = new Set();
    for (const step of data.steps) {
      if (typeof step.sql !== 'string') continue;
      for (const m of step.sql.matchAll(/\bcreate\s+(?:role|user|group)\s+(?:"([^"]+)"|([A-Za-z_][A-Za-z0-9_$]*))/gi)) {
        roleNames.add(m[1] !== undefined ? m[1] : m[2].toLowerCase());
      }
    }
    return {
      name,
      data,
      sessionSettings: data.session_settings || summary.session_settings || fixtures.session_settings || {},
      roleNames: [...roleNames],
    };
  });
  return { fixtures, summary, files };
}

function databaseUrlFor(baseUrl, dbName) {
  const u = new URL(baseUrl);
  u.pathname = `/${encodeURIComponent(dbName)}`;
  return u.toString();
}

function quoteIdent(s) {
  return `"${s.replace(/"/g, '""')}"`;
}

class WorkerHandle {
  constructor(enginePath) {
    this.child = fork(RUNNER_PATH, [WORKER_FLAG, enginePath], {
      cwd: process.cwd(),
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      execArgv: process.execArgv.filter((a) => !a.startsWith('--inspect')),
    });
    // Engine output goes to stderr so that stdout carries only the report.
    this.child.stdout.on('data', (chunk) => process.stderr.write(chunk));
    this.child.stderr.on('data', (chunk) => process.stderr.write(chunk));
    this.onMessage = null;
    this.onExit = null;
    this.exited = false;
    this.dead = false; // killed or exited: never reuse
    this.ready = new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new RunnerError('a worker process did not start within 120 s')), WORKER_START_TIMEOUT_MS);
      this.child.once('message', (m) => {
        clearTimeout(timer);
        if (m.type === 'ready') resolve();
        else reject(new RunnerError(m.message || 'worker failed to start'));
      });
      this.child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new RunnerError(`a worker process exited during start-up (${signal || code})`));
      });
    });
    this.ready.catch(() => {});
    this.child.on('message', (m) => this.onMessage && this.onMessage(m));
    // IPC write errors (e.g. the worker already disconnected) surface as exit or failure of the file.
    this.child.on('error', () => {});
    this.child.on('exit', (code, signal) => {
      this.exited = true;
      this.dead = true;
      if (this.onExit) this.onExit(code, signal);
    });
  }

  kill() {
    this.dead = true;
    if (!this.exited) this.child.kill('SIGKILL');
  }

  stop() {
    if (this.exited) return Promise.resolve();
    if (!this.child.connected) {
      this.kill();
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.kill();
        resolve();
      }, 3000);
      this.child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      try {
        this.child.send({ type: 'exit' });
      } catch {
        this.kill();
      }
    });
  }
}

async function parentMain(opts) {
  const cwd = process.cwd();
  const enginePath = path.resolve(cwd, opts.engine);
  if (!fs.existsSync(enginePath)) throw new UsageError(`engine module not found: ${opts.engine} (resolved to ${enginePath})`);
  try {
    new URL(opts.databaseUrl);
  } catch {
    throw new UsageError('--database-url must be a URL such as postgres://user:password@host:5432/postgres');
  }
  const casesDir = opts.cases ? path.resolve(cwd, opts.cases) : DEFAULT_CASES_DIR;
  const { fixtures, summary, files } = loadCases(casesDir, opts.only);
  const pg = loadPg();

  const admin = new pg.Client({ connectionString: opts.databaseUrl, application_name: 'pg-graphql-conformance-admin' });
  admin.on('error', (e) => process.stderr.write(`admin connection error: ${errMessage(e)}\n`));
  try {
    await admin.connect();
  } catch (e) {
    throw new RunnerError(`cannot connect to the database: ${errMessage(e)}`);
  }
  // One query at a time on the admin connection (pg no longer wants callers to rely on its queue).
  let adminChain = Promise.resolve();
  const adminQuery = (sql, params) => {
    const run = adminChain.then(() => admin.query(sql, params));
    adminChain = run.catch(() => {});
    return run;
  };
  const info = (
    await adminQuery(
      "select current_setting('server_version_num')::int as num, current_setting('server_version') as version, " +
        '(select rolsuper from pg_catalog.pg_roles where rolname = current_user) as superuser',
    )
  ).rows[0];
  if (!info.superuser) process.stderr.write('warning: the --database-url role is not a superuser; many cases need one\n');
  const forceDrop = info.num >= 130000;

  const activeDbs = new Set();
  const workers = [];
  let interrupted = false;
  const onSignal = async (sig) => {
    if (interrupted) return;
    interrupted = true;
    process.stderr.write(`\n${sig}: stopping workers and dropping case databases\n`);
    for (const w of workers) w && w.kill();
    for (const db of activeDbs) {
      try {
        await adminQuery(`drop database if exists ${quoteIdent(db)}${forceDrop ? ' with (force)' : ''}`);
      } catch {
        /* ignore */
      }
    }
    process.exit(130);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const log = (s) => {
    if (opts.verbose || process.stderr.isTTY) process.stderr.write(`${s}\n`);
  };

  const started = new Date();
  let seq = 0;
  const records = new Map(); // name -> file record

  const newRecord = (file) => {
    const results = new Map();
    file.data.steps.forEach((step, index) => {
      if (stepKind(step) === 'not_runnable') {
        results.set(index, {
          line: step.line,
          comment: step.comment ?? null,
          class: 'not_runnable',
          reason: step.unparsed_reason ?? 'graphql call could not be recovered',
          sql: step.sql ?? null,
          query: step.graphql_call && step.graphql_call.graphql !== undefined ? step.graphql_call.graphql : null,
        });
      }
    });
    return { name: file.name, results, setup_errors: [], skipped: [], notes: [], contract_violations: [], aborted: null, duration_ms: 0 };
  };

  const dropDatabase = async (db, rec) => {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        if (!forceDrop) {
          await adminQuery('select pg_catalog.pg_terminate_backend(pid) from pg_catalog.pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [db]);
        }
        await adminQuery(`drop database if exists ${quoteIdent(db)}${forceDrop ? ' with (force)' : ''}`);
        activeDbs.delete(db);
        return;
      } catch (e) {
        if (attempt === 2) rec.notes.push({ what: `could not drop database ${db}`, message: errMessage(e) });
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  };

  const slotWorker = async (slot) => {
    if (!workers[slot] || workers[slot].dead) {
      workers[slot] = new WorkerHandle(enginePath);
    }
    await workers[slot].ready;
    return workers[slot];
  };

  const runFile = async (slot, file) => {
    const rec = newRecord(file);
    records.set(file.name, rec);
    const t0 = Date.now();

    // Roles are cluster-wide: remember which of the file's roles exist already.
    let preexisting = [];
    if (file.roleNames.length) {
      preexisting = (await adminQuery('select rolname from pg_catalog.pg_roles where rolname = any($1)', [file.roleNames])).rows.map((r) => r.rolname);
      for (const r of preexisting) rec.notes.push({ what: 'role exists before the file runs', message: `role ${r} already exists in the cluster; the file's "create role" will fail` });
    }

    const worker = await slotWorker(slot);
    const db = `pggqlc_${process.pid}_${++seq}_${file.name.toLowerCase().replace(/[^a-z0-9_]/g, '_')}`.slice(0, 63);
    try {
      await adminQuery(`create database ${quoteIdent(db)} template template0`);
    } catch (e) {
      throw new RunnerError(`cannot create database ${db}: ${errMessage(e)}`);
    }
    activeDbs.add(db);

    await new Promise((resolve) => {
      let timer = null;
      let finished = false;
      const finish = (aborted) => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        worker.onMessage = null;
        worker.onExit = null;
        if (aborted) rec.aborted = aborted;
        resolve();
      };
      worker.onMessage = (m) => {
        if (m.type === 'watch') {
          clearTimeout(timer);
          timer = setTimeout(() => {
            worker.kill();
            finish(`worker killed: ${m.what} did not finish within ${(m.ms + WATCHDOG_GRACE_MS) / 1000} s`);
          }, m.ms + WATCHDOG_GRACE_MS);
        } else if (m.type === 'event') {
          if (m.kind === 'graphql') rec.results.set(m.index, m.result);
          else if (m.kind === 'setup_error') rec.setup_errors.push(m.error);
          else if (m.kind === 'skip') rec.skipped.push(m.skip);
          else if (m.kind === 'note') rec.notes.push(m.note);
          else if (m.kind === 'contract_violation') rec.contract_violations.push(m.violation);
        } else if (m.type === 'done') {
          if (m.aborted) worker.kill(); // its state is unknown: use a fresh worker for the next file
          finish(m.aborted);
        }
      };
      worker.onExit = (code, signal) => finish(`worker process exited unexpectedly (${signal || `code ${code}`})`);
      try {
        worker.child.send({
          type: 'run',
          job: {
            name: file.name,
            dbUrl: databaseUrlFor(opts.databaseUrl, db),
            sessionSettings: file.sessionSettings,
            fixtures: fixtures.steps || [],
            steps: file.data.steps,
          },
        });
      } catch (e) {
        worker.kill();
        finish(`cannot send the file to the worker: ${errMessage(e)}`);
      }
    });

    await dropDatabase(db, rec);
    for (const role of file.roleNames) {
      if (preexisting.includes(role)) continue;
      try {
        const r = await adminQuery('select 1 from pg_catalog.pg_roles where rolname = $1', [role]);
        if (r.rowCount) {
          await adminQuery(`drop role ${quoteIdent(role)}`);
          rec.notes.push({ what: 'role left behind', message: `dropped role ${role} created by the file outside a rolled-back transaction` });
        }
      } catch (e) {
        rec.notes.push({ what: `could not drop role ${role}`, message: errMessage(e) });
      }
    }

    // Graphql steps that never reported (file aborted) count as exceptions.
    file.data.steps.forEach((step, index) => {
      if (stepKind(step) === 'graphql' && !rec.results.has(index)) {
        rec.results.set(index, {
          line: step.line,
          comment: step.comment ?? null,
          query: step.graphql,
          variables: step.variables ?? null,
          operationName: step.operationName ?? null,
          expected: step.expected,
          class: 'exception',
          error: `not run: ${rec.aborted || 'no result from the worker'}`,
        });
      }
    });
    rec.duration_ms = Date.now() - t0;
    const c = countRecord(rec);
    log(`${file.name}: ${c.pass}/${c.runnable} passed${rec.setup_errors.length ? `, ${rec.setup_errors.length} setup error(s)` : ''}${rec.aborted ? `, aborted (${rec.aborted})` : ''} [${rec.duration_ms} ms]`);
  };

  // Scheduler: --jobs workers; files that create roles (cluster-wide objects)
  // never run at the same time as each other.
  const queue = [...files];
  let roleFileRunning = false;
  let wake = null;
  const notify = () => {
    if (wake) {
      const w = wake;
      wake = null;
      w();
    }
  };
  let fatal = null;
  const slotLoop = async (slot) => {
    while (queue.length && !fatal) {
      const idx = queue.findIndex((f) => !(f.roleNames.length && roleFileRunning));
      if (idx < 0) {
        await new Promise((r) => {
          const prev = wake;
          wake = () => {
            if (prev) prev();
            r();
          };
        });
        continue;
      }
      const [file] = queue.splice(idx, 1);
      const usesRoles = file.roleNames.length > 0;
      if (usesRoles) roleFileRunning = true;
      try {
        await runFile(slot, file);
      } catch (e) {
        fatal = e;
      } finally {
        if (usesRoles) roleFileRunning = false;
        notify();
      }
    }
  };

  if (opts.verbose) {
    process.stdout.write('skip rules (applied to every SQL step of the fixtures and the cases):\n');
    for (const r of SKIP_RULES) process.stdout.write(`  ${r.id}: ${r.why}\n`);
    process.stdout.write('\n');
  }

  const jobs = Math.max(1, Math.min(opts.jobs, files.length));
  try {
    await Promise.all(Array.from({ length: jobs }, (_, slot) => slotLoop(slot)));
  } finally {
    await Promise.all(workers.map((w) => w && w.stop()));
  }
  if (fatal) {
    for (const db of activeDbs) await dropDatabase(db, { notes: [] });
    await admin.end().catch(() => {});
    throw fatal;
  }
  await admin.end().catch(() => {});
  const finished = new Date();

  // ---- report
  const fileReports = files.map((f) => {
    const rec = records.get(f.name);
    const counts = countRecord(rec);
    const steps = [...rec.results.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([, r]) => (r.class === 'pass' ? withoutKey(r, 'actual') : r));
    return {
      name: f.name,
      counts,
      duration_ms: rec.duration_ms,
      aborted: rec.aborted,
      setup_errors: rec.setup_errors,
      contract_violations: rec.contract_violations,
      notes: rec.notes,
      skipped: rec.skipped,
      steps,
    };
  });
  const totals = { files: files.length, graphql_steps: 0, runnable: 0, setup_errors: 0, files_with_setup_errors: 0, contract_violations: 0, aborted_files: 0 };
  for (const c of CLASSES) totals[c] = 0;
  for (const fr of fileReports) {
    for (const c of CLASSES) totals[c] += fr.counts[c];
    totals.graphql_steps += fr.counts.total;
    totals.runnable += fr.counts.runnable;
    totals.setup_errors += fr.setup_errors.length;
    if (fr.setup_errors.length) totals.files_with_setup_errors++;
    totals.contract_violations += fr.contract_violations.length;
    if (fr.aborted) totals.aborted_files++;
  }
  const failed = FAILED_CLASSES.reduce((n, c) => n + totals[c], 0);

  const out = [];
  if (opts.verbose) out.push(...verboseDetails(fileReports));
  out.push(...table(fileReports));
  out.push('');
  out.push(`totals over ${totals.files} files, ${totals.graphql_steps} graphql steps (${totals.runnable} runnable):`);
  for (const c of CLASSES) out.push(`  ${c.padEnd(14)}${String(totals[c]).padStart(6)}`);
  out.push(`  ${'setup errors'.padEnd(14)}${String(totals.setup_errors).padStart(6)}  (in ${totals.files_with_setup_errors} files)`);
  if (totals.contract_violations) out.push(`  ${'engine contract violations'} ${totals.contract_violations}`);
  if (totals.aborted_files) out.push(`  ${'aborted files'} ${totals.aborted_files}`);
  out.push(`pg_graphql conformance: ${totals.pass} passed, ${failed} failed`);

  if (opts.json) {
    const report = {
      format: 'pg_graphql-conformance-report/1',
      cases_commit: summary.commit ?? (fixtures.source && fixtures.source.commit) ?? null,
      engine: opts.engine,
      cases: opts.cases ?? null,
      server_version: info.version,
      started_at: started.toISOString(),
      finished_at: finished.toISOString(),
      duration_ms: finished - started,
      jobs,
      skip_rules: SKIP_RULES.map((r) => ({ id: r.id, action: r.action, why: r.why })),
      totals: { ...totals, passed: totals.pass, failed },
      files: fileReports,
    };
    try {
      fs.writeFileSync(path.resolve(cwd, opts.json), `${JSON.stringify(report, null, 2)}\n`);
    } catch (e) {
      throw new RunnerError(`cannot write the JSON report: ${errMessage(e)}`);
    }
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

function countRecord(rec) {
  const counts = { total: 0, runnable: 0 };
  for (const c of CLASSES) counts[c] = 0;
  for (const r of rec.results.values()) {
    counts[r.class]++;
    counts.total++;
    if (r.class !== 'not_runnable') counts.runnable++;
  }
  return counts;
}

function table(fileReports) {
  const w = Math.max(4, ...fileReports.map((f) => f.name.length));
  const cols = ['passed/total', 'errors_text', 'fail', 'exception', 'not_runnable', 'setup_errors'];
  const lines = [`${'file'.padEnd(w)}  ${cols.map((c) => c.padStart(c.length)).join('  ')}`];
  for (const f of fileReports) {
    const c = f.counts;
    const vals = [`${c.pass}/${c.runnable}`, c.errors_text, c.fail, c.exception, c.not_runnable, f.setup_errors.length];
    let line = `${f.name.padEnd(w)}  ${vals.map((v, i) => String(v).padStart(cols[i].length)).join('  ')}`;
    if (f.aborted) line += '  (aborted)';
    lines.push(line);
  }
  return lines;
}

function verboseDetails(fileReports) {
  const lines = [];
  const ruleCounts = {};
  for (const f of fileReports) {
    for (const s of f.skipped) ruleCounts[s.rule] = (ruleCounts[s.rule] || 0) + 1;
    const caseSkips = f.skipped.filter((s) => s.source !== 'fixtures');
    const bad = f.steps.filter((s) => s.class !== 'pass' && s.class !== 'not_runnable');
    const notRunnable = f.steps.filter((s) => s.class === 'not_runnable');
    if (!bad.length && !f.setup_errors.length && !f.notes.length && !f.contract_violations.length && !caseSkips.length && !notRunnable.length && !f.aborted) continue;
    lines.push(`=== ${f.name}`);
    if (f.aborted) lines.push(`  aborted: ${f.aborted}`);
    for (const e of f.setup_errors) lines.push(`  setup error [${e.source}${e.line != null ? `:${e.line}` : ''}] ${e.message}${e.sql ? `\n      sql: ${e.sql}` : ''}`);
    for (const s of caseSkips) lines.push(`  skipped [${s.source}:${s.line}] rule ${s.rule}: ${s.sql}`);
    for (const v of f.contract_violations) lines.push(`  engine contract [line ${v.line ?? '-'}] ${v.message}`);
    for (const n of f.notes) lines.push(`  note: ${n.what}: ${oneLine(n.message, 300)}`);
    for (const s of notRunnable) lines.push(`  not runnable [${f.name}.json:${s.line}] ${s.reason}`);
    for (const s of bad) {
      lines.push(`  --- ${f.name}.json:${s.line} ${s.class}${s.comment ? ` (${oneLine(s.comment, 80)})` : ''}`);
      lines.push(`      query:    ${oneLine(s.query, 200)}`);
      if (s.variables !== null && s.variables !== undefined) lines.push(`      variables: ${compactJson(s.variables, 200)}`);
      if (s.operationName) lines.push(`      operationName: ${s.operationName}`);
      lines.push(`      expected: ${compactJson(s.expected)}`);
      if (s.class !== 'exception') lines.push(`      actual:   ${compactJson(s.actual)}`);
      if (s.error) lines.push(`      error:    ${oneLine(s.error, 300)}`);
    }
  }
  lines.push('skipped statements by rule:');
  for (const r of SKIP_RULES) lines.push(`  ${r.id}: ${ruleCounts[r.id] || 0}`);
  lines.push('');
  return lines;
}

// ---------------------------------------------------------------------------

function exitAfterFlush(code) {
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv[0] === WORKER_FLAG) {
    await workerMain(argv[1]);
    return;
  }
  let opts;
  try {
    opts = parseArgs(argv);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`error: ${e.message}\n\n${USAGE}\n`);
      process.exit(2);
    }
    throw e;
  }
  if (opts.help) {
    process.stdout.write(`${USAGE}\n`);
    exitAfterFlush(0);
    return;
  }
  try {
    await parentMain(opts);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`error: ${e.message}\n\n${USAGE}\n`);
      process.exit(2);
    }
    process.stderr.write(`pg_graphql conformance: runner failed: ${e instanceof RunnerError ? e.message : e && e.stack ? e.stack : errMessage(e)}\n`);
    exitAfterFlush(1);
    return;
  }
  exitAfterFlush(0);
}

main();
