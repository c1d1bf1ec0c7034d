/**
 * Strata `partitioned_tables` (opt-in per schema). pg_graphql reflects each partition as a table
 * and leaves the partitioned parent out; with the switch on for the parent's schema, the parent
 * is one table (its primary key pages and identifies rows across partitions, inserts route to
 * the right partition) and every partition under it is left out. The parent's relationships are
 * the foreign keys declared on it, and those every one of its leaf partitions has (declared on
 * each, or inherited), matched by column names.
 */
import type { SchemaInfo, Table } from './model.js';

// biome-ignore lint/suspicious/noExplicitAny: the catalog query's JSON rows, as load.ts reads them
type Raw = any;

/** Whether a relation of the catalog query is reflected (schema switches decide for partitions). */
export function reflectedRelations(
  rels: Raw[],
  schemaNamed: (name: string) => SchemaInfo,
): (r: Raw) => boolean {
  const parents = new Set<number>();
  for (const r of rels)
    if (r.kind === 'p' && schemaNamed(r.schema).strata.partitionedTables) parents.add(r.oid as number);
  return (r) => {
    // A partition (or sub-partitioned table) under a reflected parent is hidden behind it.
    if ((r.ancestors as number[] | null)?.some((a) => parents.has(a))) return false;
    return r.kind !== 'p' || parents.has(r.oid as number);
  };
}

/** A foreign key constraint of the catalog query; partition keys name their columns. */
export interface RawConstraint {
  name: string;
  type: string;
  rel: number;
  frel: number;
  cols?: number[];
  fcols?: number[];
  colNames?: string[];
  fcolNames?: string[];
  comment: string | null;
}

/**
 * The catalog's constraints, with the foreign keys every partition of a reflected parent has
 * added as the parent's own (in constraint-name order, as the query orders the others), unless
 * the parent declares the same key itself. Unchanged when no reflected table is partitioned.
 */
export function withPartitionKeys(raw: Raw, tables: Map<number, Table>): RawConstraint[] {
  const constraints = raw.constraints as RawConstraint[];
  const keys = (raw.partitionKeys as Raw[]).filter((k) => tables.get(k.rel)?.kind === 'p');
  if (!keys.length) return constraints;
  const columnNames = new Map<number, Map<number, string>>(
    (raw.rels as Raw[]).map((r) => [
      r.oid as number,
      new Map((r.columns as Raw[]).map((c) => [c.num as number, c.name as string])),
    ]),
  );
  const names = (rel: number, nums: number[] | undefined) =>
    (nums ?? []).map((n) => columnNames.get(rel)?.get(n) ?? '');
  const signature = (rel: number, frel: number, cols: string[], fcols: string[]) =>
    JSON.stringify([rel, frel, cols, fcols]);
  const declared = new Set(
    constraints
      .filter((c) => c.type === 'f' && tables.get(c.rel)?.kind === 'p')
      .map((c) => signature(c.rel, c.frel, names(c.rel, c.cols), names(c.frel, c.fcols))),
  );
  const out = [...constraints];
  for (const k of keys) {
    const colNames = k.cols as string[];
    const fcolNames = k.fcols as string[];
    if (declared.has(signature(k.rel, k.frel, colNames, fcolNames))) continue;
    const c: RawConstraint = {
      name: k.name,
      type: 'f',
      rel: k.rel,
      frel: k.frel,
      colNames,
      fcolNames,
      comment: k.comment,
    };
    const at = out.findIndex((x) => x.name > c.name);
    out.splice(at < 0 ? out.length : at, 0, c);
  }
  return out;
}
