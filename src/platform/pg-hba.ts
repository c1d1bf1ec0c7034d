/**
 * pg_hba.conf for the database servers the platform runs itself (the embedded PostgreSQL):
 * renders the projects' network restrictions into a managed block at the top of the file,
 * validates it (pg_hba_file_rules), and reloads the server.
 *
 * The block keeps 127.0.0.1 (the platform's own API and superuser connections) and ::1 allowed
 * for every database, then for each restricted project database allows its CIDRs and rejects
 * everything else, and finally leaves every other database open (0.0.0.0/0, ::/0).
 * PostgreSQL applies the first matching line, so the block goes before initdb's lines.
 */
import { chownSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import type pg from 'pg';
import { withClient } from '../db/pool.js';

export interface DatabaseRestriction {
  /** Project ref (for the comment line). */
  ref: string;
  dbName: string;
  /** Allowed client networks; a list containing 0.0.0.0/0 (resp. ::/0) or an empty list means unrestricted for that family. */
  v4: string[];
  v6: string[];
}

/** A project's database logins (`postgres.<ref>` and the platform's internal `strata_sql.<ref>`). */
export interface ProjectLogins {
  ref: string;
  dbName: string;
  /** The user's login: any address its network restrictions allow. */
  login: string;
  /** Platform-internal logins: loopback only. */
  internal: string[];
  /** Role whose members are all project logins (matched with `+group`). */
  group: string;
}

export const BEGIN_MARK =
  '# BEGIN STRATA NETWORK RESTRICTIONS (managed by the platform: edits inside this block are replaced)';
export const END_MARK = '# END STRATA NETWORK RESTRICTIONS';

const METHOD = 'scram-sha-256';

function quoteDb(name: string): string {
  if (/["\r\n]/.test(name))
    throw new Error(`database name ${JSON.stringify(name)} cannot be written to pg_hba.conf`);
  return `"${name}"`;
}

function quoteRole(name: string): string {
  if (/["\r\n,]/.test(name))
    throw new Error(`role name ${JSON.stringify(name)} cannot be written to pg_hba.conf`);
  return `"${name}"`;
}

function line(db: string, address: string, method: string, user = 'all'): string {
  return `host    ${db.padEnd(24)} ${user.padEnd(6)} ${address.padEnd(43)} ${method}`;
}

/**
 * Lines that keep every project login inside its own database: its login from the addresses its
 * network restrictions allow (the loopback always: the platform's pooler connects from there),
 * the internal ones from the loopback only, then any project login anywhere else is rejected.
 */
function loginLines(logins: ProjectLogins[], restrictions: DatabaseRestriction[]): string[] {
  if (logins.length === 0) return [];
  const byRef = new Map(restrictions.map((r) => [r.ref, r]));
  const out = ['# project logins: each only to its own database'];
  for (const p of [...logins].sort((a, b) => a.dbName.localeCompare(b.dbName))) {
    const db = quoteDb(p.dbName);
    const r = byRef.get(p.ref);
    const v4 = r && !isOpen(r.v4, 4) ? r.v4 : ['0.0.0.0/0'];
    const v6 = r && !isOpen(r.v6, 6) ? r.v6 : ['::/0'];
    for (const role of p.internal) {
      out.push(line(db, '127.0.0.1/32', METHOD, quoteRole(role)));
      out.push(line(db, '::1/128', METHOD, quoteRole(role)));
    }
    const login = quoteRole(p.login);
    out.push(line(db, '127.0.0.1/32', METHOD, login), line(db, '::1/128', METHOD, login));
    for (const c of [...v4, ...v6]) out.push(line(db, c, METHOD, login));
  }
  const group = `+${quoteRole(logins[0]?.group ?? '')}`;
  out.push(line('all', '0.0.0.0/0', 'reject', group), line('all', '::/0', 'reject', group));
  return out;
}

/** Whether a family's list leaves that family unrestricted. */
export function isOpen(list: string[], family: 4 | 6): boolean {
  return list.length === 0 || list.includes(family === 4 ? '0.0.0.0/0' : '::/0');
}

export function renderManagedBlock(
  restrictions: DatabaseRestriction[],
  logins: ProjectLogins[] = [],
): string {
  const out = [
    BEGIN_MARK,
    ...loginLines(logins, restrictions),
    '# the platform itself (API pools, superuser) on the loopback addresses',
    line('all', '127.0.0.1/32', METHOD),
    line('all', '::1/128', METHOD),
  ];
  for (const r of [...restrictions].sort((a, b) => a.dbName.localeCompare(b.dbName))) {
    const open4 = isOpen(r.v4, 4);
    const open6 = isOpen(r.v6, 6);
    if (open4 && open6) continue;
    const db = quoteDb(r.dbName);
    out.push(`# project ${r.ref}`);
    if (!open4) {
      for (const c of r.v4) out.push(line(db, c, METHOD));
      out.push(line(db, '0.0.0.0/0', 'reject'));
    }
    if (!open6) {
      for (const c of r.v6) out.push(line(db, c, METHOD));
      out.push(line(db, '::/0', 'reject'));
    }
  }
  out.push(
    '# every other database: open',
    line('all', '0.0.0.0/0', METHOD),
    line('all', '::/0', METHOD),
    END_MARK,
  );
  return out.join('\n') + '\n';
}

/** The file's text with its managed block (if any) replaced by `block`, placed first. */
export function withManagedBlock(current: string, block: string): string {
  let rest = current;
  const start = rest.indexOf(BEGIN_MARK);
  if (start >= 0) {
    const end = rest.indexOf(END_MARK, start);
    const after = end >= 0 ? rest.indexOf('\n', end) : -1;
    rest = rest.slice(0, start) + (after >= 0 ? rest.slice(after + 1) : '');
  }
  return block + rest;
}

function writeLike(file: string, text: string): void {
  const st = statSync(file);
  const tmp = `${file}.strata-tmp`;
  writeFileSync(tmp, text, { mode: st.mode & 0o777 });
  // The embedded server may run as another OS user (postgres, when the platform runs as root).
  if (process.getuid?.() === 0) chownSync(tmp, st.uid, st.gid);
  renameSync(tmp, file);
}

async function loadTime(url: string): Promise<number> {
  return withClient(url, async (c) => {
    const [row] = (await c.query<{ t: Date }>('select pg_conf_load_time() as t')).rows;
    if (!row) throw new Error('pg_conf_load_time() returned no row');
    return row.t.getTime();
  });
}

/**
 * Writes the managed block into the server's pg_hba.conf and reloads it. `superuserUrl` reaches
 * the server as a superuser from 127.0.0.1 (kept allowed by the block). If PostgreSQL reports a
 * parse error in the new file, the previous file is restored and an error is thrown. Resolves
 * once new connections use the new rules.
 */
export async function applyPgHba(
  superuserUrl: string,
  restrictions: DatabaseRestriction[],
  logins: ProjectLogins[] = [],
): Promise<void> {
  const block = renderManagedBlock(restrictions, logins);
  await withClient(superuserUrl, async (c: pg.Client) => {
    const [setting] = (await c.query<{ f: string }>(`select current_setting('hba_file') as f`)).rows;
    if (!setting) throw new Error("current_setting('hba_file') returned no row");
    const file = setting.f;
    const previous = readFileSync(file, 'utf8');
    const next = withManagedBlock(previous, block);
    if (next === previous) return;
    writeLike(file, next);
    const errors = (
      await c.query<{ line_number: number; error: string }>(
        'select line_number, error from pg_hba_file_rules where error is not null',
      )
    ).rows;
    if (errors.length) {
      writeLike(file, previous);
      throw new Error(
        `pg_hba.conf rejected: ${errors.map((e) => `line ${e.line_number}: ${e.error}`).join('; ')}`,
      );
    }
    const before = await loadTime(superuserUrl);
    await c.query('select pg_reload_conf()');
    // The postmaster rereads pg_hba.conf asynchronously; new backends inherit its reload time.
    for (let i = 0; i < 50; i++) {
      if ((await loadTime(superuserUrl)) > before) return;
      await new Promise((r) => setTimeout(r, 50));
    }
  });
}
