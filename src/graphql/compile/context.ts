/** The state of one compilation: the catalog, the request (fragments, variables) and the SQL being built. */
import type { Catalog } from '../introspect/model.js';
import type { Ctx } from './selection.js';
import { SqlBuilder } from './sql.js';

export interface Comp extends Ctx {
  catalog: Catalog;
  sql: SqlBuilder;
}

export function newComp(catalog: Catalog, ctx: Ctx): Comp {
  return { ...ctx, catalog, sql: new SqlBuilder() };
}
