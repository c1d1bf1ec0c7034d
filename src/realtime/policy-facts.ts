/**
 * What the catalog says about the tables a live query may read, for one role at one schema version
 * (read-set.ts turns it into a live query's read set and the claims its group is keyed by):
 * - per relation: kind, row-level security, inheritance children (partitions), the columns
 *   whose equality relevance.ts can judge exactly (their type, and their collation's determinism)
 *   and the primary key (visibility-probe.ts);
 * - per table, the SELECT policies that apply to the role (PUBLIC's and those of roles it has the
 *   privileges of, as PostgreSQL picks them), each with the tables it reads (pg_depend), the
 *   claims it reads (claims-read.ts, from pg_get_expr), or `opaque` when it depends on anything
 *   else: a function other than the platform's auth.uid()/role()/jwt()/email() (owned by a
 *   superuser, so not the tenant's), a view or other non-table relation, an operator, a domain,
 *   or a built-in that runs a query given as text (query_to_xml, ts_stat: claims-read.ts).
 *
 * Loaded through the project's pool as its login, an ordinary role (never a superuser session:
 * the policies are the tenant's), with `search_path = pg_catalog` so that pg_get_expr qualifies
 * every name outside pg_catalog. Nothing here runs tenant code: pg_get_expr only prints.
 */
import type pg from 'pg';
import { withPooledClient } from '../db/pooled-client.js';
import { quoteLiteral } from '../db/sql-text.js';
import { claimsRead, maskLiterals, runsQueryText, unionClaims, type ClaimsRead } from './claims-read.js';

/**
 * Column types whose equality relevance.ts compares exactly (bool, int2/4/8, text, varchar, uuid),
 * by type oid: the kind relevance.ts normalizes by, and the type a logged value is cast to
 * (visibility-probe.ts).
 */
export const EXACT_COLUMN_TYPES: Record<number, { kind: 'bool' | 'int' | 'text' | 'uuid'; cast: string }> = {
  16: { kind: 'bool', cast: 'pg_catalog.bool' },
  20: { kind: 'int', cast: 'pg_catalog.int8' },
  21: { kind: 'int', cast: 'pg_catalog.int2' },
  23: { kind: 'int', cast: 'pg_catalog.int4' },
  25: { kind: 'text', cast: 'pg_catalog.text' },
  1043: { kind: 'text', cast: 'pg_catalog.varchar' },
  2950: { kind: 'uuid', cast: 'pg_catalog.uuid' },
};

/** The oids of EXACT_COLUMN_TYPES, as an SQL list (they are integers). */
const EXACT_OIDS = Object.keys(EXACT_COLUMN_TYPES).map(Number).join(', ');

export interface RelationFacts {
  oid: number;
  schema: string;
  name: string;
  /** pg_class.relkind: r table, p partitioned table, v view, m materialized view, f foreign table. */
  kind: string;
  rls: boolean;
  /** Inheritance children and partitions, all levels down. */
  descendants: number[];
  /** Columns of EXACT_COLUMN_TYPES: their type oid and whether their collation is deterministic. */
  columns: Map<string, { type: number; deterministic: boolean }>;
  /** The primary key's columns, in key order (empty without one). */
  primaryKey: string[];
  /** An inheritance child or a partition of another relation. */
  isChild: boolean;
}

export interface PolicyFacts {
  /** Depends on something whose reads are unknown: any table, every claim. */
  opaque: boolean;
  claims: ClaimsRead;
  /** Tables (and partitioned tables) its expression reads. */
  tables: number[];
  /**
   * The columns of its own table its expression reads, of the row and (in a subquery) of other
   * rows: an UPDATE that changes none of them leaves every row's visibility as it was
   * (visibility-probe.ts). 'all' for a whole-row reference.
   */
  ownColumns: Set<string> | 'all';
  /**
   * Its answer for a row is a function of the row's values, the claims and the tables it reads:
   * no clock, setting other than through the claim readers, sequence or other non-immutable
   * function (STEADY_SQL). A probe's answer may then be kept (visibility-probe.ts).
   */
  steady: boolean;
}

export interface ScopeFacts {
  /** graphql.get_schema_version() when loaded. */
  version: number;
  /** The role bypasses row-level security (superuser, BYPASSRLS): no policy applies. */
  bypassRls: boolean;
  relations: Map<number, RelationFacts>;
  /** Per table oid, the SELECT policies that apply to the role (only tables with RLS enabled). */
  policies: Map<number, PolicyFacts[]>;
}

/** 'request.jwt.claims' as a text constant's bytes print in a node tree (a 4-byte length word, then the characters). */
const CLAIMS_SETTING_BYTES = [88, 0, 0, 0, ...Buffer.from('request.jwt.claims', 'latin1')].join(' ');
/**
 * The policy's node tree with each `current_setting('request.jwt.claims'[, missing_ok])` call's
 * function id written 0: the setting a live query's transaction sets from the principal's claims
 * (db/with-role.ts), so reading it is reading the claims, as auth.jwt() does (PostgREST-style
 * policies). Only a call whose first argument is that constant itself (text, default collation)
 * is masked; a setting of any other name, or named by an expression, stays a stable function.
 */
const CLAIMS_SETTING_MASKED = `regexp_replace(p.polqual::text,
  '[{]FUNCEXPR :funcid (?:2077|3294) ([^{}]*:args [(][{]CONST :consttype 25 [^{}]*:constcollid 100 [^{}]*:constisnull false [^{}]*:constvalue 22 \\[ ${CLAIMS_SETTING_BYTES} \\][}])',
  '{FUNCEXPR :funcid 0 \\1', 'g')`;

/**
 * Whether a policy's expression gives the same answer for the same row values, claims and tables
 * (PolicyFacts.steady), read from its node tree (pg_policy.polqual as text): every function
 * it calls, directly or through an operator, an aggregate or a window, is immutable or one of the
 * platform's claim readers (auth.uid/role/jwt/email, owned by a superuser, and
 * `current_setting('request.jwt.claims')`: CLAIMS_SETTING_MASKED); no SQL value function
 * (CURRENT_TIMESTAMP, CURRENT_USER…), sequence, TABLESAMPLE or row comparison; and every type a
 * value takes, reads or is cast to has immutable input and output functions (a cast through text
 * runs them: timestamptz's depend on the time zone; an array's are its element type's). Names in
 * the tree (a column's) can only add checks, never hide a node. The comparisons of a subquery's
 * ORDER BY or GROUP BY (`:sortop`, `:eqop`) are not looked at: the built-in types' are immutable.
 */
const STEADY_SQL = `(p.polqual::text !~ '[{](SQLVALUEFUNCTION|NEXTVALUEEXPR|CURRENTOFEXPR|TABLESAMPLECLAUSE|ROWCOMPAREEXPR) '
    and not exists (
      select 1 from regexp_matches(${CLAIMS_SETTING_MASKED}, ':(?:funcid|opfuncid|aggfnoid|winfnoid|hashfuncid|negfuncid) ([0-9]+)', 'g') m(f)
        left join pg_proc pr on pr.oid = m.f[1]::oid
        left join pg_namespace pn on pn.oid = pr.pronamespace
        left join pg_roles o on o.oid = pr.proowner
       where m.f[1]::oid <> 0
         and not (pr.provolatile is not distinct from 'i'
                  or (pn.nspname = 'auth' and pr.pronargs = 0 and o.rolsuper
                      and pr.proname in ('uid', 'role', 'jwt', 'email'))))
    and not exists (
      select 1 from regexp_matches(p.polqual::text, ':opno ([0-9]+)', 'g') m(f)
        left join pg_operator op on op.oid = m.f[1]::oid
        left join pg_proc pr on pr.oid = op.oprcode
       where pr.provolatile is distinct from 'i')
    and not exists (
      select 1 from regexp_matches(p.polqual::text, ':(?:resulttype|consttype|vartype|funcresulttype|opresulttype|type|typeId|casetype|coalescetype|minmaxtype|array_typeid|element_typeid|row_typeid) ([0-9]+)', 'g') m(t)
        left join pg_type ty on ty.oid = m.t[1]::oid
        left join pg_type el on el.oid = case when ty.typinput = 'pg_catalog.array_in'::pg_catalog.regproc then ty.typelem end
        left join pg_proc i on i.oid = coalesce(el.typinput, ty.typinput)
        left join pg_proc o on o.oid = coalesce(el.typoutput, ty.typoutput)
       where m.t[1]::oid <> 0
         and (i.provolatile is distinct from 'i' or o.provolatile is distinct from 'i')))`;

const FACTS_SQL = (role: string) => `select json_build_object(
  'version', graphql.get_schema_version(),
  'bypass', coalesce((select r.rolsuper or r.rolbypassrls from pg_roles r where r.rolname = ${role}), false),
  'relations', (select coalesce(json_agg(json_build_array(c.oid::int8, n.nspname, c.relname, c.relkind, c.relrowsecurity,
      (select coalesce(json_agg(json_build_array(a.attname, a.atttypid::int8, coalesce(co.collisdeterministic, true))), '[]')
         from pg_attribute a left join pg_collation co on co.oid = a.attcollation
        where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
          and a.atttypid in (${EXACT_OIDS})),
      (select coalesce(json_agg(a.attname order by k.n), '[]')
         from pg_index i cross join unnest(i.indkey) with ordinality k(attnum, n)
         join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum
        where i.indrelid = c.oid and i.indisprimary))), '[]')
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
   where c.relkind in ('r', 'p', 'v', 'm', 'f')
     and n.nspname not in ('pg_catalog', 'information_schema') and n.nspname !~ '^pg_toast'),
  'inherits', (select coalesce(json_agg(json_build_array(i.inhparent::int8, i.inhrelid::int8)), '[]') from pg_inherits i),
  'policies', (select coalesce(json_agg(json_build_array(p.polrelid::int8, pg_get_expr(p.polqual, p.polrelid),
      (select coalesce(json_agg(json_build_array(d.refclassid::regclass::text, d.refobjid::int8,
          (select rc.relkind from pg_class rc where d.refclassid = 'pg_class'::regclass and rc.oid = d.refobjid),
          (select t.typtype from pg_type t where d.refclassid = 'pg_type'::regclass and t.oid = d.refobjid),
          (select pr.proname from pg_proc pr join pg_namespace pn on pn.oid = pr.pronamespace
             join pg_roles o on o.oid = pr.proowner
            where d.refclassid = 'pg_proc'::regclass and pr.oid = d.refobjid and pn.nspname = 'auth'
              and pr.pronargs = 0 and o.rolsuper and pr.proname in ('uid', 'role', 'jwt', 'email')),
          d.refobjsubid,
          (select a.attname from pg_attribute a
            where d.refclassid = 'pg_class'::regclass and a.attrelid = d.refobjid and a.attnum = d.refobjsubid))), '[]')
         from pg_depend d where d.classid = 'pg_policy'::regclass and d.objid = p.oid and d.deptype = 'n'),
      ${STEADY_SQL})), '[]')
    from pg_policy p join pg_class c on c.oid = p.polrelid
   where c.relrowsecurity and p.polcmd in ('r', '*') and p.polqual is not null
     and exists (select 1 from unnest(p.polroles) pr(oid)
                  where case when pr.oid = 0 then true else pg_has_role(${role}, pr.oid, 'USAGE') end))
) as facts`;

type RawDep = [string, number, string | null, string | null, string | null, number, string | null];
interface Raw {
  version: number;
  bypass: boolean;
  relations: [number, string, string, string, boolean, [string, number, boolean][], string[]][];
  inherits: [number, number][];
  policies: [number, string, RawDep[], boolean][];
}

/** One dependency of a policy: the table it reads, a claim-reading platform function, or unknown. */
function depOf(dep: RawDep, policy: { opaque: boolean; tables: number[] }): void {
  const [cls, oid, relkind, typtype, authFn] = dep;
  if (cls === 'pg_class') {
    if (relkind === 'r' || relkind === 'p') policy.tables.push(oid);
    // A composite type's relation is no read; a view, sequence or foreign table is unknown.
    else if (relkind !== 'c') policy.opaque = true;
  } else if (cls === 'pg_proc') {
    if (!authFn) policy.opaque = true;
  } else if (cls === 'pg_type') {
    // A domain may check its values with any function.
    if (typtype === 'd') policy.opaque = true;
  } else if (cls !== 'pg_collation' && cls !== 'pg_ts_config' && cls !== 'pg_ts_dict') {
    // An operator runs its function; anything else is not understood here.
    policy.opaque = true;
  }
}

/**
 * Whether a policy's expression (pg_get_expr under search_path pg_catalog) may read rows of its
 * own table other than the row it judges. pg_depend cannot tell: a subquery's columns of the table
 * and the row's own columns record the same dependencies. Without a subquery it reads none; with
 * one, a FROM of the table prints it schema-qualified (nothing but pg_catalog and pg_temp is on
 * that search path), while the row's columns print as `name.column` or bare: so a `.name` (or
 * `."name"`) anywhere in the text, literals included, counts as a read.
 */
export function readsOtherRows(qual: string, rel: { schema: string; name: string }): boolean {
  const code = maskLiterals(qual)?.code;
  if (code === undefined) return true;
  if (!/\bSELECT\b/i.test(code)) return false;
  if (rel.schema.startsWith('pg_temp') || rel.schema === 'pg_catalog') return true;
  const name = rel.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const quoted = rel.name.replace(/"/g, '""').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`\\.(?:${name}|"${quoted}")(?![A-Za-z0-9_$])`).test(qual);
}

/** The facts for `role` (a role name; escaped here). */
export async function loadScopeFacts(pool: pg.Pool, role: string): Promise<ScopeFacts> {
  const raw = await withPooledClient(pool, async (client) => {
    const results = (await client.query(
      `begin; set local search_path = pg_catalog, pg_temp; ${FACTS_SQL(quoteLiteral(role))}; commit`,
    )) as unknown as pg.QueryResult[];
    return results[2]?.rows[0]?.facts as Raw | undefined;
  });
  if (!raw) throw new Error('the live-query facts query answered nothing');
  const children = new Map<number, number[]>();
  for (const [parent, child] of raw.inherits) children.set(parent, [...(children.get(parent) ?? []), child]);
  const descendantsOf = (oid: number, seen = new Set<number>()): number[] => {
    for (const c of children.get(oid) ?? []) {
      if (seen.has(c)) continue;
      seen.add(c);
      descendantsOf(c, seen);
    }
    return [...seen];
  };
  const relations = new Map<number, RelationFacts>();
  const childOids = new Set(raw.inherits.map(([, child]) => child));
  for (const [oid, schema, name, kind, rls, cols, primaryKey] of raw.relations)
    relations.set(oid, {
      oid,
      schema,
      name,
      kind,
      rls,
      descendants: descendantsOf(oid),
      columns: new Map(cols.map(([n, type, deterministic]) => [n, { type, deterministic }])),
      primaryKey,
      isChild: childOids.has(oid),
    });
  const policies = new Map<number, PolicyFacts[]>();
  for (const [relid, qual, deps, steady] of raw.policies) {
    const p: PolicyFacts = {
      opaque: false,
      claims: new Set(),
      tables: [],
      ownColumns: new Set(),
      steady: steady === true,
    };
    for (const d of deps) {
      depOf(d, p);
      const [cls, oid, , , , subid, column] = d;
      if (cls !== 'pg_class' || oid !== relid || p.ownColumns === 'all') continue;
      if (subid > 0 && column !== null) p.ownColumns.add(column);
      else p.ownColumns = 'all';
    }
    if (runsQueryText(qual)) p.opaque = true;
    const own = relations.get(relid);
    if (own && !readsOtherRows(qual, own)) p.tables = p.tables.filter((t) => t !== relid);
    p.claims = p.opaque ? 'all' : unionClaims(p.claims, claimsRead(qual));
    policies.set(relid, [...(policies.get(relid) ?? []), p]);
  }
  return { version: Number(raw.version), bypassRls: raw.bypass, relations, policies };
}
