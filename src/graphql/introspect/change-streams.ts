/**
 * Strata `subscriptions`: which tables get a change stream, `Subscription.<type>Changes` (served
 * by src/realtime/change-streams.ts). A table of a schema that turned subscriptions on, with a
 * `<type>Collection` (so a primary key), gets one when its primary key's values read the same in
 * the change feed's text as in a node id (so the feed's rows can be told apart by node id; see
 * nodeIdOfText) and the type names `<Type>Change` and `ChangeOp` are free. Otherwise it is left
 * out with a notice, as the engine does with other clashes (type-name-clashes.ts).
 */
import type { Catalog, EnumType, Table } from './model.js';
import { CHANGE_OP_TYPE, changeType, changesField, collectionField } from './naming.js';
import { pkColumns } from './rules.js';
import { BUILT_IN, enumTypeNames, tableTypeNames } from './type-name-clashes.js';

/** How a key column's text (its type's output) is written in a node id's JSON. */
export type KeyJson = 'number' | 'boolean' | 'string';

/** What the realtime change streams need of a table. */
export interface ChangeTable {
  schema: string;
  sqlName: string;
  typeName: string;
  /** `<type>Changes` */
  field: string;
  /** `<type>Collection`, which fetches the records. */
  collectionField: string;
  /** The collection's most rows per page (a fetch asks for at most this many keys per field). */
  maxRows: number;
  /** The primary key's columns in order. */
  key: { sqlName: string; json: KeyJson }[];
}

const NUMBER_SCALARS = new Set(['Int', 'BigInt', 'BigFloat']);
const STRING_SCALARS = new Set(['String', 'UUID']);

function keyJson(t: Table): KeyJson[] | undefined {
  const out: KeyJson[] = [];
  for (const c of pkColumns(t)) {
    const ty = c.type;
    if (ty.isArray || ty.pseudo) return undefined;
    if (ty.enumRef || STRING_SCALARS.has(ty.scalar)) out.push('string');
    else if (NUMBER_SCALARS.has(ty.scalar)) out.push('number');
    else if (ty.scalar === 'Boolean') out.push('boolean');
    else return undefined;
  }
  return out;
}

/** The change streams of `tables` (the catalog's, after type-name claims), telling `notices` what is left out. */
export function changeStreamTables(
  tables: readonly Table[],
  enums: readonly EnumType[],
  notices: string[],
): Map<Table, ChangeTable> {
  const out = new Map<Table, ChangeTable>();
  const wanted = tables.filter((t) => t.schemaInfo.strata.subscriptions && t.primaryKey.length);
  if (!wanted.length) return out;
  const taken = new Set<string>([...BUILT_IN, 'Subscription']);
  for (const t of tables) for (const n of tableTypeNames(t.typeName)) taken.add(n);
  for (const e of enums) for (const n of enumTypeNames(e.name)) taken.add(n);
  if (taken.has(CHANGE_OP_TYPE)) {
    notices.push(
      `no table has a change stream (Subscription.<type>Changes): the type name "${CHANGE_OP_TYPE}" is already taken; rename the entity that has it`,
    );
    return out;
  }
  for (const t of wanted) {
    const what = `table ${t.schema}.${t.sqlName} (GraphQL ${t.typeName})`;
    const name = changeType(t.typeName);
    if (taken.has(name)) {
      notices.push(
        `${what} has no change stream (${changesField(t.typeName)}): the type name "${name}" is already taken`,
      );
      continue;
    }
    const json = keyJson(t);
    if (!json) {
      notices.push(
        `${what} has no change stream (${changesField(t.typeName)}): its primary key has a type change streams do not support (supported: integers, numeric, text and other string types, uuid, boolean, enums)`,
      );
      continue;
    }
    taken.add(name);
    out.set(t, {
      schema: t.schema,
      sqlName: t.sqlName,
      typeName: t.typeName,
      field: changesField(t.typeName),
      collectionField: collectionField(t.typeName),
      maxRows: t.maxRows,
      key: t.primaryKey.map((sqlName, i) => ({ sqlName, json: json[i] as KeyJson })),
    });
  }
  return out;
}

/** The change streams of a catalog (none when no schema turned subscriptions on). */
export function changeStreamsOf(catalog: Catalog): ReadonlyMap<Table, ChangeTable> {
  return catalog.changeStreams ?? new Map();
}

/**
 * The node id of a row whose key columns read `values` (their types' text output, as the change
 * feed reports them): the engine's nodeId (transpile/json-value.ts nodeIdOf), base64 of the jsonb
 * text `["schema", "table", key...]`; undefined when a key value is missing.
 */
export function nodeIdOfText(
  table: Pick<ChangeTable, 'schema' | 'sqlName' | 'key'>,
  values: Record<string, string | null>,
): string | undefined {
  const parts = [JSON.stringify(table.schema), JSON.stringify(table.sqlName)];
  for (const k of table.key) {
    const v = values[k.sqlName];
    if (v === undefined || v === null) return undefined;
    if (k.json === 'boolean') parts.push(v === 't' || v === 'true' ? 'true' : 'false');
    else if (k.json === 'number' && /^-?\d+(\.\d+)?$/.test(v)) parts.push(v);
    else parts.push(jsonbString(v));
  }
  return Buffer.from(`[${parts.join(', ')}]`, 'utf8').toString('base64');
}

/** A string as jsonb prints it (escape_json: \" \\ \b \f \n \r \t, other controls as \u00xx). */
function jsonbString(s: string): string {
  return JSON.stringify(s);
}
