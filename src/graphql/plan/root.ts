/** The builder's entry: one top-level field → its validated RootPlan (every validation rule lives in plan/). */
import type { Catalog } from '../introspect/model.js';
import { elementCast, LIST_PAGE_ARGS, pkColumns } from '../introspect/rules.js';
import { rootFields } from '../introspect/root-fields.js';
import { CONNECTION_ARGS, connectionPlan } from './connection.js';
import { fail } from './errors.js';
import { pkMatch } from './filter.js';
import { deletePlan, insertPlan, updatePlan } from './mutation.js';
import { decodeNodeId } from './node-id.js';
import { functionResult, nodePlan } from './node.js';
import type { Param, RootPlan } from './plan-types.js';
import { argsOf, type Ctx, type Field } from './selection.js';
import { paramOf, valueParam } from './values.js';

export function buildRootField(
  catalog: Catalog,
  ctx: Ctx,
  field: Field,
  operation: 'query' | 'mutation',
): RootPlan {
  const roots = rootFields(catalog);
  const rf = (operation === 'query' ? roots.query : roots.mutation).get(field.name);
  if (!rf) fail(`Unknown field "${field.name}" on type ${operation === 'query' ? 'Query' : 'Mutation'}`);
  switch (rf.kind) {
    case 'collection':
      return { kind: 'collection', connection: connectionPlan(ctx, rf.table, field) };
    case 'changes':
      // Only on Subscription, which src/realtime/ serves (never planned as a Query field).
      return fail(`Unknown field "${field.name}" on type Query`);
    case 'byPk': {
      const table = rf.table;
      const pk = pkColumns(table);
      const args = argsOf(
        field,
        ctx,
        pk.map((c) => c.fieldName),
      );
      const missing = pk.filter((c) => args[c.fieldName] === undefined || args[c.fieldName] === null);
      if (missing.length) fail(`Missing primary key column(s): ${missing.map((c) => c.sqlName).join(', ')}`);
      const values = pk.map((c) => paramOf(c.type, args[c.fieldName], elementCast(c.type)));
      const node = nodePlan(ctx, table, field.selections, 'double');
      return { kind: 'byPk', table, match: { columns: pk, values }, node };
    }
    case 'node': {
      const args = argsOf(field, ctx, ['nodeId']);
      if (args.nodeId === null || args.nodeId === undefined) fail('Invalid input for NonNull type');
      if (typeof args.nodeId !== 'string') fail('Invalid input for ID type');
      const id = decodeNodeId(args.nodeId as string);
      const table = catalog.tables.find(
        (x) => x.schema === id.schema && x.sqlName === id.table && x.primaryKey.length > 0,
      );
      if (!table) return { kind: 'nodeNotFound' };
      const node = nodePlan(ctx, table, field.selections, 'single');
      return { kind: 'node', table, match: pkMatch(table, id.values), node };
    }
    case 'function': {
      const fn = rf.func;
      const names = fn.args.map((a) => a.fieldName);
      // A connection's, or a list's (Strata `setof_scalars`), paging arguments.
      const paging = !fn.setof ? [] : !fn.returnTable ? LIST_PAGE_ARGS : fn.rowsOne ? [] : CONNECTION_ARGS;
      const args = argsOf(field, ctx, [...names, ...paging]);
      const callArgs: { sqlName: string; value: Param }[] = [];
      for (const a of fn.args) {
        const v = args[a.fieldName];
        // An argument without a default is `T!`: absent or null, pg_graphql refuses it.
        if ((v === undefined || v === null) && !a.hasDefault) fail('Invalid input for NonNull type');
        if (v === undefined) continue;
        callArgs.push({ sqlName: a.sqlName, value: valueParam(a.type, v) });
      }
      // A connection or list reads its own arguments; the function's are consumed above.
      const resultField: Field = paging.length
        ? {
            ...field,
            node: {
              ...field.node,
              arguments: field.node.arguments?.filter(
                (x) => !names.includes(x.name.value) || paging.includes(x.name.value),
              ),
            },
          }
        : field;
      return { kind: 'function', fn, args: callArgs, result: functionResult(ctx, fn, resultField, 'double') };
    }
    case 'insert':
      return insertPlan(ctx, rf.table, field);
    case 'update':
      return updatePlan(ctx, rf.table, field);
    case 'delete':
      return deletePlan(ctx, rf.table, field);
  }
}
