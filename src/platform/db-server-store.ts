/** The database servers as the platform database records them (table db_servers), for `strata servers`. */
import type pg from 'pg';

type Queryable = Pick<pg.ClientBase, 'query'>;

/** Every recorded server, by id, with its count of live projects and whether it is draining. */
export async function listDbServers(
  db: Queryable,
): Promise<{ id: string; projects: number; draining: boolean }[]> {
  const { rows } = await db.query<{ id: string; draining: boolean; projects: string }>(
    `select s.id, s.draining,
            (select count(*) from projects p where p.db_server = s.id and p.status <> 'REMOVED') as projects
     from db_servers s order by s.id`,
  );
  return rows.map((r) => ({ id: r.id, projects: Number(r.projects), draining: r.draining }));
}

/** Marks server `id` draining (it takes no new projects) or not; false when there is no such server. */
export async function setServerDraining(db: Queryable, id: string, draining: boolean): Promise<boolean> {
  const { rowCount } = await db.query('update db_servers set draining = $2 where id = $1', [id, draining]);
  return (rowCount ?? 0) > 0;
}
