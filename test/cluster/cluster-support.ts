/**
 * A small Strata cluster on this machine, started the way deploy/ runs one: two `strata start`
 * processes (bin/strata.js) on one platform database, two PostgreSQL servers (the run's embedded
 * one, primary, and a second embedded one), and an S3 endpoint (s3rver). Every node gets the
 * environment of deploy/strata.env, with local addresses and fresh secrets.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { startEmbedded, type EmbeddedServer } from '../../src/db/embedded.js';
import { withClient, withDatabase } from '../../src/db/pool.js';
import { quoteIdent } from '../../src/db/sql-text.js';
import { createDatabaseIfMissing } from '../../src/platform/project-database.js';
import { authenticatorPassword, serverUrl } from '../support/database.js';
import { repoRoot as root, servingBanner, spawnCli } from '../support/strata-process.js';

const require = createRequire(import.meta.url);

export interface Node {
  name: string;
  url: string;
  child: ChildProcess;
  output(): string;
}

export interface Cluster {
  nodes: Node[];
  accessToken: string;
  /** Superuser URLs of the primary (platform database's) server and of the second one. */
  primaryUrl: string;
  secondUrl: string;
  platformDatabase: string;
  env: NodeJS.ProcessEnv;
  startNode(name: string): Promise<Node>;
  close(): Promise<void>;
}

interface S3rverInstance {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
}

/** KEY=VALUE lines of deploy/strata.env. */
function deployEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of readFileSync(join(root, 'deploy', 'strata.env'), 'utf8').split('\n')) {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (m?.[1]) out[m[1]] = m[2] ?? '';
  }
  return out;
}

/**
 * The environment of every node: deploy/strata.env with this machine's addresses and fresh
 * secrets in place of its placeholders (each replaced setting must be in the file: the file names
 * everything a node needs), plus a few test-only knobs.
 */
function nodeEnv(opts: {
  dir: string;
  primaryUrl: string;
  secondUrl: string;
  extraServers: string[];
  s3Endpoint: string;
  bucket: string;
  platformDatabase: string;
  accessToken: string;
}): NodeJS.ProcessEnv {
  const keyFile = join(opts.dir, 'platform.key');
  writeFileSync(keyFile, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
  const base = deployEnv();
  const local: Record<string, string> = {
    DATABASE_URL: opts.primaryUrl,
    STRATA_DB_SERVERS: [`second=${opts.secondUrl}`, ...opts.extraServers].join(','),
    STRATA_PLATFORM_DATABASE: opts.platformDatabase,
    STRATA_S3_ENDPOINT: opts.s3Endpoint,
    STRATA_S3_BUCKET: opts.bucket,
    STRATA_S3_ACCESS_KEY_ID: 'S3RVER',
    STRATA_S3_SECRET_ACCESS_KEY: 'S3RVER',
    STRATA_PLATFORM_KEY_FILE: keyFile,
    STRATA_AUTHENTICATOR_PASSWORD: authenticatorPassword,
    STRATA_ACCESS_TOKEN: opts.accessToken,
    STRATA_HOST: '127.0.0.1',
    STRATA_PORT: '0',
  };
  const missing = Object.keys(local).filter((k) => !(k in base));
  if (missing.length) throw new Error(`deploy/strata.env lacks ${missing.join(', ')}`);
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    ...base,
    ...local,
    STRATA_BAN_THRESHOLD: '3',
    // Each node's console on a free port (the default 54323 would be taken by the first node).
    STRATA_CONSOLE_PORT: '0',
    STRATA_SHUTDOWN_GRACE_MS: '10000',
    STRATA_FUNCTIONS_PREWARM: '0',
  };
}

async function spawnNode(name: string, env: NodeJS.ProcessEnv, dataDir: string): Promise<Node> {
  const p = spawnCli(['start', '--data-dir', dataDir], { env });
  const out = await servingBanner(p, { timeoutMs: 90_000, name: `node ${name}` });
  const url = /API URL: (http:\/\/\S+)/.exec(out)?.[1];
  if (!url) throw new Error(`node ${name}: no API URL in ${out}`);
  return { name, url, child: p.child, output: p.output };
}

/** `extraServers`: more `id=url` entries for STRATA_DB_SERVERS, after the second embedded server. */
export async function startCluster(opts: { extraServers?: string[] } = {}): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), 'strata-cluster-'));
  const suffix = randomBytes(4).toString('hex');
  const cleanups: Array<() => Promise<void>> = [async () => rmSync(dir, { recursive: true, force: true })];
  let second: EmbeddedServer | undefined;
  const nodes: Node[] = [];
  const close = async () => {
    await Promise.all(nodes.map((n) => stopNode(n)));
    for (const c of cleanups.reverse()) await c().catch(() => {});
  };
  try {
    second = await startEmbedded({ dataDir: join(dir, 'pg2'), port: 0, password: 'postgres' });
    const s = second;
    cleanups.push(() => s.stop());
    const S3rver = require('s3rver') as new (opts: Record<string, unknown>) => S3rverInstance;
    const s3rver = new S3rver({
      address: '127.0.0.1',
      port: 0,
      silent: true,
      directory: join(dir, 's3'),
      allowMismatchedSignatures: true,
    });
    const { port } = await s3rver.run();
    cleanups.push(() => s3rver.close());
    const s3Endpoint = `http://127.0.0.1:${port}`;
    const bucket = `strata-${suffix}`;
    const s3 = new S3Client({
      endpoint: s3Endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    s3.destroy();

    // The default project's database is the one DATABASE_URL names: one of this cluster's own.
    const primaryUrl = withDatabase(serverUrl(), `cluster_default_${suffix}`);
    const platformDatabase = `cluster_platform_${suffix}`;
    cleanups.push(() => dropClusterDatabases(serverUrl(), platformDatabase, suffix));
    await createDatabaseIfMissing(serverUrl(), `cluster_default_${suffix}`);
    const accessToken = `sbp_${randomBytes(20).toString('hex')}`;
    const env = nodeEnv({
      dir,
      primaryUrl,
      secondUrl: s.superuserUrl('postgres'),
      extraServers: opts.extraServers ?? [],
      s3Endpoint,
      bucket,
      platformDatabase,
      accessToken,
    });
    const startNode = async (name: string) => {
      const node = await spawnNode(name, env, join(dir, name));
      nodes.push(node);
      return node;
    };
    // Both at once: the start-up lock must serialise creating and migrating the platform database.
    await Promise.all([startNode('a'), startNode('b')]);
    nodes.sort((x, y) => x.name.localeCompare(y.name));
    return {
      nodes,
      accessToken,
      primaryUrl,
      secondUrl: s.superuserUrl('postgres'),
      platformDatabase,
      env,
      startNode,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** SIGTERM, then SIGKILL after `killAfterMs` (default 15 s). */
export async function stopNode(node: Node, killAfterMs = 15_000): Promise<void> {
  const { child } = node;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  await exited;
  clearTimeout(timer);
}

/** The primary server's databases and logins of this cluster (a shared DATABASE_URL server keeps nothing). */
async function dropClusterDatabases(server: string, platformDatabase: string, suffix: string): Promise<void> {
  const projects = await withClient(withDatabase(server, platformDatabase), (p) =>
    p.query<{ db_name: string; ref: string; db_server: string }>(
      'select db_name, ref, db_server from projects',
    ),
  ).catch(() => ({ rows: [] as { db_name: string; ref: string; db_server: string }[] }));
  await withClient(withDatabase(server, 'postgres'), async (c) => {
    const dbs = projects.rows.filter((r) => r.db_server === 'primary').map((r) => r.db_name);
    for (const d of [...dbs, `cluster_default_${suffix}`, platformDatabase])
      await c.query(`drop database if exists ${quoteIdent(d)} with (force)`);
    for (const { ref } of projects.rows)
      for (const role of [`strata_sql.${ref}`, `postgres.${ref}`])
        await c.query(`drop role if exists ${quoteIdent(role)}`).catch(() => {});
  });
}
