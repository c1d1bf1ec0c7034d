/**
 * GraphQL type names that two entities would share. pg_graphql names a table's types after the
 * table alone (`pe.p` and `pr.p` are both `p`, with `pFilter`, `pConnection`, …), so two exposed
 * schemas with a table of the same name give a schema with two types of one name, which no
 * GraphQL tool accepts (graphql-js: `Schema must contain uniquely named types but contains
 * multiple types named "p"`).
 *
 * Strata's rule: the entity whose schema comes first on the search path keeps the names (as SQL
 * resolves an unqualified name); one whose names are already taken is left out of the GraphQL
 * schema, and a notice names both and the `@graphql({"name": …})` directive that fixes it.
 * Enums are decided among themselves first, then tables against the enums and each other.
 */
import {
  aggregateResultType,
  aggregateType,
  connectionType,
  constraintType,
  edgeType,
  filterType,
  insertInputType,
  listFilterType,
  mutationResponseType,
  onConflictType,
  orderByType,
  toManyFilterType,
  updateColumnType,
  updateInputType,
} from './naming.js';
import { FILTER_SCALARS, LIST_FILTER_SCALARS } from './rules.js';

/** The types every schema has (schema/shared-types.ts, the root types): no entity may take their names. */
export const BUILT_IN = new Set<string>([
  'Query',
  'Mutation',
  'Int',
  'Float',
  'String',
  'Boolean',
  'ID',
  'BigInt',
  'BigFloat',
  'UUID',
  'Date',
  'Time',
  'Datetime',
  'JSON',
  'Opaque',
  'Cursor',
  'FilterIs',
  'OrderByDirection',
  'PageInfo',
  'Node',
  ...FILTER_SCALARS.map(filterType),
  ...LIST_FILTER_SCALARS.map(listFilterType),
]);

/** Every type name a table with base type name `n` may give the schema. */
export function tableTypeNames(n: string): string[] {
  return [
    n,
    edgeType(n),
    connectionType(n),
    filterType(n),
    orderByType(n),
    insertInputType(n),
    updateInputType(n),
    mutationResponseType(n, 'Insert'),
    mutationResponseType(n, 'Update'),
    mutationResponseType(n, 'Delete'),
    aggregateType(n),
    aggregateResultType(n, 'Sum'),
    aggregateResultType(n, 'Avg'),
    aggregateResultType(n, 'Min'),
    aggregateResultType(n, 'Max'),
    toManyFilterType(n),
    constraintType(n),
    updateColumnType(n),
    onConflictType(n),
  ];
}

/** Every type name an enum with GraphQL name `n` gives the schema. */
export function enumTypeNames(n: string): string[] {
  return [n, filterType(n)];
}

export interface NamedEntity {
  kind: 'table' | 'enum';
  schema: string;
  sqlName: string;
  typeName: string;
}

/**
 * Claims type names for `entities` in order (the caller orders them by search path): returns
 * whether `e` may keep its names, and tells `notices` when it may not.
 */
export class TypeNameClaims {
  private readonly owners = new Map<string, NamedEntity>();
  constructor(private readonly notices: string[]) {}

  claim(e: NamedEntity): boolean {
    const names = e.kind === 'table' ? tableTypeNames(e.typeName) : enumTypeNames(e.typeName);
    for (const name of names) {
      if (BUILT_IN.has(name)) {
        this.notices.push(
          `${what(e)} is left out of the GraphQL schema: the type name "${name}" is one of the schema's own types; rename it, e.g. ${fixOf(e)}`,
        );
        return false;
      }
      const other = this.owners.get(name);
      if (!other) continue;
      this.notices.push(
        `${what(e)} is left out of the GraphQL schema: the type name "${name}" is already ${other.typeName === name ? 'the name' : 'a type name'} of ${what(other)}, whose schema comes first on the search path; rename one, e.g. ${fixOf(e)}`,
      );
      return false;
    }
    for (const name of names) this.owners.set(name, e);
    return true;
  }
}

const what = (x: NamedEntity) => `${x.kind} ${x.schema}.${x.sqlName} (GraphQL ${x.typeName})`;

/** The comment that renames `e` (written only for a notice: most entities never need one). */
function fixOf(e: NamedEntity): string {
  const q = (s: string) => `"${s.replace(/"/g, '""')}"`;
  const suggestion = `${e.schema.replace(/[^_0-9A-Za-z]/g, '_')}_${e.typeName}`.replace(/^(?=[0-9])/, '_');
  return `comment on ${e.kind === 'table' ? 'table' : 'type'} ${q(e.schema)}.${q(e.sqlName)} is '@graphql({"name": "${suggestion}"})'`;
}
