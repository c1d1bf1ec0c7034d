/**
 * The transpiler's entry: a RootPlan → exactly one SQL statement returning the field's finished
 * JSON, with its parameters. It checks nothing: every rule was applied by the builder (plan/).
 */
import type { RootPlan } from '../plan/plan-types.js';
import { connectionSql } from './connection.js';
import { pkConditions, pkMatchSql } from './filter.js';
import { mutationSql } from './mutation.js';
import { nestedInsertSql } from './nested-insert.js';
import { functionRef, functionResultSql, nodeObjectSql } from './node.js';
import { quoteIdent, SqlBuilder, tableRef } from './sql-text.js';

export interface CompiledField {
  sql: string;
  params: (string | null)[];
  /** Per parameter: the request variable whose value it is as it is, if any (see plan/plan-types.ts). */
  variables: (string | undefined)[];
}

export function transpileRootField(plan: RootPlan): CompiledField {
  const sql = new SqlBuilder();
  return { sql: statement(sql, plan), params: sql.params, variables: sql.variables };
}

function statement(sql: SqlBuilder, plan: RootPlan): string {
  switch (plan.kind) {
    case 'collection':
      return `select ${connectionSql(sql, plan.connection, { from: tableRef(plan.connection.table) })}`;
    case 'byPk':
    case 'node': {
      const a = sql.alias();
      const object = nodeObjectSql(sql, plan.node, a);
      const where = plan.kind === 'byPk' ? pkConditions(sql, plan.match, a) : pkMatchSql(sql, plan.match, a);
      return `select (select ${object} from ${tableRef(plan.table)} as ${a} where ${where})`;
    }
    case 'nodeNotFound':
      return 'select null::json';
    case 'function': {
      const args = plan.args.map((x) => `${quoteIdent(x.sqlName)} => ${sql.param(x.value)}`);
      return `select to_json(${functionResultSql(sql, plan.result, `${functionRef(plan.fn)}(${args.join(', ')})`)})`;
    }
    case 'insert':
    case 'update':
    case 'delete':
      return mutationSql(sql, plan);
    case 'nestedInsert':
      return nestedInsertSql(sql, plan);
  }
}
