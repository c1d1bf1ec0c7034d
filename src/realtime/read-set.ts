/**
 * A live query's scope, from its plan (engine.ts compile) and the policy facts of its role
 * (policy-facts.ts): the tables its statement reads — each table the plan names, its partitions
 * and inheritance children, and what its SELECT policies read, transitively — the JWT claims those
 * policies read (the group key takes only these), and, for a query whose one root field is a
 * collection (or a ByPk) on table T, the equalities of its top-level filter that an inserted row
 * of T must meet to change the result (relevance.ts). Anything whose reads are unknown — a view,
 * a function or computed field in the query, a policy calling a user function — makes the scope
 * `any`: re-run on every commit, keyed by every claim.
 */
import type { CompiledRequest } from '../graphql/engine.js';
import type { Column } from '../graphql/introspect/model.js';
import type {
  ConnectionPlan,
  FilterPlan,
  NodeFieldPlan,
  NodePlan,
  Param,
} from '../graphql/plan/plan-types.js';
import { tableKey } from './change-feed.js';
import { unionClaims, type ClaimsRead } from './claims-read.js';
import { EXACT_COLUMN_TYPES, type RelationFacts, type ScopeFacts } from './policy-facts.js';
import { normalizeValue, parseArrayLiteral, type ExactKind } from './relevance.js';

/** An inserted row of the filter's table matters only when its column's value is one of `values`. */
export interface Constraint {
  column: string;
  kind: ExactKind;
  /** Normalized (normalizeValue). */
  values: Set<string>;
}

export interface SetScope {
  /** The facts' schema version (undefined: no facts; the scope is then `any` with every claim). */
  version: number | undefined;
  /** Reads what cannot be told: re-run after every commit. */
  any: boolean;
  /** tableKey of every table read. */
  tables: Set<string>;
  claims: ClaimsRead;
  /** Inserts into `table` meeting none of the constraints cannot change the result. */
  insertFilter?: { table: string; constraints: Constraint[] };
  /** Per table read (tableKey), how to ask whether a row of it is visible (visibility-probe.ts). */
  probes?: Map<string, ProbeTarget>;
  /** Its result is the first rows of a table by its key: inserts can be merged in (newest-rows.ts). */
  append?: AppendShape;
}

/**
 * A live query whose one root field is the first `limit` rows of `table` in the order of its
 * integer primary key (`column`), filtered, with only `edges` selected, every policy steady.
 * A change to a row of the table (when nothing else reads the table) or to a row of a nested
 * connection's table attributed to a root row by its foreign key (`children`) then changes the
 * result only in that root row: the rows of the changed keys, fetched under the same filter and
 * policies, merged with the last result by key, are the result (newest-rows.ts).
 */
export interface AppendShape {
  table: string;
  column: string;
  desc: boolean;
  limit: number;
  /** The GraphQL filter field of the key column, and the GraphQL type of its values. */
  filterField: string;
  scalar: 'Int' | 'BigInt';
  /** Response keys: the root field, its `edges`, an edge's `node`, the key's field in the node. */
  rootKey: string;
  edgesKey: string;
  nodeKey: string;
  keyKey: string;
  /** The table is read elsewhere too (a policy, a nested selection): a change to it runs whole. */
  rootShared: boolean;
  /**
   * Tables of nested connections (tableKey) whose rows belong to the root row their column (a
   * foreign key to the root's key) names, read nowhere else: a change there is a change of that
   * root row (its nested rows are read again with it).
   */
  children: Map<string, string>;
  /**
   * The response key of the connection's totalCount, when selected: kept by counting which
   * changed rows the last result counted and which the changed rows' result counts.
   */
  countKey?: string;
}

/**
 * A table whose inserted rows can be tested for visibility to a principal: a plain table (not a
 * partition or inheritance child: those are read through their parent's policies) with row-level
 * security that applies to the role, every SELECT policy understood, and a primary key of exactly
 * compared columns. A row it does not show the principal is no row to any statement of theirs:
 * every read of the table in it, also inside another table's policy, passes the same policies.
 */
export interface ProbeTarget {
  table: string;
  schema: string;
  name: string;
  key: { column: string; type: number }[];
  /** The claims its visibility depends on (its policies', transitively). */
  claims: Set<string>;
  /** The columns its own policies read (PolicyFacts.ownColumns, over all of them). */
  policyColumns: Set<string> | 'all';
  /**
   * Set when a row's visibility is a function of its policy columns' values, the claims and the
   * tables listed (every policy on the way steady, none reading the table's other rows, no
   * inheritance children, known columns): a probe's answer then holds for any row of the same
   * values until one of those tables changes (visibility-probe.ts ProbeAnswers).
   */
  steady?: { columns: string[]; dependsOn: Set<string> };
}

/** The scope when nothing is known: every commit, every claim. */
export function opaqueScope(version?: number): SetScope {
  return { version, any: true, tables: new Set(), claims: 'all' };
}

class Walk {
  any = false;
  tables = new Set<string>();
  /** The relations read directly (not as a descendant): the candidates for a probe. */
  readonly read = new Set<number>();
  claims: ClaimsRead = new Set();
  /** Every policy met was steady (PolicyFacts.steady). */
  steady = true;
  private readonly visited = new Set<number>();
  constructor(private readonly facts: ScopeFacts) {}

  unknown(): void {
    this.any = true;
    this.claims = 'all';
  }

  /** A table's rows: itself, its descendants, and what its policies read. */
  table(oid: number): void {
    if (this.visited.has(oid)) return;
    this.visited.add(oid);
    const rel = this.facts.relations.get(oid);
    if (!rel || (rel.kind !== 'r' && rel.kind !== 'p')) {
      this.unknown();
      return;
    }
    this.tables.add(tableKey(rel.schema, rel.name));
    this.read.add(oid);
    for (const d of rel.descendants) {
      const child = this.facts.relations.get(d);
      if (child) this.tables.add(tableKey(child.schema, child.name));
      else this.unknown();
    }
    this.policies(rel);
  }

  policies(rel: RelationFacts): void {
    if (!rel.rls || this.facts.bypassRls) return;
    for (const p of this.facts.policies.get(rel.oid) ?? []) {
      if (p.opaque) {
        this.unknown();
        return;
      }
      this.claims = unionClaims(this.claims, p.claims);
      if (!p.steady) this.steady = false;
      for (const t of p.tables) this.table(t);
    }
  }

  /** A connection: its table (unless `withTable` is false), filter, sort keys and selections. */
  connection(c: ConnectionPlan, withTable = true): void {
    if (withTable) this.table(c.table.oid);
    this.filter(c.filter);
    for (const k of c.keys) for (const rel of k.via) this.table(rel.target.oid);
    for (const f of c.fields)
      if (f.field.kind === 'edges')
        for (const e of f.field.fields) if (e.field.kind === 'node') this.nodeFields(e.field.node);
  }

  /** A row's selections (its own table is read by whoever reads the row). */
  nodeFields(n: NodePlan): void {
    for (const { field } of n.fields) {
      if (field.kind === 'computed') this.unknown();
      else if (field.kind === 'toMany') this.connection(field.connection);
      else if (field.kind === 'toOne') {
        this.table(field.rel.target.oid);
        this.nodeFields(field.node);
      }
    }
  }

  filter(f: FilterPlan): void {
    if (f.kind === 'all' || f.kind === 'group') for (const p of f.parts) this.filter(p);
    else if (f.kind === 'not') this.filter(f.inner);
    else if (f.kind === 'related') {
      this.table(f.rel.target.oid);
      this.filter(f.inner);
    }
  }
}

/** The casts a constraint's parameter may carry, per kind (a typmod, e.g. varchar(3), may truncate). */
const CASTS: Record<ExactKind, string[]> = {
  int: ['smallint', 'integer', 'bigint', 'int2', 'int4', 'int8'],
  text: ['text', 'character varying', 'varchar'],
  uuid: ['uuid'],
  bool: ['boolean', 'bool'],
};

/** The equality `column = any(texts)` as a constraint, when it is exact; else none. */
function constraintOf(
  rel: RelationFacts,
  column: Column,
  param: Param,
  list: boolean,
): Constraint | undefined {
  const facts = rel.columns.get(column.sqlName);
  const kind = facts ? EXACT_COLUMN_TYPES[facts.type]?.kind : undefined;
  if (!facts || !kind || (kind === 'text' && !facts.deterministic)) return undefined;
  if (list !== param.cast.endsWith('[]')) return undefined;
  // The engine writes casts as quoted, qualified names: "pg_catalog"."int4".
  const cast = (list ? param.cast.slice(0, -2) : param.cast)
    .replace(/"/g, '')
    .replace(/^pg_catalog\./, '')
    .toLowerCase();
  if (!CASTS[kind].includes(cast)) return undefined;
  if (param.text === null) return undefined;
  const texts = list ? parseArrayLiteral(param.text) : [param.text];
  if (!texts) return undefined;
  const values = new Set<string>();
  for (const t of texts) {
    // `= any` never matches a NULL element.
    if (t === null) continue;
    const v = normalizeValue(kind, t);
    if (v === undefined) return undefined;
    values.add(v);
  }
  return { column: column.sqlName, kind, values };
}

/** The top-level filter's exact equalities (an AND of them; anything else constrains nothing here). */
function constraintsOf(rel: RelationFacts, f: FilterPlan, out: Constraint[]): void {
  if (f.kind === 'all' || (f.kind === 'group' && f.op === 'and'))
    for (const p of f.parts) constraintsOf(rel, p, out);
  else if (f.kind === 'compare' && f.op === 'eq' && !f.columnAsText) {
    const c = constraintOf(rel, f.column, f.value, false);
    if (c) out.push(c);
  } else if (f.kind === 'in') {
    const c = constraintOf(rel, f.column, f.value, true);
    if (c) out.push(c);
  } else if (f.kind === 'pk')
    f.match.columns.forEach((col, i) => {
      const c = constraintOf(rel, col, f.match.values[i] as Param, false);
      if (c) out.push(c);
    });
}

/**
 * The insert filter of a root read of `oid` (its rows under `filter`): only when nothing else in
 * the query or in the policies reads that table (a nested selection or a policy could see an
 * inserted row that the filter leaves out).
 */
function insertFilterOf(
  facts: ScopeFacts,
  oid: number,
  filter: FilterPlan,
  rest: (w: Walk) => void,
): SetScope['insertFilter'] {
  const rel = facts.relations.get(oid);
  if (rel?.kind !== 'r') return undefined;
  const key = tableKey(rel.schema, rel.name);
  const others = new Walk(facts);
  rest(others);
  others.policies(rel);
  if (others.any || others.tables.has(key)) return undefined;
  const constraints: Constraint[] = [];
  constraintsOf(rel, filter, constraints);
  return constraints.length ? { table: key, constraints } : undefined;
}

/** The probe of a table's rows, when its visibility can be asked (ProbeTarget). */
export function probeTargetOf(facts: ScopeFacts, oid: number): ProbeTarget | undefined {
  const rel = facts.relations.get(oid);
  if (rel?.kind !== 'r' || rel.isChild || !rel.rls || facts.bypassRls) return undefined;
  if (!rel.primaryKey.length) return undefined;
  const key: ProbeTarget['key'] = [];
  for (const column of rel.primaryKey) {
    const c = rel.columns.get(column);
    if (!c) return undefined;
    key.push({ column, type: c.type });
  }
  const w = new Walk(facts);
  w.table(oid);
  if (w.any || w.claims === 'all') return undefined;
  let policyColumns: ProbeTarget['policyColumns'] = new Set();
  for (const p of facts.policies.get(oid) ?? []) {
    if (p.ownColumns === 'all') policyColumns = 'all';
    else if (policyColumns !== 'all') for (const c of p.ownColumns) policyColumns.add(c);
  }
  const table = tableKey(rel.schema, rel.name);
  const target: ProbeTarget = {
    table,
    schema: rel.schema,
    name: rel.name,
    key,
    claims: w.claims,
    policyColumns,
  };
  // What the policies read, apart from the row itself: the answer is kept only while it stays.
  const reads = new Walk(facts);
  reads.policies(rel);
  if (
    policyColumns !== 'all' &&
    reads.steady &&
    !reads.any &&
    !rel.descendants.length &&
    !reads.tables.has(table) &&
    [...policyColumns].every((c) => rel.columns.has(c))
  )
    target.steady = { columns: [...policyColumns].sort(), dependsOn: reads.tables };
  return target;
}

/** The scope of a compiled live query under `facts`. */
export function scopeOf(compiled: CompiledRequest, facts: ScopeFacts): SetScope {
  const w = new Walk(facts);
  const plan = compiled.plan;
  let insertFilter: SetScope['insertFilter'];
  // A response without fields (a request-level error) is the same whatever the rows.
  if (plan.kind === 'fields') {
    if (plan.operation !== 'query') w.unknown();
    const roots = plan.fields.filter((f) => f.kind === 'root');
    for (const f of roots) {
      const r = f.plan;
      if (r.kind === 'collection') w.connection(r.connection);
      else if (r.kind === 'byPk' || r.kind === 'node') {
        w.table(r.table.oid);
        w.nodeFields(r.node);
      } else if (r.kind !== 'nodeNotFound') w.unknown();
    }
    const only = roots.length === 1 ? roots[0]?.plan : undefined;
    if (only?.kind === 'collection')
      insertFilter = insertFilterOf(facts, only.connection.table.oid, only.connection.filter, (o) =>
        o.connection(only.connection, false),
      );
    else if (only?.kind === 'byPk')
      insertFilter = insertFilterOf(facts, only.table.oid, { kind: 'pk', match: only.match }, (o) =>
        o.nodeFields(only.node),
      );
  }
  if (w.any) return opaqueScope(facts.version);
  const scope: SetScope = { version: facts.version, any: false, tables: w.tables, claims: w.claims };
  if (insertFilter) scope.insertFilter = insertFilter;
  const append = plan.kind === 'fields' && w.steady ? appendShapeOf(facts, plan) : undefined;
  if (append) scope.append = append;
  const probes = new Map<string, ProbeTarget>();
  for (const oid of w.read) {
    const target = probeTargetOf(facts, oid);
    if (target) probes.set(target.table, target);
  }
  if (probes.size) scope.probes = probes;
  return scope;
}

const INTEGER_KEYS = new Set(['int2', 'int4', 'int8']);

/** The AppendShape of a planned query, when it has one. */
function appendShapeOf(
  facts: ScopeFacts,
  plan: Extract<CompiledRequest['plan'], { kind: 'fields' }>,
): AppendShape | undefined {
  if (plan.operation !== 'query' || plan.errors.length) return undefined;
  const roots = plan.fields.filter((f) => f.kind !== 'value');
  const root = roots.length === 1 ? roots[0] : undefined;
  if (root?.kind !== 'root' || root.plan.kind !== 'collection') return undefined;
  const c = root.plan.connection;
  const rel = facts.relations.get(c.table.oid);
  if (rel?.kind !== 'r' || rel.descendants.length || c.table.primaryKey.length !== 1) return undefined;
  const keyName = c.table.primaryKey[0];
  const column = c.table.columns.find((col) => col.sqlName === keyName);
  const first = c.keys[0];
  if (!column || !INTEGER_KEYS.has(column.type.baseName) || column.type.isArray) return undefined;
  if (column.type.scalar !== 'Int' && column.type.scalar !== 'BigInt') return undefined;
  if (!first || first.via.length || first.column.sqlName !== keyName) return undefined;
  if (c.backward || c.offset || c.cursor) return undefined;
  // Only edges (once), their node (once) with the key, totalCount (once), and constants.
  let edgesKey: string | undefined;
  let countKey: string | undefined;
  let node: { alias: string; plan: NodePlan } | undefined;
  for (const f of c.fields) {
    if (f.field.kind === 'typename') continue;
    if (f.field.kind === 'totalCount' && countKey === undefined) {
      countKey = f.alias;
      continue;
    }
    if (f.field.kind !== 'edges' || edgesKey !== undefined) return undefined;
    edgesKey = f.alias;
    for (const e of f.field.fields) {
      if (e.field.kind !== 'node') continue;
      if (node !== undefined) return undefined;
      node = { alias: e.alias, plan: e.field.node };
    }
  }
  const keyKey = node?.plan.fields.find(
    (n) => n.field.kind === 'column' && n.field.column.sqlName === keyName,
  )?.alias;
  if (edgesKey === undefined || node === undefined || keyKey === undefined) return undefined;
  const table = tableKey(rel.schema, rel.name);
  const others = new Walk(facts);
  others.connection(c, false);
  others.policies(rel);
  if (others.any || !others.steady) return undefined;
  const children = new Map<string, string>();
  for (const f of node.plan.fields) {
    const child = f.field.kind === 'toMany' ? childOf(facts, c, rel, node.plan, f.field) : undefined;
    if (child) children.set(child.table, child.column);
  }
  return {
    table,
    column: keyName,
    desc: first.desc,
    limit: c.limit,
    filterField: column.fieldName,
    scalar: column.type.scalar,
    rootKey: root.alias,
    edgesKey,
    nodeKey: node.alias,
    keyKey,
    rootShared: others.tables.has(table),
    children,
    ...(countKey !== undefined ? { countKey } : {}),
  };
}

/**
 * A nested connection of the root's rows whose table's rows are attributed to a root row by a
 * foreign key to the root's key (one column), when nothing else in the query, its policies or the
 * nested connection's own reads reads that table: its table and the foreign key's column.
 */
function childOf(
  facts: ScopeFacts,
  root: ConnectionPlan,
  rootRel: RelationFacts,
  node: NodePlan,
  field: Extract<NodeFieldPlan, { kind: 'toMany' }>,
): { table: string; column: string } | undefined {
  const { rel, connection } = field;
  const [local, target] = [rel.localColumns, rel.targetColumns];
  if (local.length !== 1 || target.length !== 1 || local[0] !== root.table.primaryKey[0]) return undefined;
  const childRel = facts.relations.get(rel.target.oid);
  if (childRel?.kind !== 'r' || childRel.descendants.length) return undefined;
  const rest = new Walk(facts);
  rest.filter(root.filter);
  for (const k of root.keys) for (const via of k.via) rest.table(via.target.oid);
  rest.policies(rootRel);
  rest.nodeFields({ ...node, fields: node.fields.filter((f) => f.field !== field) });
  rest.connection(connection, false);
  rest.policies(childRel);
  const table = tableKey(childRel.schema, childRel.name);
  if (rest.any || rest.tables.has(table)) return undefined;
  return { table, column: target[0] as string };
}
