/** Functions as root fields: named-notation calls with parameters cast to the argument types. */
import type { Func } from '../introspect/model.js';
import type { Comp } from './context.js';
import { fail } from './errors.js';
import { functionRef, functionValue } from './node.js';
import { argsOf, type Field } from './selection.js';
import { quoteIdent } from './sql.js';
import { sqlValue } from './values.js';

const CONNECTION_ARGS = ['first', 'last', 'before', 'after', 'offset', 'filter', 'orderBy'];

export function functionSql(comp: Comp, fn: Func, field: Field): string {
  const names = fn.args.map((a) => a.fieldName);
  const isConn = !!fn.returnTable && fn.setof && !fn.rowsOne;
  const args = argsOf(field, comp, isConn ? [...names, ...CONNECTION_ARGS] : names);
  const parts: string[] = [];
  for (const a of fn.args) {
    const v = args[a.fieldName];
    if (v === undefined) {
      if (!a.hasDefault) fail('Invalid input for NonNull type');
      continue;
    }
    const sv = sqlValue(a.type, v);
    const p = sv.array
      ? comp.sql.arrayParam(sv.array, a.type.castName)
      : comp.sql.param(sv.text, a.type.castName);
    parts.push(`${quoteIdent(a.sqlName)} => ${p}`);
  }
  const call = `${functionRef(fn)}(${parts.join(', ')})`;
  if (isConn) {
    // The connection reads its own arguments; the function's are consumed above.
    const connField: Field = {
      ...field,
      node: {
        ...field.node,
        arguments: field.node.arguments?.filter(
          (x) => !names.includes(x.name.value) || CONNECTION_ARGS.includes(x.name.value),
        ),
      },
    };
    return functionValue(comp, fn, call, connField, 'double');
  }
  return functionValue(comp, fn, call, field, 'double');
}
