/** A row of a table type → a NodePlan of the selected fields (relationships and computed fields nested). */
import type { SelectionSetNode } from 'graphql';
import type { Func, Table } from '../introspect/model.js';
import { LIST_PAGE_ARGS, nodeFields } from '../introspect/rules.js';
import { connectionPlan, unsigned } from './connection.js';
import { fail } from './errors.js';
import type { FunctionResultPlan, NodeFieldPlan, NodePlan } from './plan-types.js';
import { argsOf, collectFields, type Ctx, type Field } from './selection.js';

/** pg_graphql words an unknown field in one of two ways, depending on where it is met. */
export type QuoteStyle = 'single' | 'double';

function unknownField(name: string, typeName: string, style: QuoteStyle): never {
  return style === 'single'
    ? fail(`Unknown field '${name}' on type '${typeName}'`)
    : fail(`Unknown field "${name}" on type ${typeName}`);
}

export function nodePlan(ctx: Ctx, table: Table, sets: SelectionSetNode[], style: QuoteStyle): NodePlan {
  const fields = collectFields(sets, table.typeName, ctx).map((f) => ({
    alias: f.alias,
    field: nodeField(ctx, table, f, style),
  }));
  return { table, fields };
}

function nodeField(ctx: Ctx, table: Table, f: Field, style: QuoteStyle): NodeFieldPlan {
  if (f.name === '__typename') return { kind: 'typename', name: table.typeName };
  const o = nodeFields(table).get(f.name);
  switch (o?.kind) {
    case 'nodeId':
      return { kind: 'nodeId' };
    case 'column':
      return { kind: 'column', column: o.column };
    case 'function':
      return { kind: 'computed', fn: o.fn, value: functionResult(ctx, o.fn, f, style) };
    case 'relationship': {
      const rel = o.relationship;
      if (rel.kind === 'toMany')
        return { kind: 'toMany', rel, connection: connectionPlan(ctx, rel.target, f) };
      return { kind: 'toOne', rel, node: nodePlan(ctx, rel.target, f.selections, 'single') };
    }
    default:
      return unknownField(f.name, table.typeName, style);
  }
}

/** What a call of `fn` becomes as the value of field `f`: scalar, row object, or connection. */
export function functionResult(ctx: Ctx, fn: Func, f: Field, style: QuoteStyle): FunctionResultPlan {
  if (!fn.returnTable) {
    if (!fn.setof) return { kind: 'scalar', fn };
    const args = argsOf(f, ctx, [...LIST_PAGE_ARGS]);
    const first = unsigned(args.first, 'first');
    const offset = unsigned(args.offset, 'offset') ?? 0;
    return { kind: 'scalarList', fn, limit: Math.min(first ?? fn.maxRows, fn.maxRows), offset };
  }
  if (fn.setof && !fn.rowsOne)
    return { kind: 'connection', connection: connectionPlan(ctx, fn.returnTable, f) };
  return { kind: 'row', node: nodePlan(ctx, fn.returnTable, f.selections, style) };
}
