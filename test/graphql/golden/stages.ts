/**
 * The engine's stages without HTTP or execution: parse → select the operation → plan each
 * top-level field (plan/operation.ts buildOperation) → transpile it (transpile/root.ts
 * transpileRootField), as execute/plan.ts planRequest does; and a stable text rendering of both
 * for the golden snapshot files. This is the one place the golden tests reach past
 * src/graphql/engine.ts; re-point it there when the engine exports a plan/transpile entry.
 */
import type { Catalog, Column, Func, Relationship, Table } from '../../../src/graphql/introspect/model.js';
import { parseRequestDocument, selectOperation } from '../../../src/graphql/execute/document.js';
import { buildOperation } from '../../../src/graphql/plan/operation.js';
import type { RootPlan } from '../../../src/graphql/plan/plan-types.js';
import { transpileRootField, type CompiledField } from '../../../src/graphql/transpile/root.js';

export interface StagedField {
  alias: string;
  plan: RootPlan;
  compiled: CompiledField;
}

/** Each top-level field's plan and SQL; throws on any error (a golden document is valid). */
export function planAndTranspile(
  catalog: Catalog,
  query: string,
  variables: Record<string, unknown> = {},
  operationName: string | null = null,
): StagedField[] {
  const doc = parseRequestDocument(query);
  if (doc instanceof Error) throw doc;
  const op = selectOperation(doc, operationName, variables);
  const built = buildOperation(catalog, op.op, { fragments: op.fragments, vars: op.vars });
  if (built.kind === 'response') throw new Error(`not planned: ${JSON.stringify(built.response)}`);
  if (built.errors.length) throw new Error(`planned with errors: ${built.errors.join('; ')}`);
  return built.fields.map((f) => {
    if (f.kind !== 'root') throw new Error(`${f.alias}: not a SQL field (${f.kind})`);
    return { alias: f.alias, plan: f.plan, compiled: transpileRootField(f.plan) };
  });
}

const isTable = (v: object): v is Table => 'schemaInfo' in v && 'columns' in v && 'primaryKey' in v;
const isColumn = (v: object): v is Column => 'num' in v && 'sqlName' in v && 'canSelect' in v;
const isRelationship = (v: object): v is Relationship => 'target' in v && 'localColumns' in v;
const isFunc = (v: object): v is Func => 'volatility' in v && 'args' in v && 'returns' in v;

/**
 * Catalog objects a plan points at, as short names (no OIDs, no whole tables repeated): a
 * table `schema.name`, a column `name type`, a function `schema.name(arg types)`, a relationship its
 * field, kind, target and columns. Everything else as it is, keys sorted.
 */
function stable(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stable);
  if (v === null || typeof v !== 'object') return v;
  if (isTable(v)) return `table ${v.schema}.${v.sqlName}`;
  if (isColumn(v)) return `column ${v.sqlName} ${v.type.baseName}${v.type.isArray ? '[]' : ''}`;
  if (isFunc(v)) return `function ${v.schema}.${v.sqlName}(${v.args.map((a) => a.type.baseName).join(', ')})`;
  if (isRelationship(v))
    return {
      relationship: v.fieldName,
      kind: v.kind,
      target: stable(v.target),
      columns: v.localColumns.map((c, i) => `${c} = ${v.targetColumns[i]}`),
    };
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort()) {
    const x = (v as Record<string, unknown>)[k];
    if (x !== undefined) out[k] = stable(x);
  }
  return out;
}

/** The plan file: per top-level field, its plan (stable()) and the statement's parameters. */
export function planText(fields: StagedField[]): string {
  const rendered = fields.map((f) => ({
    alias: f.alias,
    plan: stable(f.plan),
    params: f.compiled.params,
    variables: f.compiled.variables.map((x) => x ?? null),
  }));
  return `${JSON.stringify(rendered, null, 2)}\n`;
}

/** The SQL file: per top-level field, a comment naming it, then its statement. */
export function sqlText(fields: StagedField[]): string {
  return fields.map((f) => `-- ${f.alias}\n${f.compiled.sql};\n`).join('\n');
}
