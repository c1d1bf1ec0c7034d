/** Steps run on every project database after its SQL migrations (the areas' database-side objects). */
import type pg from 'pg';

export const projectBootstrapHooks: Array<(client: pg.ClientBase) => Promise<void>> = [];
