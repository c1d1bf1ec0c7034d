/** One top-level field → exactly one SQL statement returning the field's finished JSON. */
import type { Catalog, Table } from '../introspect/model.js';
import { pkColumns } from '../introspect/rules.js';
import { connectionSql } from './connection.js';
import { newComp } from './context.js';
import { fail } from './errors.js';
import { pkMatch } from './filter.js';
import { functionSql } from './function-call.js';
import { col } from './json-value.js';
import { deleteSql, insertSql, updateSql } from './mutation.js';
import { decodeNodeId } from './node-id.js';
import { nodeObject } from './node.js';
import { rootFields } from '../introspect/root-fields.js';
import { argsOf, type Ctx, type Field } from './selection.js';
import { elementCast, tableRef } from './sql.js';
import { scalarText } from './values.js';

export interface CompiledField {
  sql: string;
  params: (string | null)[];
}

export function compileRootField(
  catalog: Catalog,
  ctx: Ctx,
  field: Field,
  operation: 'query' | 'mutation',
): CompiledField {
  const roots = rootFields(catalog);
  const map = operation === 'query' ? roots.query : roots.mutation;
  const rf = map.get(field.name);
  const typeName = operation === 'query' ? 'Query' : 'Mutation';
  if (!rf) fail(`Unknown field "${field.name}" on type ${typeName}`);
  const comp = newComp(catalog, ctx);
  let sql: string;
  switch (rf.kind) {
    case 'collection':
      sql = `select ${connectionSql(comp, rf.table, field, { from: tableRef(rf.table) })}`;
      break;
    case 'byPk': {
      const t = rf.table;
      const pk = pkColumns(t);
      const args = argsOf(
        field,
        comp,
        pk.map((c) => c.fieldName),
      );
      const missing = pk.filter((c) => args[c.fieldName] === undefined || args[c.fieldName] === null);
      if (missing.length) fail(`Missing primary key column(s): ${missing.map((c) => c.sqlName).join(', ')}`);
      const a = comp.sql.alias();
      const cond = pk
        .map(
          (c) =>
            `${col(a, c.sqlName)} = ${comp.sql.param(scalarText(c.type, args[c.fieldName]), elementCast(c.type))}`,
        )
        .join(' and ');
      sql = `select (select ${nodeObject(comp, t, field.selections, a, 'double')} from ${tableRef(t)} as ${a} where ${cond})`;
      break;
    }
    case 'node': {
      const args = argsOf(field, comp, ['nodeId']);
      if (args.nodeId === null || args.nodeId === undefined) fail('Invalid input for NonNull type');
      if (typeof args.nodeId !== 'string') fail('Invalid input for ID type');
      const id = decodeNodeId(args.nodeId as string);
      const t: Table | undefined = catalog.tables.find(
        (x) => x.schema === id.schema && x.sqlName === id.table && x.primaryKey.length > 0,
      );
      if (!t) {
        sql = 'select null::json';
        break;
      }
      const a = comp.sql.alias();
      sql = `select (select ${nodeObject(comp, t, field.selections, a)} from ${tableRef(t)} as ${a} where ${pkMatch(comp, t, id.values, a)})`;
      break;
    }
    case 'function':
      sql = `select to_json(${functionSql(comp, rf.func, field)})`;
      break;
    case 'insert':
      sql = insertSql(comp, rf.table, field);
      break;
    case 'update':
      sql = updateSql(comp, rf.table, field);
      break;
    case 'delete':
      sql = deleteSql(comp, rf.table, field);
      break;
  }
  return { sql, params: comp.sql.params };
}
