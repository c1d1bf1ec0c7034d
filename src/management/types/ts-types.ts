/** PostgreSQL types → TypeScript types, as the reference generator maps them (supabase/postgres-meta's typegen). */
import type { PgType, TypegenCatalog } from './catalog.js';
import { resolveDomain } from './catalog.js';
import { stringLiteral } from './doc.js';

const NUMBER = new Set(['int2', 'int4', 'int8', 'float4', 'float8', 'numeric']);
const STRING = new Set([
  'bytea',
  'bpchar',
  'varchar',
  'date',
  'text',
  'citext',
  'time',
  'timetz',
  'timestamp',
  'timestamptz',
  'uuid',
  'vector',
  'interval',
]);
/** Extension types found in any schema. */
const ANY_SCHEMA = new Set(['citext', 'vector']);

export interface TypeContext {
  catalog: TypegenCatalog;
  included: Set<string>;
}

const ref = (...path: string[]) => `Database${path.map((p) => `[${stringLiteral(p)}]`).join('')}`;

function builtin(t: PgType): string | undefined {
  if (t.schema !== 'pg_catalog' && !ANY_SCHEMA.has(t.name)) return undefined;
  if (t.name === 'bool') return 'boolean';
  if (NUMBER.has(t.name)) return 'number';
  if (STRING.has(t.name)) return 'string';
  if (t.name === 'json' || t.name === 'jsonb') return 'Json';
  if (t.name === 'void') return 'undefined';
  if (t.name === 'record') return 'Record<string, unknown>';
  return undefined;
}

/** The TypeScript type of a PostgreSQL type, as union members (one item unless an enum is inlined). */
export function typeItems(ctx: TypeContext, typeId: number): string[] {
  const t = ctx.catalog.types.get(resolveDomain(ctx.catalog.types, typeId));
  if (!t) return ['unknown'];
  if (t.elem && t.category === 'A') {
    const inner = typeItems(ctx, t.elem);
    return [inner.length > 1 ? `(${inner.join(' | ')})[]` : `${inner[0]}[]`];
  }
  const b = builtin(t);
  if (b) return [b];
  if (t.typtype === 'e') {
    if (ctx.included.has(t.schema)) return [ref(t.schema, 'Enums', t.name)];
    return t.enums.map(stringLiteral);
  }
  if (t.typtype === 'c') {
    if (!ctx.included.has(t.schema)) return ['unknown'];
    if (t.relkind === 'c') return [ref(t.schema, 'CompositeTypes', t.name)];
    if (t.relkind === 'r' || t.relkind === 'p' || t.relkind === 'f')
      return [ref(t.schema, 'Tables', t.name, 'Row')];
    if (t.relkind === 'v' || t.relkind === 'm') return [ref(t.schema, 'Views', t.name, 'Row')];
  }
  return ['unknown'];
}

/** `T | null`, except that `unknown` stays alone. */
export function nullableItems(items: string[], nullable: boolean): string[] {
  if (!nullable || (items.length === 1 && items[0] === 'unknown')) return items;
  return [...items, 'null'];
}

/** The row type's relation of a type, if it is one (for computed fields and SETOF returns). */
export function rowRelationOf(ctx: TypeContext, typeId: number): number | undefined {
  const t = ctx.catalog.types.get(typeId);
  if (t?.typtype !== 'c' || !t.relkind || t.relkind === 'c') return undefined;
  return t.relid;
}
