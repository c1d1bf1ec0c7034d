/**
 * What the TypeScript generator needs from a project's live catalog: schemas, relations with
 * columns, foreign keys (carried over to views), functions and types. Read with a superuser
 * connection; every value goes through bound parameters.
 */
import type pg from 'pg';
import { viewColumnOrigins } from './node-tree.js';

export interface PgType {
  id: number;
  name: string;
  schema: string;
  /** b base, c composite, d domain, e enum, p pseudo, r range, m multirange */
  typtype: string;
  /** The relation of a composite/row type (0 otherwise) and its kind. */
  relid: number;
  relkind: string | null;
  /** Element type of an array type (0 otherwise). */
  elem: number;
  /** Base type of a domain (0 otherwise). */
  basetype: number;
  category: string;
  enums: string[];
}

export type RelationKind = 'table' | 'view' | 'materialized_view';

export interface Column {
  name: string;
  attnum: number;
  /** Type of the column, domains resolved to their base type. */
  typeId: number;
  nullable: boolean;
  identity: 'ALWAYS' | 'BY DEFAULT' | null;
  hasDefault: boolean;
  updatable: boolean;
}

export interface Relation {
  id: number;
  schema: string;
  name: string;
  kind: RelationKind;
  /** Auto-updatable view (UPDATE and DELETE possible). */
  updatable: boolean;
  /** Sorted by name. */
  columns: Column[];
}

export interface Relationship {
  foreignKeyName: string;
  /** The relation holding the key (a table, or a view exposing the key columns). */
  schema: string;
  relation: string;
  columns: string[];
  isOneToOne: boolean;
  referencedSchema: string;
  referencedRelation: string;
  referencedColumns: string[];
}

export interface FunctionArg {
  name: string;
  mode: 'in' | 'out' | 'inout' | 'variadic' | 'table';
  typeId: number;
  hasDefault: boolean;
}

export interface PgFunction {
  id: number;
  schema: string;
  name: string;
  args: FunctionArg[];
  returnTypeId: number;
  setReturning: boolean;
  /** Declared result rows (`ROWS n`); a set-returning function declared `ROWS 1` returns one row. */
  rows: number;
  identityArgs: string;
}

export interface CompositeType {
  schema: string;
  name: string;
  attributes: Array<{ name: string; typeId: number }>;
}

export interface TypegenCatalog {
  /** Included schemas that exist, sorted. */
  schemas: string[];
  types: Map<number, PgType>;
  relations: Relation[];
  relationships: Relationship[];
  functions: PgFunction[];
  compositeTypes: CompositeType[];
}

export const SYSTEM_SCHEMAS = ['information_schema', 'pg_catalog', 'pg_toast'];

const KIND: Record<string, RelationKind> = {
  r: 'table',
  p: 'table',
  f: 'table',
  v: 'view',
  m: 'materialized_view',
};

/** The kind of a relation the catalog query selected (its relkind filter matches KIND's keys). */
function relationKind(relkind: string): RelationKind {
  const kind = KIND[relkind];
  if (kind === undefined) throw new Error(`typegen: unexpected relkind '${relkind}'`);
  return kind;
}

const MODES: Record<string, FunctionArg['mode']> = {
  i: 'in',
  o: 'out',
  b: 'inout',
  v: 'variadic',
  t: 'table',
};

export async function loadTypegenCatalog(
  client: pg.ClientBase,
  includedSchemas: string[],
): Promise<TypegenCatalog> {
  const schemas = (
    await client.query<{ nspname: string }>(
      'select nspname from pg_namespace where nspname = any($1::text[]) and nspname <> all($2::text[])',
      [includedSchemas, SYSTEM_SCHEMAS],
    )
  ).rows
    .map((r) => r.nspname)
    .sort((a, b) => a.localeCompare(b));
  const types = await loadTypes(client);
  const relations = await loadRelations(client, schemas, types);
  const relationships = await loadRelationships(client, schemas, relations);
  const functions = await loadFunctions(client, schemas);
  const compositeTypes = await loadCompositeTypes(client, schemas, types);
  return { schemas, types, relations, relationships, functions, compositeTypes };
}

async function loadTypes(client: pg.ClientBase): Promise<Map<number, PgType>> {
  const { rows } = await client.query<{
    id: string;
    name: string;
    schema: string;
    typtype: string;
    relid: string;
    relkind: string | null;
    elem: string;
    basetype: string;
    category: string;
    enums: string[];
  }>(
    `select t.oid::int8 as id, t.typname as name, n.nspname as schema, t.typtype, t.typrelid::int8 as relid, c.relkind,
            t.typelem::int8 as elem, t.typbasetype::int8 as basetype, t.typcategory as category,
            coalesce((select array_agg(e.enumlabel::text order by e.enumsortorder) from pg_enum e where e.enumtypid = t.oid), '{}') as enums
       from pg_type t
       join pg_namespace n on n.oid = t.typnamespace
       left join pg_class c on c.oid = t.typrelid
      where n.nspname <> 'pg_toast'`,
  );
  const map = new Map<number, PgType>();
  for (const r of rows) {
    map.set(Number(r.id), {
      id: Number(r.id),
      name: r.name,
      schema: r.schema,
      typtype: r.typtype,
      relid: Number(r.relid),
      relkind: r.relkind,
      elem: Number(r.elem),
      basetype: Number(r.basetype),
      category: r.category,
      enums: r.enums,
    });
  }
  return map;
}

/** A domain's base type (through nested domains). */
export function resolveDomain(types: Map<number, PgType>, typeId: number): number {
  let id = typeId;
  for (let i = 0; i < 20; i++) {
    const t = types.get(id);
    if (t?.typtype !== 'd' || !t.basetype) return id;
    id = t.basetype;
  }
  return id;
}

async function loadRelations(
  client: pg.ClientBase,
  schemas: string[],
  types: Map<number, PgType>,
): Promise<Relation[]> {
  const rels = await client.query<{
    id: string;
    schema: string;
    name: string;
    relkind: string;
    updatable: boolean;
  }>(
    `select c.oid::int8 as id, n.nspname as schema, c.relname as name, c.relkind,
            case when c.relkind = 'v' then (pg_relation_is_updatable(c.oid, false) & 20) = 20 else false end as updatable
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = any($1::text[]) and c.relkind in ('r', 'p', 'f', 'v', 'm')`,
    [schemas],
  );
  const ids = rels.rows.map((r) => r.id);
  const cols = await client.query<{
    relid: string;
    name: string;
    attnum: number;
    typeid: string;
    attnotnull: boolean;
    typnotnull: boolean;
    attidentity: string;
    has_default: boolean;
    updatable: boolean;
  }>(
    `select a.attrelid::int8 as relid, a.attname as name, a.attnum, a.atttypid::int8 as typeid, a.attnotnull,
            (t.typtype = 'd' and t.typnotnull) as typnotnull, a.attidentity, (ad.adbin is not null) as has_default,
            coalesce(pg_column_is_updatable(a.attrelid, a.attnum, false), false) as updatable
       from pg_attribute a
       join pg_type t on t.oid = a.atttypid
       left join pg_attrdef ad on ad.adrelid = a.attrelid and ad.adnum = a.attnum
      where a.attrelid = any($1::int8[]::oid[]) and a.attnum > 0 and not a.attisdropped`,
    [ids],
  );
  const byRel = new Map<number, Column[]>();
  for (const c of cols.rows) {
    const list = byRel.get(Number(c.relid)) ?? [];
    list.push({
      name: c.name,
      attnum: c.attnum,
      typeId: resolveDomain(types, Number(c.typeid)),
      nullable: !(c.attnotnull || c.typnotnull),
      identity: c.attidentity === 'a' ? 'ALWAYS' : c.attidentity === 'd' ? 'BY DEFAULT' : null,
      hasDefault: c.has_default,
      updatable: c.updatable,
    });
    byRel.set(Number(c.relid), list);
  }
  return rels.rows.map((r) => ({
    id: Number(r.id),
    schema: r.schema,
    name: r.name,
    kind: relationKind(r.relkind),
    updatable: r.updatable,
    columns: (byRel.get(Number(r.id)) ?? []).sort((a, b) => a.name.localeCompare(b.name)),
  }));
}

interface ForeignKey {
  name: string;
  relid: number;
  columns: number[];
  refRelid: number;
  refColumns: number[];
  oneToOne: boolean;
}

async function loadRelationships(
  client: pg.ClientBase,
  schemas: string[],
  relations: Relation[],
): Promise<Relationship[]> {
  const fks = await client.query<{
    name: string;
    relid: string;
    conkey: number[];
    refrelid: string;
    confkey: number[];
    one_to_one: boolean;
  }>(
    `select con.conname as name, con.conrelid::int8 as relid, con.conkey, con.confrelid::int8 as refrelid, con.confkey,
            exists (
              select 1 from pg_index i
               where i.indrelid = con.conrelid and i.indisunique and i.indpred is null and i.indexprs is null
                 and (select array_agg(k order by k) from unnest(i.indkey::int2[]) k) = (select array_agg(k order by k) from unnest(con.conkey) k)
            ) as one_to_one
       from pg_constraint con
       join pg_class c on c.oid = con.conrelid
       join pg_namespace n on n.oid = c.relnamespace
      where con.contype = 'f' and n.nspname = any($1::text[])`,
    [schemas],
  );
  const byId = new Map(relations.map((r) => [r.id, r]));
  const viewIds = relations.filter((r) => r.kind !== 'table').map((r) => r.id);
  const rules = await client.query<{ relid: string; action: string }>(
    `select ev_class::int8 as relid, ev_action::text as action from pg_rewrite where ev_class = any($1::int8[]::oid[]) and rulename = '_RETURN'`,
    [viewIds],
  );
  // view column → base column, followed through views of views
  const origin = new Map<string, [number, number]>();
  for (const r of rules.rows) {
    for (const o of viewColumnOrigins(r.action)) origin.set(`${r.relid}:${o.attnum}`, [o.relid, o.relattnum]);
  }
  const baseOf = (relid: number, attnum: number): string => {
    let cur: [number, number] = [relid, attnum];
    for (let i = 0; i < 20; i++) {
      const next = origin.get(`${cur[0]}:${cur[1]}`);
      if (!next) break;
      cur = next;
    }
    return `${cur[0]}:${cur[1]}`;
  };
  /** The relations (the table itself, then views) exposing all of `relid`'s `attnums`, with their column names. */
  const exposures = (relid: number, attnums: number[]): Array<{ rel: Relation; columns: string[] }> => {
    const out: Array<{ rel: Relation; columns: string[] }> = [];
    const table = byId.get(relid);
    if (!table) return out;
    const names = attnums.map((n) => table.columns.find((c) => c.attnum === n)?.name);
    if (names.some((n) => n === undefined)) return out;
    out.push({ rel: table, columns: names as string[] });
    for (const v of relations) {
      if (v.kind === 'table' || v.schema !== table.schema) continue;
      const cols = attnums.map((n) => {
        const wanted = `${relid}:${n}`;
        return [...v.columns]
          .sort((a, b) => a.attnum - b.attnum)
          .find((c) => baseOf(v.id, c.attnum) === wanted)?.name;
      });
      if (cols.every((c) => c !== undefined)) out.push({ rel: v, columns: cols as string[] });
    }
    return out;
  };
  const result: Relationship[] = [];
  for (const row of fks.rows) {
    const fk: ForeignKey = {
      name: row.name,
      relid: Number(row.relid),
      columns: row.conkey,
      refRelid: Number(row.refrelid),
      refColumns: row.confkey,
      oneToOne: row.one_to_one,
    };
    for (const src of exposures(fk.relid, fk.columns)) {
      for (const dst of exposures(fk.refRelid, fk.refColumns)) {
        result.push({
          foreignKeyName: fk.name,
          schema: src.rel.schema,
          relation: src.rel.name,
          columns: src.columns,
          isOneToOne: fk.oneToOne,
          referencedSchema: dst.rel.schema,
          referencedRelation: dst.rel.name,
          referencedColumns: dst.columns,
        });
      }
    }
  }
  return result;
}

async function loadFunctions(client: pg.ClientBase, schemas: string[]): Promise<PgFunction[]> {
  const { rows } = await client.query<{
    id: string;
    schema: string;
    name: string;
    rettype: string;
    retset: boolean;
    prorows: number;
    argnames: string[] | null;
    argmodes: string[] | null;
    allargtypes: string[] | null;
    argtypes: string[];
    nargdefaults: number;
    ident: string;
  }>(
    `select p.oid::int8 as id, n.nspname as schema, p.proname as name, p.prorettype::int8 as rettype, p.proretset as retset, p.prorows::float8 as prorows,
            p.proargnames as argnames, p.proargmodes::text[] as argmodes, p.proallargtypes::int8[] as allargtypes,
            p.proargtypes::oid[]::int8[] as argtypes, p.pronargdefaults as nargdefaults,
            pg_get_function_identity_arguments(p.oid) as ident
       from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = any($1::text[]) and p.prokind = 'f'`,
    [schemas],
  );
  return rows.map((r) => {
    const typesAll = (r.allargtypes ?? r.argtypes).map(Number);
    const modes = r.argmodes ?? typesAll.map(() => 'i');
    const args: FunctionArg[] = typesAll.map((typeId, i) => ({
      name: r.argnames?.[i] ?? '',
      mode: MODES[modes[i] ?? 'i'] ?? 'in',
      typeId,
      hasDefault: false,
    }));
    const inputs = args.filter((a) => a.mode === 'in' || a.mode === 'inout' || a.mode === 'variadic');
    for (const a of inputs.slice(Math.max(0, inputs.length - r.nargdefaults))) a.hasDefault = true;
    return {
      id: Number(r.id),
      schema: r.schema,
      name: r.name,
      args,
      returnTypeId: Number(r.rettype),
      setReturning: r.retset,
      rows: Number(r.prorows),
      identityArgs: r.ident,
    };
  });
}

async function loadCompositeTypes(
  client: pg.ClientBase,
  schemas: string[],
  types: Map<number, PgType>,
): Promise<CompositeType[]> {
  const { rows } = await client.query<{
    schema: string;
    name: string;
    attname: string | null;
    atttypid: string | null;
  }>(
    `select n.nspname as schema, t.typname as name, a.attname, a.atttypid::int8 as atttypid
       from pg_type t
       join pg_namespace n on n.oid = t.typnamespace
       join pg_class c on c.oid = t.typrelid and c.relkind = 'c'
       left join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
      where n.nspname = any($1::text[])
      order by n.nspname, t.typname, a.attnum`,
    [schemas],
  );
  const out = new Map<string, CompositeType>();
  for (const r of rows) {
    const key = `${r.schema}.${r.name}`;
    let ct = out.get(key);
    if (!ct) {
      ct = { schema: r.schema, name: r.name, attributes: [] };
      out.set(key, ct);
    }
    if (r.attname !== null)
      ct.attributes.push({ name: r.attname, typeId: resolveDomain(types, Number(r.atttypid)) });
  }
  return [...out.values()];
}
