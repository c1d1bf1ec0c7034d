/** Runs the catalog query and turns its document into the catalog model (names and types decided here). */
import type pg from 'pg';
import { CATALOG_SQL, COLUMN_NAMES } from './catalog-sql.js';
import {
  DirectiveError,
  enabled,
  expectBool,
  expectStringSeq,
  expectU64,
  parseDirective,
  strataFeatures,
} from './directives.js';
import {
  fieldNameFor,
  functionFieldName,
  isValidGraphQLName,
  collectionField,
  lowerFirst,
  toOneFieldName,
  typeNameFor,
} from './naming.js';
import { anyColumn, columnBySqlName, LIST_PAGE_ARGS } from './rules.js';
import { reflectedRelations, withPartitionKeys } from './partitions.js';
import { TypeNameClaims } from './type-name-clashes.js';
import { changeStreamTables } from './change-streams.js';
import { distinctRelationshipNames, type NamedRelationship } from './relationship-names.js';
import type {
  Catalog,
  Column,
  EnumType,
  Func,
  FuncArg,
  ScalarName,
  SchemaInfo,
  SqlType,
  Table,
} from './model.js';

// biome-ignore lint/suspicious/noExplicitAny: the catalog query's JSON rows, read field by field below
type Raw = any;

const SCALARS: Record<string, ScalarName> = {
  int2: 'Int',
  int4: 'Int',
  int8: 'BigInt',
  float4: 'Float',
  float8: 'Float',
  numeric: 'BigFloat',
  text: 'String',
  varchar: 'String',
  bpchar: 'String',
  citext: 'String',
  bool: 'Boolean',
  uuid: 'UUID',
  date: 'Date',
  time: 'Time',
  timestamp: 'Datetime',
  timestamptz: 'Datetime',
  json: 'JSON',
  jsonb: 'JSON',
};

/** A schema-qualified, quoted type name usable in a cast (so "char" stays the 1-byte type and nothing shadows it). */
function qualified(schema: string, name: string): string {
  const q = (s: string) => '"' + s.replace(/"/g, '""') + '"';
  return `${q(schema)}.${q(name)}`;
}

export async function loadCatalog(client: pg.ClientBase): Promise<Catalog> {
  const res = await client.query(CATALOG_SQL);
  return buildCatalog(res.rows[0].catalog as Raw);
}

export function buildCatalog(raw: Raw): Catalog {
  try {
    return build(raw);
  } catch (e) {
    if (e instanceof DirectiveError) {
      return {
        role: raw.role,
        schemas: [],
        tables: [],
        enums: [],
        functions: [],
        invalidEnumLabels: [],
        notices: [],
        introspection: false,
        loadError: `Error while loading schema, check comment directives. ${e.message}`,
      };
    }
    throw e;
  }
}

/** A column of the catalog document (a JSON array, see COLUMN_NAMES) as an object. */
function namedColumn(values: unknown[]): Raw {
  const c: Raw = {};
  for (let i = 0; i < COLUMN_NAMES.length; i++)
    c[COLUMN_NAMES[i] as (typeof COLUMN_NAMES)[number]] = values[i];
  return c;
}

/** The length limit of a `varchar(n)` / `char(n)` column (or an array of one), from its type modifier. */
function maxLengthOf(t: Raw | undefined, typmod: number, rawTypes: Map<number, Raw>): number | undefined {
  const el = t?.category === 'A' ? rawTypes.get(t.elem) : t;
  if (typmod < 4 || el?.schema !== 'pg_catalog' || (el.name !== 'varchar' && el.name !== 'bpchar'))
    return undefined;
  return typmod - 4;
}

function build(doc: Raw): Catalog {
  const raw: Raw = {
    ...doc,
    rels: (doc.rels as Raw[]).map((r) => ({ ...r, columns: (r.columns as unknown[][]).map(namedColumn) })),
  };
  const schemas: SchemaInfo[] = raw.schemas.map((s: Raw) => {
    const d = parseDirective(s.comment);
    return {
      oid: s.oid,
      name: s.name,
      inflect: expectBool(d.inflect_names) ?? false,
      maxRows: expectU64(d.max_rows) ?? 30,
      introspection: expectBool(d.introspection) ?? false,
      strata: strataFeatures(d.strata),
    };
  });
  const schemaByName = new Map(schemas.map((s) => [s.name, s]));
  /** The catalog query lists the schema of every relation and function it returns. */
  const schemaNamed = (name: string): SchemaInfo => {
    const sch = schemaByName.get(name);
    if (!sch) throw new Error(`internal error: the catalog names schema "${name}" without listing it`);
    return sch;
  };
  const rawTypes = new Map<number, Raw>(raw.types.map((t: Raw) => [t.oid, t]));
  const notices: string[] = [];
  const claims = new TypeNameClaims(notices);
  /** Search-path order of schemas, then name: who keeps a type name two entities want. */
  const rank = new Map(schemas.map((s, i) => [s.name, i]));
  const byPath = <T extends { schema: string; sqlName: string }>(a: T, b: T) =>
    (rank.get(a.schema) ?? 0) - (rank.get(b.schema) ?? 0) ||
    (a.sqlName < b.sqlName ? -1 : a.sqlName > b.sqlName ? 1 : 0);

  // Enums visible in GraphQL: on the search path, with USAGE.
  const enums: EnumType[] = [];
  const invalidEnumLabels: Catalog['invalidEnumLabels'] = [];
  const enumByOid = new Map<number, EnumType>();
  for (const t of raw.types as Raw[]) {
    if (t.typtype !== 'e' || !t.onPath || !t.canUse) continue;
    const sch = schemaByName.get(t.schema);
    const d = parseDirective(t.comment);
    const mappings = (d.mappings && typeof d.mappings === 'object' ? d.mappings : {}) as Record<
      string,
      string
    >;
    const e: EnumType = {
      oid: t.oid,
      schema: t.schema,
      sqlName: t.name,
      name: typeNameFor(t.name, sch?.inflect ?? false, d.name),
      description: typeof d.description === 'string' ? d.description : null,
      values: (t.enumLabels as string[]).map((label) => ({ label, name: mappings[label] ?? label })),
    };
    if (!isValidGraphQLName(e.name)) continue;
    enums.push(e);
  }
  enums.sort(byPath);
  for (const e of enums.splice(0)) {
    if (!claims.claim({ kind: 'enum', schema: e.schema, sqlName: e.sqlName, typeName: e.name })) continue;
    enums.push(e);
    enumByOid.set(e.oid, e);
    const invalid = e.values.filter((v) => !isValidGraphQLName(v.name)).map((v) => v.name);
    if (invalid.length)
      invalidEnumLabels.push({ enumName: e.name, schema: e.schema, sqlName: e.sqlName, labels: invalid });
  }

  const typeCache = new Map<string, SqlType>();
  /**
   * The SqlType of `oid`. pg_graphql 1.6.1 types a value by its type's oid and category
   * (graphql.rs to_graphql_type; a domain has its base type's typcategory but its own oid), so a
   * domain is `Opaque`, an array of a domain `[Opaque]`, a domain over an enum `Opaque`, and a
   * domain over an array (category A with no element type) has no GraphQL type at all: its column
   * is left out and a function using it is not reflected. With `domainBaseTypes` (Strata's
   * `domain_base_types` switch) a domain is typed as its base type instead.
   */
  const sqlType = (oid: number, typmod = -1, domainBaseTypes = false): SqlType => {
    const key = `${oid}:${typmod}:${domainBaseTypes}`;
    const hit = typeCache.get(key);
    if (hit) return hit;
    let t = rawTypes.get(oid);
    const maxLength = maxLengthOf(t, typmod, rawTypes);
    let castName = t ? qualified(t.schema, t.name) : 'text';
    let domain = t?.typtype === 'd';
    let untyped = domain && t?.category === 'A';
    /** A domain over an array (not an array of one): its type name does not end in `[]`. */
    const domainOverArray = untyped;
    while (t && t.typtype === 'd' && rawTypes.get(t.base)) t = rawTypes.get(t.base);
    let isArray = false;
    if (t && t.category === 'A' && t.elem && rawTypes.get(t.elem)) {
      isArray = true;
      let el = rawTypes.get(t.elem);
      castName = `${qualified(el.schema, el.name)}[]`;
      if (el?.typtype === 'd') {
        domain = true;
        untyped ||= el.category === 'A';
      }
      while (el && el.typtype === 'd' && rawTypes.get(el.base)) el = rawTypes.get(el.base);
      t = el;
    }
    const baseName: string = t?.name ?? 'unknown';
    const opaqueDomain = domain && !domainBaseTypes;
    const out: SqlType = {
      oid,
      castName,
      baseName,
      isArray,
      pseudo: !t || t.typtype === 'p' || (opaqueDomain && untyped),
      scalar: opaqueDomain ? 'Opaque' : (SCALARS[baseName] ?? 'Opaque'),
    };
    if (opaqueDomain) out.opaqueDomain = true;
    if (opaqueDomain && domainOverArray) out.untypedDomain = true;
    if (t?.typtype === 'e' && !opaqueDomain) {
      const e = enumByOid.get(t.oid);
      if (e) out.enumRef = e;
    }
    if (t?.typtype === 'c') out.compositeRelid = t.relid;
    if (maxLength !== undefined) out.maxLength = maxLength;
    typeCache.set(key, out);
    return out;
  };

  // Tables.
  const tables: Table[] = [];
  const tableByOid = new Map<number, Table>();
  const rawByOid = new Map<number, Raw>();
  const shown = reflectedRelations(raw.rels as Raw[], schemaNamed);
  for (const r of raw.rels as Raw[]) {
    if (!shown(r)) continue;
    const sch = schemaNamed(r.schema);
    const d = parseDirective(r.comment);
    const columns: Column[] = [];
    const unnamedColumns: Column[] = [];
    for (const c of r.columns as Raw[]) {
      const cd = parseDirective(c.comment);
      const col: Column = {
        num: c.num,
        sqlName: c.name,
        fieldName: fieldNameFor(c.name, sch.inflect, cd.name),
        description: typeof cd.description === 'string' ? cd.description : null,
        type: sqlType(c.type, c.typmod, sch.strata.domainBaseTypes),
        notNull: c.notNull,
        nullFree: c.nullFree === true,
        hasDefault: c.hasDefault,
        isSerial: c.serial === true,
        generated: c.generated === 's',
        canSelect: c.select,
        canInsert: c.insert,
        canUpdate: c.update,
      };
      // pg_graphql leaves such a column out of every type, not out of the table (omit_weird_names).
      (isValidGraphQLName(col.fieldName) ? columns : unnamedColumns).push(col);
    }
    const byNum = new Map<number, Raw>((r.columns as Raw[]).map((c: Raw) => [c.num, c]));
    const names = (nums: number[]) => nums.map((n) => byNum.get(n)?.name as string);
    let primaryKey: string[] = [];
    const pkIdx = (r.uniques as Raw[]).find((u) => u.primary);
    if (pkIdx) primaryKey = names(pkIdx.cols);
    const directivePk = expectStringSeq(d.primary_key_columns);
    if (!pkIdx && directivePk)
      primaryKey = directivePk.every((n) => byNum.size && [...byNum.values()].some((c) => c.name === n))
        ? directivePk
        : [];
    const fks = d.foreign_keys;
    if (fks !== undefined && fks !== null) {
      if (!Array.isArray(fks)) throw new DirectiveError('invalid type: map, expected a sequence');
      for (const fk of fks as Raw[]) {
        expectStringSeq(fk.local_columns);
        expectStringSeq(fk.foreign_columns);
      }
    }
    const maxRows = expectU64(d.max_rows) ?? sch.maxRows;
    const t: Table = {
      oid: r.oid,
      schema: r.schema,
      sqlName: r.name,
      kind: r.kind,
      typeName: typeNameFor(r.name, sch.inflect, d.name),
      description: typeof d.description === 'string' ? d.description : null,
      rls: r.rls,
      schemaInfo: sch,
      columns,
      unnamedColumns,
      primaryKey,
      uniques: (r.uniques as Raw[]).filter((u) => !u.partial).map((u) => names(u.cols)),
      conflictTargets: (r.uniques as Raw[])
        .filter((u) => !u.partial && u.immediate)
        .map((u) => ({ name: u.name as string, columns: names(u.cols) })),
      totalCount: enabled(d.totalCount),
      aggregate: enabled(d.aggregate),
      maxRows,
      canDelete: r.canDelete,
      canSelectAll: r.canSelectAll,
      relationships: [],
      computed: [],
    };
    rawByOid.set(r.oid, { ...r, directive: d });
    // pg_graphql (graphql.rs graphql_table_select_types_are_valid): a valid type name, a primary
    // key and any column selectable, whatever the columns' names.
    const selectable = anyColumn(t, (c) => c.canSelect) !== undefined;
    if (!isValidGraphQLName(t.typeName) || !selectable) continue;
    tables.push(t);
  }
  const claimed = new Set(
    [...tables]
      .sort(byPath)
      .filter((t) =>
        claims.claim({ kind: 'table', schema: t.schema, sqlName: t.sqlName, typeName: t.typeName }),
      ),
  );
  for (const t of tables.splice(0)) {
    if (!claimed.has(t)) continue;
    tables.push(t);
    tableByOid.set(t.oid, t);
  }
  const tableByName = (schema: string, name: string) =>
    tables.find((t) => t.schema === schema && t.sqlName === name);

  // Foreign keys (real and from directives) → relationships on both sides.
  interface Fk {
    local: Table;
    localCols: string[];
    target: Table;
    targetCols: string[];
    localName?: string;
    foreignName?: string;
    /** The constraint's name (none for a `foreign_keys` directive). */
    constraint?: string;
  }
  const fks: Fk[] = [];
  for (const c of withPartitionKeys(raw, tableByOid)) {
    if (c.type !== 'f') continue;
    const local = tableByOid.get(c.rel);
    const target = tableByOid.get(c.frel);
    if (!local || !target) continue;
    const lr = rawByOid.get(c.rel);
    const tr = rawByOid.get(c.frel);
    const colName = (r: Raw, n: number) => (r.columns as Raw[]).find((x) => x.num === n)?.name as string;
    const d = parseDirective(c.comment);
    fks.push({
      local,
      target,
      localCols: c.colNames ?? (c.cols as number[]).map((n) => colName(lr, n)),
      targetCols: c.fcolNames ?? (c.fcols as number[]).map((n) => colName(tr, n)),
      localName: typeof d.local_name === 'string' ? d.local_name : undefined,
      foreignName: typeof d.foreign_name === 'string' ? d.foreign_name : undefined,
      constraint: typeof c.name === 'string' ? c.name : undefined,
    });
  }
  for (const t of tables) {
    const d = rawByOid.get(t.oid).directive;
    for (const fk of (Array.isArray(d.foreign_keys) ? d.foreign_keys : []) as Raw[]) {
      const target = tableByName(fk.foreign_schema, fk.foreign_table);
      if (!target) continue;
      fks.push({
        local: t,
        target,
        localCols: fk.local_columns ?? [],
        targetCols: fk.foreign_columns ?? [],
        localName: fk.local_name,
        foreignName: fk.foreign_name,
      });
    }
  }
  const named: NamedRelationship[] = [];
  const seenFks = new Set<string>();
  for (const fk of fks) {
    // The same key declared twice (two identical constraints) is one relationship.
    const same = JSON.stringify([fk.local.oid, fk.localCols, fk.target.oid, fk.targetCols]);
    if (seenFks.has(same)) continue;
    seenFks.add(same);
    // pg_graphql's relationship fields lead only to entities that are collections (with a primary
    // key, real or `primary_key_columns`), over key columns the role may select, named or not
    // (sql_types.rs fkey_is_selectable). Each side's field is left out when the entity it leads to
    // has no key, and (unlike pg_graphql, whose schema then breaks) when its name is not a GraphQL name.
    const lcols = selectableColumnsNamed(fk.local, fk.localCols);
    if (!lcols || !selectableColumnsNamed(fk.target, fk.targetCols)) continue;
    const inflect = fk.local.schemaInfo.inflect;
    const toOne = fk.foreignName ?? toOneFieldName(fk.localCols, inflect, fk.target.typeName);
    if (fk.target.primaryKey.length && isValidGraphQLName(toOne))
      named.push({
        fk,
        owner: fk.local,
        byDirective: fk.foreignName !== undefined,
        rel: {
          fieldName: toOne,
          target: fk.target,
          localColumns: fk.localCols,
          targetColumns: fk.targetCols,
          kind: 'toOne',
          referencing: true,
          nonNull: lcols.some((c) => c.notNull) && !fk.target.rls,
        },
      });
    // pg_graphql (fkey_is_locally_unique): one-to-one when some unique index of the referencing
    // table has all its columns among the key's columns (a subset is enough).
    const set = new Set(fk.localCols);
    const unique = [fk.local.primaryKey, ...fk.local.uniques].some(
      (u) => u.length > 0 && u.every((x) => set.has(x)),
    );
    const back =
      fk.localName ?? (unique ? lowerFirst(fk.local.typeName) : collectionField(fk.local.typeName));
    if (fk.local.primaryKey.length && isValidGraphQLName(back))
      named.push({
        fk,
        owner: fk.target,
        byDirective: fk.localName !== undefined,
        rel: {
          fieldName: back,
          target: fk.local,
          localColumns: fk.targetCols,
          targetColumns: fk.localCols,
          kind: unique ? 'toOne' : 'toMany',
          referencing: false,
          nonNull: false,
        },
      });
  }

  for (const { owner, rel } of distinctRelationshipNames(named, notices)) owner.relationships.push(rel);

  // Functions.
  const functions: Func[] = [];
  const tableByRelid = (relid?: number) => (relid ? tableByOid.get(relid) : undefined);
  for (const f of raw.functions as Raw[]) {
    // pg_graphql (sql_types.rs Function::is_supported) has no rule for variadic functions or for
    // argument modes: its arguments are `proargtypes` (IN, INOUT and VARIADIC ones, a variadic one
    // as its array type, so a list) named by position in `proargnames`, which also holds OUT names.
    if (!f.canExecute || SYSTEM_SCHEMAS.has(f.schema)) continue;
    const sch = schemaNamed(f.schema);
    const d = parseDirective(f.comment);
    const argTypes: number[] = f.argTypes ?? [];
    const argNames: string[] = (f.argNames ?? []).slice(0, argTypes.length);
    const ret = sqlType(f.returnType, -1, sch.strata.domainBaseTypes);
    const defaults = argDefaults(f.argDefaults, f.nargDefaults, argTypes);
    const args: FuncArg[] = argTypes.map((oid, i) => {
      const d = defaults[i];
      const a: FuncArg = {
        sqlName: argNames[i] ?? '',
        fieldName: fieldNameFor(argNames[i] ?? '', sch.inflect),
        type: sqlType(oid, -1, sch.strata.domainBaseTypes),
        hasDefault: d !== undefined,
      };
      if (d !== undefined && d !== null) a.defaultValue = d;
      return a;
    });
    const fn: Func = {
      oid: f.oid,
      schema: f.schema,
      sqlName: f.name,
      fieldName: functionFieldName(f.name, sch.inflect, d.name),
      description: typeof d.description === 'string' ? d.description : null,
      volatility: f.volatility,
      setof: f.setof,
      rowsOne: f.setof && f.rows === 1,
      args,
      returns: ret,
      maxRows: sch.maxRows,
    };
    if (!isValidGraphQLName(fn.fieldName)) continue;
    if (ret.pseudo || ['void', 'record', 'trigger', 'event_trigger'].includes(ret.baseName)) continue;
    if (ret.compositeRelid !== undefined) {
      if (ret.isArray) continue;
      fn.returnTable = tableByRelid(ret.compositeRelid);
      if (!fn.returnTable?.canSelectAll) continue;
      // A connection pages by the primary key: a set-returning function of an entity without one
      // is left out (a single row of it, `returns entity` or `setof entity rows 1`, is not).
      if (fn.setof && !fn.rowsOne && !fn.returnTable.primaryKey.length) continue;
    }
    // pg_graphql (sql_types.rs return_type_is_supported / arg_types_are_supported) goes by type
    // category, which a domain takes from its base type: an enum, a domain over one, or an array
    // of either, as a result or an argument, leaves the function out.
    else if (ret.enumRef || rawTypes.get(f.returnType)?.category === 'E') continue;
    else if (ret.isArray && rawTypes.get(rawTypes.get(f.returnType)?.elem)?.category === 'E') continue;
    else if (f.setof && !sch.strata.setofScalars) continue;
    // Computed field: the only argument is a table's row type.
    const first = args[0];
    if (first && first.type.compositeRelid !== undefined && !first.type.isArray) {
      const on = tableByRelid(first.type.compositeRelid);
      if (!on || args.length !== 1 || !on.canSelectAll) continue;
      fn.computedOn = on;
      on.computed.push(fn);
      continue;
    }
    if (f.overloaded) continue;
    // A Query or Mutation field may only return an entity the schema has a type for, so one
    // returning a row of an entity without a primary key is left out (pg_graphql #483). A computed
    // field returning such a row stays (issue_511).
    if (fn.returnTable && !fn.returnTable.primaryKey.length) continue;
    if (
      args.some(
        (a) =>
          !a.sqlName ||
          a.type.pseudo ||
          a.type.compositeRelid !== undefined ||
          a.type.enumRef ||
          rawTypes.get(a.type.oid)?.category === 'E' ||
          (a.type.isArray && rawTypes.get(rawTypes.get(a.type.oid)?.elem)?.category === 'E'),
      )
    )
      continue;
    if (
      fn.setof &&
      fn.returnTable &&
      args.some((a) =>
        ['first', 'last', 'before', 'after', 'offset', 'filter', 'orderBy'].includes(a.fieldName),
      )
    )
      continue;
    // Strata `setof_scalars`: a list field's paging arguments take those names, as a connection's do.
    if (fn.setof && !fn.returnTable && args.some((a) => LIST_PAGE_ARGS.includes(a.fieldName))) continue;
    functions.push(fn);
  }

  return {
    role: raw.role,
    schemas,
    tables,
    enums,
    functions,
    invalidEnumLabels,
    notices,
    introspection: schemas.some((s) => s.introspection),
    changeStreams: changeStreamTables(tables, enums, notices),
  };
}

/**
 * The columns of `t` whose SQL names are `names`, in order, with or without GraphQL names;
 * undefined when one is missing or not selectable.
 */
function selectableColumnsNamed(t: Table, names: string[]): Column[] | undefined {
  const out: Column[] = [];
  for (const n of names) {
    const c = columnBySqlName(t, n);
    if (!c?.canSelect) return undefined;
    out.push(c);
  }
  return out;
}

/** Schemas whose functions pg_graphql never reflects (Supabase's own). */
const SYSTEM_SCHEMAS = new Set(['graphql', 'graphql_public', 'auth', 'extensions']);

/**
 * pg_graphql's reading of argument defaults (`pg_get_expr(proargdefaults)`): the text is split at
 * every comma, and when that does not give one piece per defaulted argument no argument counts
 * as having a default. Otherwise each defaulted argument is optional; its default is shown only
 * for int2/int4, bool, float4/float8 and text literals. `undefined`: required; `null`: optional
 * without a shown default; else the shown default.
 */
function argDefaults(text: string | null, count: number, argTypes: number[]): (unknown | undefined)[] {
  const out: unknown[] = argTypes.map(() => undefined);
  if (!text || !count) return out;
  const pieces = text.split(',');
  if (pieces.length !== count) return out;
  const start = argTypes.length - count;
  for (let i = start; i < argTypes.length; i++) out[i] = shownDefault(pieces[i - start].trim(), argTypes[i]);
  return out;
}

function shownDefault(expr: string, typeOid: number): unknown {
  if (expr.startsWith('NULL::')) return null;
  switch (typeOid) {
    case 21:
    case 23:
      return /^[+-]?\d+$/.test(expr) && Math.abs(Number(expr)) <= 2147483647 ? Number(expr) : null;
    case 16:
      return expr === 'true' || expr === 'false' ? expr === 'true' : null;
    case 700:
    case 701: {
      const n = Number(expr);
      return expr !== '' && Number.isFinite(n) ? n : null;
    }
    case 25:
      if (!expr.endsWith('::text')) return null;
      return expr.slice(0, -'::text'.length).replace(/^[,']+|[,']+$/g, '');
    default:
      return null;
  }
}
