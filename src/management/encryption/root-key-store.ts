/** The encryption store: projects' sealed root keys in the platform database (table project_root_keys). */
import type pg from 'pg';

type Queryable = Pick<pg.ClientBase, 'query'>;

/** The sealed root key of `ref`, or undefined when it has none. */
export async function sealedRootKey(db: Queryable, ref: string): Promise<Buffer | undefined> {
  const { rows } = await db.query<{ root_key_sealed: Buffer }>(
    'select root_key_sealed from project_root_keys where project_ref = $1',
    [ref],
  );
  return rows[0]?.root_key_sealed;
}

/** Stores the sealed root key of `ref` unless it has one; false when it had. */
export async function insertRootKeyIfAbsent(db: Queryable, ref: string, sealed: Buffer): Promise<boolean> {
  const { rowCount } = await db.query(
    'insert into project_root_keys (project_ref, root_key_sealed) values ($1, $2) on conflict (project_ref) do nothing',
    [ref, sealed],
  );
  return Boolean(rowCount);
}

/** Stores the sealed root key of `ref`, replacing the one it had. */
export async function upsertRootKey(db: Queryable, ref: string, sealed: Buffer): Promise<void> {
  await db.query(
    `insert into project_root_keys (project_ref, root_key_sealed) values ($1, $2)
     on conflict (project_ref) do update set root_key_sealed = excluded.root_key_sealed, updated_at = now()`,
    [ref, sealed],
  );
}

export async function deleteRootKey(db: Queryable, ref: string): Promise<void> {
  await db.query('delete from project_root_keys where project_ref = $1', [ref]);
}

/** The live projects that have no root key yet. */
export async function projectsWithoutRootKey(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ ref: string }>(
    `select p.ref from projects p where p.status <> 'REMOVED'
       and not exists (select 1 from project_root_keys k where k.project_ref = p.ref)`,
  );
  return rows.map((r) => r.ref);
}
