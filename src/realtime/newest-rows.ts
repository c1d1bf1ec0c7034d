/**
 * Live queries whose result is the first rows of a table by its key (read-set.ts AppendShape: a
 * chat's last messages, an activity feed), refreshed for commits that changed only rows of that
 * table (among the tables the query reads) by running the query for those rows alone and merging
 * them in, rather than running it again whole. The rows' query is the same document with
 * `{<key>: {in: $keys}}` added to its filter, run as the same principal, so the filter, grants
 * and policies decide which of the rows it shows and how each is rendered exactly as they decide
 * the whole query's; the merge is the last result less the changed keys, plus the rows returned,
 * in key order, cut to the limit.
 *
 * Why that is the result: the shape's rows are functions of their own values, and neither the
 * policies nor the selections read another row of the table or anything those commits changed;
 * so between the last result's snapshot and this one only the changed rows can have entered,
 * left or changed. When the last result was a full page, the rows after its last key are not
 * known: if a row left and nothing known fills its place, the query runs whole. A row that the
 * last result's snapshot saw already is merged once (by key). A set whose last result came from a
 * snapshot that may have missed a commit is run whole by the refresh queue's settle pass, as any
 * set is; merging happens only in refreshes whose snapshot was seen to hold their commits.
 *
 * A `totalCount` is kept as the last count, less the changed rows it counted, plus those the rows'
 * statement counts. Which changed rows the last result counted is known for its edges (it did),
 * for keys within its page that it does not list (it did not: the page lists every counted row
 * up to its last key), and for rows created by a transaction that a snapshot taken after the last
 * result does not see (it did not: the check after each refresh answers its snapshot,
 * NewestBase.upper); for any other changed row, or a nested change, the set runs whole
 * (mergeable() tells before its run).
 */
import { Kind, parse, print, type ArgumentNode, type ObjectValueNode, type ValueNode } from 'graphql';
import { tableKey, type Commit } from './change-feed.js';
import type { AppendShape, SetScope } from './read-set.js';
import { operationOf } from './live-request.js';
import { meets, normalizeValue, rowsOf } from './relevance.js';
import { sees, type Snapshot } from './snapshot-check.js';

/** More changed rows than this (of the tables a set reads) in one refresh: the query runs whole. */
export const MAX_MERGED_KEYS = 1_000;

/** A last result the next changes can be merged into: its parsed JSON, its edges and count. */
export interface NewestBase {
  doc: Record<string, unknown>;
  edges: Record<string, unknown>[];
  /** Its totalCount (AppendShape countKey). */
  count?: number;
  /**
   * A snapshot taken after the result's statement (the check after its refresh): a transaction
   * it does not see, the result's snapshot did not see either.
   */
  upper?: Snapshot;
}

/** The root rows a refresh's commits changed (changedKeys). */
export interface ChangedKeys {
  keys: string[];
  /** Keys whose first change was the INSERT of a root row, with its transaction's id. */
  created: Map<string, number>;
  /** Some key is there for a nested row's change. */
  nested: boolean;
}

/**
 * The keys of the root rows that `commits` changed: the rows of the shape's table they inserted,
 * updated (old and new key) or deleted, and the root rows whose nested rows (AppendShape
 * children) they changed (old and new foreign key), when those are all the changes they made to
 * tables the set reads and each key is known; undefined otherwise (the query runs whole). A root
 * row whose logged images all fail the set's filter equalities (relevance.ts) is left out: it is
 * in no result of the set, before or after.
 */
export function changedKeys(scope: SetScope, commits: readonly Commit[]): ChangedKeys | undefined {
  const shape = scope.append;
  if (!shape || scope.any) return undefined;
  const out: ChangedKeys = { keys: [], created: new Map(), nested: false };
  const keys = new Set<string>();
  let read = 0;
  const keyOf = (raw: string | null | undefined) => (raw == null ? undefined : normalizeValue('int', raw));
  const add = (raw: string | null | undefined): boolean => {
    const key = keyOf(raw);
    if (key !== undefined) keys.add(key);
    return key !== undefined;
  };
  for (const c of commits) {
    if (c.anyTable || !c.changes) {
      if (c.anyTable || [...c.tables].some((t) => scope.tables.has(t))) return undefined;
      continue;
    }
    for (const ch of c.changes) {
      const table = tableKey(ch.schema, ch.table);
      if (!scope.tables.has(table)) continue;
      // Many rows: the query runs whole (and this stays cheap for every set of a refresh).
      if (++read > MAX_MERGED_KEYS) return undefined;
      const own = table === shape.table;
      // The root's key, or a nested row's foreign key to it.
      const column = own ? (shape.rootShared ? undefined : shape.column) : shape.children.get(table);
      if (column === undefined) return undefined;
      // A root row whose every image fails the set's filter equalities is no row of its result.
      if (own && scope.insertFilter?.table === table) {
        const images = rowsOf(ch);
        if (images && !images.some((row) => meets(scope, row))) continue;
      }
      if (!own) out.nested = true;
      if (ch.op === 'INSERT') {
        const key = keyOf(ch.new?.[column]);
        if (key === undefined) return undefined;
        if (own && !keys.has(key) && c.xid !== undefined) out.created.set(key, c.xid);
        keys.add(key);
        continue;
      }
      // An UPDATE logs its old row only when the key changed (or with REPLICA IDENTITY FULL): a
      // root row's key is then the new one; a nested row's old foreign key must be logged.
      if (ch.op === 'UPDATE' && add(ch.new?.[column]) && (own && !ch.old ? true : add(ch.old?.[column])))
        continue;
      if (ch.op === 'DELETE' && add(ch.old?.[column])) continue;
      return undefined;
    }
  }
  out.keys = [...keys];
  return out;
}

/** The name of the keys' variable: `strataKeys`, or with a number when the document uses that. */
function freshVariable(used: Set<string>): string {
  let name = 'strataKeys';
  for (let i = 1; used.has(name); i++) name = `strataKeys${i}`;
  return name;
}

/** A live query's document for changed rows only, and the name of its keys' variable. */
export interface RowsDocument {
  query: string;
  variable: string;
}

/**
 * The document that answers the rows of `keys` only: the operation's one root field's `filter`
 * becomes `{and: [<filter>, {<key>: {in: $keys}}]}` (or the latter alone). Undefined when the
 * document is not of that form (the root field in a fragment, a filter given as a variable).
 */
export function rowsDocument(
  query: string,
  operationName: string | null,
  shape: AppendShape,
): RowsDocument | undefined {
  let doc: ReturnType<typeof parse>;
  try {
    doc = parse(query, { noLocation: true });
  } catch {
    return undefined;
  }
  const op = operationOf(doc, operationName);
  if (!op) return undefined;
  const fields = op.selectionSet.selections.filter(
    (s) => s.kind !== Kind.FIELD || s.name.value !== '__typename',
  );
  const root = fields.length === 1 ? fields[0] : undefined;
  if (root?.kind !== Kind.FIELD || (root.alias?.value ?? root.name.value) !== shape.rootKey) return undefined;
  const filter = root.arguments?.find((a) => a.name.value === 'filter');
  if (filter && filter.value.kind !== Kind.OBJECT) return undefined;
  const used = new Set((op.variableDefinitions ?? []).map((v) => v.variable.name.value));
  const variable = freshVariable(used);
  const name = (value: string) => ({ kind: Kind.NAME, value }) as const;
  const keys: ObjectValueNode = {
    kind: Kind.OBJECT,
    fields: [
      {
        kind: Kind.OBJECT_FIELD,
        name: name(shape.filterField),
        value: {
          kind: Kind.OBJECT,
          fields: [
            {
              kind: Kind.OBJECT_FIELD,
              name: name('in'),
              value: { kind: Kind.VARIABLE, name: name(variable) },
            },
          ],
        },
      },
    ],
  };
  const value: ValueNode = filter
    ? {
        kind: Kind.OBJECT,
        fields: [
          {
            kind: Kind.OBJECT_FIELD,
            name: name('and'),
            value: { kind: Kind.LIST, values: [filter.value, keys] },
          },
        ],
      }
    : keys;
  const argument: ArgumentNode = { kind: Kind.ARGUMENT, name: name('filter'), value };
  const args = [...(root.arguments ?? []).filter((a) => a !== filter), argument];
  const rewritten = {
    ...doc,
    definitions: doc.definitions.map((d) =>
      d !== op
        ? d
        : {
            ...op,
            variableDefinitions: [
              ...(op.variableDefinitions ?? []),
              {
                kind: Kind.VARIABLE_DEFINITION,
                variable: { kind: Kind.VARIABLE, name: name(variable) },
                type: {
                  kind: Kind.LIST_TYPE,
                  type: {
                    kind: Kind.NON_NULL_TYPE,
                    type: { kind: Kind.NAMED_TYPE, name: name(shape.scalar) },
                  },
                },
              },
            ],
            selectionSet: {
              ...op.selectionSet,
              selections: op.selectionSet.selections.map((s) =>
                s === root ? { ...root, arguments: args } : s,
              ),
            },
          },
    ),
  };
  return { query: print(rewritten as typeof doc), variable };
}

/** The keys as the variable's values: numbers for Int, strings for BigInt. */
export function keyValues(shape: AppendShape, keys: readonly string[]): (number | string)[] {
  return shape.scalar === 'Int' ? keys.map(Number) : [...keys];
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A result's edges (and count), when it is a result of the shape without errors. */
function pageOf(
  shape: AppendShape,
  doc: unknown,
): { edges: Record<string, unknown>[]; count?: number } | undefined {
  if (!isObject(doc) || doc.errors !== undefined || !isObject(doc.data)) return undefined;
  const conn = doc.data[shape.rootKey];
  const edges = isObject(conn) ? conn[shape.edgesKey] : undefined;
  if (!Array.isArray(edges)) return undefined;
  for (const e of edges) if (keyOf(shape, e) === undefined) return undefined;
  if (shape.countKey === undefined) return { edges };
  const count = (conn as Record<string, unknown>)[shape.countKey];
  return typeof count === 'number' && Number.isSafeInteger(count) && count >= 0
    ? { edges, count }
    : undefined;
}

function keyOf(shape: AppendShape, edge: unknown): bigint | undefined {
  const node = isObject(edge) ? edge[shape.nodeKey] : undefined;
  const key = isObject(node) ? node[shape.keyKey] : undefined;
  if (typeof key === 'number' && Number.isSafeInteger(key)) return BigInt(key);
  if (typeof key === 'string' && /^-?\d{1,20}$/.test(key)) return BigInt(key);
  return undefined;
}

/**
 * A whole run's result as the base of later merges, and its text as sent (re-serialized, so a
 * merged result and a whole one with the same content have the same text); no base when it is
 * not a result of the shape (an error).
 */
export function wholeResult(shape: AppendShape, text: string): { text: string; base?: NewestBase } {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return { text };
  }
  const page = pageOf(shape, doc);
  if (!page) return { text };
  return { text: JSON.stringify(doc), base: { doc: doc as Record<string, unknown>, ...page } };
}

/**
 * How many of the changed rows the base counted: those among its edges; not a key within its page
 * (up to its last key, or any key when the page is not full) that it does not list, nor a row
 * created by a transaction the snapshot after the base does not see; any other row (past a full
 * page, of older standing), or a nested change, cannot be told (undefined).
 */
function countedBefore(
  shape: AppendShape,
  base: NewestBase,
  changed: ChangedKeys,
  inBase: Set<bigint>,
): number | undefined {
  if (changed.nested) return undefined;
  // The page lists every row its snapshot counted up to its last key (all of them when it is not
  // full): a key there that it does not list was not counted.
  const order = shape.desc ? -1n : 1n;
  const last = base.edges.length ? (keyOf(shape, base.edges[base.edges.length - 1]) as bigint) : undefined;
  const full = base.edges.length >= shape.limit;
  const listed = (k: bigint) => !full || (last !== undefined && k * order <= last * order);
  let counted = 0;
  for (const k of changed.keys) {
    const key = BigInt(k);
    if (inBase.has(key)) counted++;
    else if (!listed(key)) {
      const xid = changed.created.get(k);
      if (xid === undefined || !base.upper || sees(base.upper, xid)) return undefined;
    }
  }
  return counted;
}

/**
 * Whether the changed rows can be merged into the base as far as can be told before they are
 * read: a count must be known (countedBefore). (A full page a row left is known only after.)
 */
export function mergeable(shape: AppendShape, base: NewestBase, changed: ChangedKeys): boolean {
  if (shape.countKey === undefined) return true;
  const inBase = new Set(base.edges.map((e) => keyOf(shape, e) as bigint));
  return countedBefore(shape, base, changed, inBase) !== undefined;
}

/**
 * The merge of the changed rows' result into the base: the base less the changed keys, plus the
 * rows the result has of them, in the shape's order. When the base held `limit` rows, the rows
 * after its last one are not known: only the merged rows up to that key count, and if fewer than
 * `limit` remain there the result is not known (undefined: the query runs whole). A count is the
 * base's, less the changed rows it counted, plus the rows' result's: a changed row the base
 * counted is one of its edges; one it did not count was created by a transaction its snapshot
 * did not see (`upper` does not see it); any other changed row (or a nested one) leaves the count
 * unknown. Undefined too when the rows' result is not one of the shape (an error).
 */
export function mergedResult(
  shape: AppendShape,
  base: NewestBase,
  changed: ChangedKeys,
  rowsText: string,
): { text: string; base: NewestBase } | undefined {
  let rows: ReturnType<typeof pageOf>;
  try {
    rows = pageOf(shape, JSON.parse(rowsText));
  } catch {
    return undefined;
  }
  if (!rows) return undefined;
  const keys = new Set(changed.keys.map((k) => BigInt(k)));
  const byKey = new Map<bigint, Record<string, unknown>>();
  const inBase = new Set<bigint>();
  for (const e of base.edges) {
    const k = keyOf(shape, e) as bigint;
    inBase.add(k);
    if (!keys.has(k)) byKey.set(k, e);
  }
  let count: number | undefined;
  if (shape.countKey !== undefined) {
    const counted = countedBefore(shape, base, changed, inBase);
    if (counted === undefined || base.count === undefined || rows.count === undefined) return undefined;
    count = base.count - counted + rows.count;
  }
  for (const e of rows.edges) byKey.set(keyOf(shape, e) as bigint, e);
  const order = shape.desc ? -1n : 1n;
  let sorted = [...byKey].sort(([a], [b]) => (a < b ? -Number(order) : a > b ? Number(order) : 0));
  if (base.edges.length >= shape.limit && shape.limit > 0) {
    const last = (keyOf(shape, base.edges[base.edges.length - 1]) as bigint) * order;
    sorted = sorted.filter(([k]) => k * order <= last);
    if (sorted.length < shape.limit) return undefined;
  }
  const edges = sorted.slice(0, shape.limit).map(([, e]) => e);
  const data = base.doc.data as Record<string, unknown>;
  const conn = { ...(data[shape.rootKey] as Record<string, unknown>), [shape.edgesKey]: edges };
  if (shape.countKey !== undefined) conn[shape.countKey] = count;
  const doc = { ...base.doc, data: { ...data, [shape.rootKey]: conn } };
  return { text: JSON.stringify(doc), base: { doc, edges, ...(count !== undefined ? { count } : {}) } };
}
