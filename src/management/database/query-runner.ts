/**
 * Runs a caller's SQL in a project's database *as the project's login* (`postgres.<ref>`), for
 * `POST /v1/projects/{ref}/database/query` (and its read-only variant).
 *
 * The session logs in as the platform-internal `strata_sql.<ref>` (member of the login, see
 * platform/project-login.ts) and switches to the login: SQL that resets its role is still no more
 * than the project's login, never a superuser. Each call has its own connection (closed after),
 * the config's statement timeout, and a watchdog that ends the backend if SQL lifted the timeout.
 * Read-only calls run one statement (extended protocol: no `commit; …` escape) in a READ ONLY
 * transaction that is rolled back.
 */
import pg from 'pg';
import { quoteIdent } from '../../db/sql-text.js';
import type { Platform } from '../../platform/platform.js';
import type { ProjectContext } from '../../platform/project-context.js';
import { projectLoginRole } from '../../platform/project-login.js';
import { projectSqlUrl } from './project-login-session.js';
import { badRequestOn } from '../http/errors.js';
import { withSuperuserSession } from '../../db/superuser-session.js';

export interface QueryRequest {
  query: string;
  parameters?: unknown[];
  readOnly: boolean;
}

/** A PostgreSQL error, as the reference API words it: `ERROR:  42P01: relation "x" does not exist`. */
export class SqlError extends Error {
  constructor(
    readonly sqlState: string,
    readonly pgMessage: string,
  ) {
    super(`Failed to run sql query: ERROR:  ${sqlState}: ${pgMessage}`);
  }
}

/**
 * Where in `query` an error points (PostgreSQL's 1-based character `position`), the way psql shows
 * it: `\nLINE <n>: <that line>\n<spaces>^` under the character. Empty when there is no position.
 */
export function errorContext(query: string | undefined, position: string | undefined): string {
  const at = Number(position);
  if (!query || !Number.isInteger(at) || at < 1 || at > query.length + 1) return '';
  const chars = Array.from(query); // PostgreSQL counts characters, not UTF-16 units
  const before = chars.slice(0, at - 1).join('');
  const lineNo = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n') + 1;
  const column = Array.from(before.slice(lineStart)).length;
  const line = (query.slice(lineStart).split('\n')[0] ?? '').replace(/\r$/, '');
  const prefix = `LINE ${lineNo}: `;
  return `\n${prefix}${line}\n${' '.repeat(prefix.length + column)}^`;
}

/** A PostgreSQL error (it has a SQLSTATE) as a SqlError, with its position in `query`; anything else as it is. */
export function sqlErrorOf(err: unknown, query?: string): unknown {
  const e = err as { code?: string; message?: string; position?: string };
  return typeof e?.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)
    ? new SqlError(e.code, (e.message ?? '') + errorContext(query, e.position))
    : err;
}

/** Extra time the watchdog gives the server's own statement timeout before ending the session. */
const WATCHDOG_GRACE_MS = 2_000;

type Row = Record<string, unknown>;

function lastRows(result: pg.QueryResult<Row> | pg.QueryResult<Row>[]): Row[] {
  const results = Array.isArray(result) ? result : [result];
  const last = [...results].reverse().find((r) => r.fields?.length);
  return last?.rows ?? [];
}

/** runProjectQuery for a route: a PostgreSQL error of the caller's SQL is a 400 with its message. */
export function runCallerQuery(platform: Platform, ctx: ProjectContext, req: QueryRequest): Promise<Row[]> {
  return badRequestOn([SqlError], () => runProjectQuery(platform, ctx, req));
}

export async function runProjectQuery(
  platform: Platform,
  ctx: ProjectContext,
  req: QueryRequest,
): Promise<Row[]> {
  const timeoutMs = Math.max(1, Math.floor(platform.config.dbQueryTimeoutMs));
  const client = new pg.Client({
    connectionString: projectSqlUrl(platform, ctx),
    application_name: 'strata-query',
  });
  client.on('error', () => {});
  await client.connect();
  let pid: number | undefined;
  let killed = false;
  const watchdog = setTimeout(() => {
    killed = true;
    if (pid === undefined) return;
    withSuperuserSession(ctx.superuserUrl, (c) => c.query('select pg_terminate_backend($1)', [pid])).catch(
      () => {},
    );
  }, timeoutMs + WATCHDOG_GRACE_MS);
  try {
    pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]?.pid;
    await client.query(
      `set role ${quoteIdent(projectLoginRole(ctx.ref))}; set statement_timeout = ${timeoutMs}`,
    );
    const values = req.parameters ?? [];
    if (req.readOnly) {
      await client.query('begin read only');
      try {
        const r = await client.query<Row>({
          text: req.query,
          values,
          queryMode: 'extended',
        } as pg.QueryConfig);
        return r.rows;
      } finally {
        await client.query('rollback').catch(() => {});
      }
    }
    const r = values.length
      ? await client.query<Row>(req.query, values)
      : ((await client.query<Row>(req.query)) as pg.QueryResult<Row> | pg.QueryResult<Row>[]);
    return lastRows(r);
  } catch (err) {
    if (killed) throw new SqlError('57014', 'canceling statement due to statement timeout');
    throw sqlErrorOf(err, req.query);
  } finally {
    clearTimeout(watchdog);
    await client.end().catch(() => {});
  }
}
