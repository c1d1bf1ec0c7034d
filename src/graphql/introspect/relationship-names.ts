/**
 * Relationship field names that do not collide. pg_graphql 1.6.1 names a relationship from the
 * foreign key alone (graphql.rs graphql_foreign_key_field_name: `author_id` → `author`, else the
 * other table's type name, `…Collection` on the to-many side), so two foreign keys from one table
 * to another (`productassemblyid` and `componentid` both referencing `product`) give the node type
 * two fields named `product`: its introspection lists both (an invalid schema) and a query reads
 * the last one, so the other relationship cannot be reached.
 *
 * Strata's rule: a name only one relationship of a type would take is pg_graphql's. When several
 * would take the same name, a relationship named by a `local_name` / `foreign_name` directive
 * keeps it, and every other one is named `<name>By<Columns>` after the referencing table's key
 * columns (`productByProductassemblyid`, `billOfMaterialsCollectionByComponentid`), or, when that
 * is taken too (two keys over the same columns), `<name>Via<Constraint>`. Each renamed
 * relationship is named in a notice with the directive that would name it better.
 */
import { isValidGraphQLName, toPascal } from './naming.js';
import type { Relationship, Table } from './model.js';

export interface NamedRelationship {
  fk: { local: Table; localCols: string[]; target: Table; targetCols: string[]; constraint?: string };
  /** The table whose node type gets the field. */
  owner: Table;
  /** Named by `local_name` / `foreign_name`. */
  byDirective: boolean;
  rel: Relationship;
}

const q = (s: string) => `"${s.replace(/"/g, '""')}"`;

function describe(n: NamedRelationship): string {
  const { fk } = n;
  return `${fk.local.schema}.${fk.local.sqlName}(${fk.localCols.join(', ')}) → ${fk.target.schema}.${fk.target.sqlName}(${fk.targetCols.join(', ')})`;
}

function directiveHint(n: NamedRelationship): string {
  const key = n.rel.referencing ? 'foreign_name' : 'local_name';
  const { fk } = n;
  if (fk.constraint === undefined)
    return `give its entry in the foreign_keys directive of ${fk.local.schema}.${fk.local.sqlName} a "${key}"`;
  return `name it with comment on constraint ${q(fk.constraint)} on ${q(fk.local.schema)}.${q(fk.local.sqlName)} is '@graphql({"${key}": "…"})'`;
}

/** The relationships with their final names (some renamed, some left out), telling `notices` why. */
export function distinctRelationshipNames(all: NamedRelationship[], notices: string[]): NamedRelationship[] {
  const byOwner = new Map<Table, NamedRelationship[]>();
  for (const n of all) {
    const list = byOwner.get(n.owner);
    if (list) list.push(n);
    else byOwner.set(n.owner, [n]);
  }
  const out: NamedRelationship[] = [];
  for (const [owner, list] of byOwner) {
    const count = new Map<string, number>();
    for (const n of list) count.set(n.rel.fieldName, (count.get(n.rel.fieldName) ?? 0) + 1);
    const taken = new Set<string>();
    const renamed: NamedRelationship[] = [];
    for (const n of list) {
      const shared = (count.get(n.rel.fieldName) ?? 0) > 1;
      if (shared && !n.byDirective) renamed.push(n);
      else taken.add(n.rel.fieldName);
    }
    for (const [name, c] of count) {
      if (c < 2) continue;
      const directed = list.filter((n) => n.byDirective && n.rel.fieldName === name);
      if (directed.length > 1)
        notices.push(
          `${owner.typeName}.${name}: directives give ${directed.length} relationships this name (${directed.map(describe).join('; ')}); the last one answers, the others cannot be reached`,
        );
    }
    const renaming = new Set(renamed);
    /** Each final entry with the place of the one it came from (pg_graphql's order). */
    const place = new Map<NamedRelationship, number>();
    const kept: NamedRelationship[] = [];
    list.forEach((n, i) => {
      place.set(n, i);
      if (!renaming.has(n)) kept.push(n);
    });
    for (const n of renamed) {
      const base = n.rel.fieldName;
      const candidates = [`${base}By${n.fk.localCols.map(toPascal).join('And')}`];
      if (n.fk.constraint !== undefined) candidates.push(`${base}Via${toPascal(n.fk.constraint)}`);
      const name = candidates.find((c) => isValidGraphQLName(c) && !taken.has(c));
      const others = (count.get(base) ?? 0) - 1;
      if (name === undefined) {
        notices.push(
          `${owner.typeName}: the relationship ${describe(n)} is left out: its name "${base}" is shared with ${others} other relationship${others === 1 ? '' : 's'} and no distinct name could be made; ${directiveHint(n)}`,
        );
        continue;
      }
      taken.add(name);
      const entry = { ...n, rel: { ...n.rel, fieldName: name } };
      place.set(entry, place.get(n) ?? 0);
      kept.push(entry);
      notices.push(
        `${owner.typeName}.${name}: the relationship ${describe(n)} is named ${name}, not "${base}", which ${others} other relationship${others === 1 ? '' : 's'} of ${owner.typeName} would also take; ${directiveHint(n)}`,
      );
    }
    // In the order pg_graphql lists them (the renamed ones keep their places).
    kept.sort((a, b) => (place.get(a) ?? 0) - (place.get(b) ?? 0));
    out.push(...kept);
  }
  return out;
}
