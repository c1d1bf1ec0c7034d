-- The one catalog query of the GraphQL engine: everything it reflects, as one json document, for
-- the current role and search_path (pg_graphql keeps its equivalent in sql/load_sql_context.sql).
-- Only schemas on current_schemas(false) with USAGE are read. Loaded once, at start, by
-- src/graphql/introspect/catalog-sql.ts, which sends the text after these header lines; each
-- column of rels[].columns is a json array whose order is COLUMN_NAMES there (load.ts names them).

with recursive
search_path_schemas as (
  select n.oid, n.nspname, sp.ord
  from unnest(current_schemas(false)) with ordinality sp(name, ord)
  join pg_namespace n on n.nspname = sp.name
  where has_schema_privilege(n.oid, 'USAGE')
    and n.nspname not in ('pg_catalog', 'information_schema', 'graphql', 'graphql_public')
),
rels as (
  select c.oid, c.relname, c.relkind, c.relnamespace, n.nspname, c.relrowsecurity,
         ds.description as comment,
         -- table-level privileges (a column has them all: has_column_privilege is asked only where not)
         has_table_privilege(c.oid, 'SELECT') as can_select,
         has_table_privilege(c.oid, 'INSERT') as can_insert,
         has_table_privilege(c.oid, 'UPDATE') as can_update,
         -- a partition's ancestors, nearest first (Strata partitioned_tables hides them behind the root)
         case when c.relispartition then (
           select json_agg(a.relid::oid::int8 order by a.n)
           from pg_partition_ancestors(c.oid) with ordinality a(relid, n) where a.relid <> c.oid::regclass
         ) end as ancestors
  from pg_class c
  join search_path_schemas n on n.oid = c.relnamespace
  left join pg_description ds on ds.objoid = c.oid and ds.classoid = 'pg_class'::regclass and ds.objsubid = 0
  -- pg_graphql reflects tables, views, materialized views and foreign tables: a partition is a
  -- table (relkind r) and is reflected with the keys declared on it; a partitioned parent (p) is
  -- read too but reflected only with Strata's partitioned_tables switch (load.ts decides).
  where c.relkind in ('r', 'v', 'm', 'f', 'p')
),
-- Sequences owned by a column (serial: dependency 'a'; identity, either kind: 'i'), as
-- pg_get_serial_sequence finds them: pg_graphql's is_serial.
owned_seqs as (
  select distinct dep.refobjid, dep.refobjsubid
  from pg_depend dep
  join pg_class s on s.oid = dep.objid and s.relkind = 'S'
  where dep.classid = 'pg_class'::regclass and dep.refclassid = 'pg_class'::regclass
    and dep.deptype in ('a', 'i') and dep.refobjsubid > 0
),
-- NOT NULL constraints added NOT VALID (PostgreSQL 18+: attnotnull is then set, yet old rows may
-- hold NULLs).
unvalidated_not_null as (
  select con.conrelid, con.conkey[1] as attnum from pg_constraint con
  where con.contype = 'n' and not con.convalidated
),
cols as (
  select a.attrelid, a.attnum, a.attname, a.atttypid, a.atttypmod, a.attnotnull, a.attgenerated,
         a.atthasdef,
         -- Holds no NULL: a validated NOT NULL of a table (a foreign table's is not enforced).
         a.attnotnull and r.relkind in ('r', 'p') and nn.conrelid is null as null_free,
         os.refobjid is not null as is_serial,
         ds.description as comment,
         case when r.can_select then true else has_column_privilege(a.attrelid, a.attnum, 'SELECT') end as can_select,
         case when r.can_insert then true else has_column_privilege(a.attrelid, a.attnum, 'INSERT') end as can_insert,
         case when r.can_update then true else has_column_privilege(a.attrelid, a.attnum, 'UPDATE') end as can_update
  from pg_attribute a
  join rels r on r.oid = a.attrelid
  left join owned_seqs os on os.refobjid = a.attrelid and os.refobjsubid = a.attnum
  left join unvalidated_not_null nn on nn.conrelid = a.attrelid and nn.attnum = a.attnum
  left join pg_description ds on ds.objoid = a.attrelid and ds.classoid = 'pg_class'::regclass and ds.objsubid = a.attnum
  where a.attnum > 0 and not a.attisdropped
),
used_types as (
  select distinct atttypid as oid from cols
  union select distinct t from (
    select unnest(p.proargtypes::oid[]) as t from pg_proc p join search_path_schemas n on n.oid = p.pronamespace
    union all select p.prorettype from pg_proc p join search_path_schemas n on n.oid = p.pronamespace
    union all select unnest(p.proallargtypes) from pg_proc p join search_path_schemas n on n.oid = p.pronamespace
  ) x
),
-- Every type a used type leads to through array elements and domain bases, at any depth (a domain
-- over an array of a domain over int is [Int]).
type_closure as (
  select oid from used_types
  union
  select x.ref from type_closure c
  join pg_type t on t.oid = c.oid
  cross join lateral (values (t.typelem), (t.typbasetype)) x(ref)
  where x.ref <> 0
),
types as (
  select t.oid, t.typname, t.typtype, t.typcategory, t.typelem, t.typbasetype, t.typrelid, t.typnamespace,
         tn.nspname as schema_name,
         t.typnamespace in (select oid from search_path_schemas) as on_path,
         has_type_privilege(t.oid, 'USAGE') as can_use,
         obj_description(t.oid, 'pg_type') as comment,
         case when t.typtype = 'e' then (
           select coalesce(json_agg(e.enumlabel order by e.enumsortorder), '[]') from pg_enum e where e.enumtypid = t.oid
         ) end as enum_labels
  from pg_type t
  join pg_namespace tn on tn.oid = t.typnamespace
  where t.oid in (select oid from type_closure)
     or (t.typtype = 'e' and t.typnamespace in (select oid from search_path_schemas))
),
funcs as (
  select p.oid, p.proname, n.nspname, p.pronamespace, p.provolatile, p.proretset, p.prorettype, p.prorows,
         p.proargtypes::oid[] as arg_types, p.proallargtypes, p.proargmodes, p.proargnames, p.pronargs, p.pronargdefaults,
         p.prokind, p.provariadic,
         pg_get_function_arguments(p.oid) as arg_text,
         pg_get_expr(p.proargdefaults, 0) as arg_defaults,
         ds.description as comment,
         has_function_privilege(p.oid, 'EXECUTE') as can_execute,
         -- pg_graphql leaves out a function whose name another function on the search path shares
         count(*) over (partition by p.proname) as same_name
  from pg_proc p
  join search_path_schemas n on n.oid = p.pronamespace
  left join pg_description ds on ds.objoid = p.oid and ds.classoid = 'pg_proc'::regclass and ds.objsubid = 0
  where p.prokind = 'f'
),
-- Foreign keys (primary keys are read from the unique indexes).
cons as (
  select con.oid, con.conname, con.contype, con.conrelid, con.confrelid, con.conkey, con.confkey,
         ds.description as comment
  from pg_constraint con
  left join pg_description ds on ds.objoid = con.oid and ds.classoid = 'pg_constraint'::regclass and ds.objsubid = 0
  where con.conrelid in (select oid from rels) and con.contype = 'f'
),
idx as (
  select i.indrelid, i.indkey::int2[] as cols, i.indisprimary, i.indpred is not null as partial,
         i.indimmediate, ic.relname as name
  from pg_index i
  join pg_class ic on ic.oid = i.indexrelid
  where i.indrelid in (select oid from rels) and i.indisunique and i.indisvalid and i.indexprs is null
),
-- Strata partitioned_tables: the foreign keys every leaf partition of a partitioned table has
-- (declared on the leaf or inherited), by column names (a partition's column numbers may differ).
partition_keys as (
  select p.oid as rel, k.confrelid, k.cols, k.fcols, min(k.conname) as name,
         (array_agg(k.comment order by k.conname) filter (where k.comment is not null))[1] as comment
  from rels p
  cross join lateral (select t.relid from pg_partition_tree(p.oid) t where t.isleaf) l
  cross join lateral (
    select con.confrelid, con.conname, obj_description(con.oid, 'pg_constraint') as comment,
      (select array_agg(a.attname::text order by u.n) from unnest(con.conkey) with ordinality u(num, n)
         join pg_attribute a on a.attrelid = con.conrelid and a.attnum = u.num) as cols,
      (select array_agg(a.attname::text order by u.n) from unnest(con.confkey) with ordinality u(num, n)
         join pg_attribute a on a.attrelid = con.confrelid and a.attnum = u.num) as fcols
    from pg_constraint con where con.conrelid = l.relid and con.contype = 'f'
  ) k
  where p.relkind = 'p'
  group by p.oid, k.confrelid, k.cols, k.fcols
  having count(distinct l.relid) = (select count(*) from pg_partition_tree(p.oid) t where t.isleaf)
),
-- Columns and unique indexes aggregated once per relation (joined below, not correlated per table).
cols_by_rel as (
  select c.attrelid, bool_and(c.can_select) as all_select,
         json_agg(json_build_array(c.attnum, c.attname, c.atttypid::int8, c.atttypmod, c.attnotnull, c.attgenerated, c.atthasdef, c.is_serial, c.comment, c.can_select, c.can_insert, c.can_update, c.null_free) order by c.attnum) as columns
  from cols c group by c.attrelid
),
idx_by_rel as (
  select i.indrelid, json_agg(json_build_object('cols', to_json(i.cols), 'primary', i.indisprimary, 'partial', i.partial,
           'immediate', i.indimmediate, 'name', i.name) order by i.name) as uniques
  from idx i group by i.indrelid
)
select json_build_object(
  'role', current_user,
  'schemas', (select coalesce(json_agg(json_build_object('oid', s.oid::int8, 'name', s.nspname, 'comment', obj_description(s.oid, 'pg_namespace')) order by s.ord), '[]') from search_path_schemas s),
  'rels', (select coalesce(json_agg(json_build_object(
      'oid', r.oid::int8, 'name', r.relname, 'kind', r.relkind, 'schema', r.nspname, 'schemaOid', r.relnamespace::int8, 'rls', r.relrowsecurity,
      'comment', r.comment, 'ancestors', r.ancestors,
      'canDelete', has_table_privilege(r.oid, 'DELETE'),
      'canSelectAll', coalesce(cr.all_select, true),
      'columns', coalesce(cr.columns, '[]'),
      'uniques', coalesce(ir.uniques, '[]')
    ) order by r.nspname, r.relname), '[]')
    from rels r
    left join cols_by_rel cr on cr.attrelid = r.oid
    left join idx_by_rel ir on ir.indrelid = r.oid),
  'constraints', (select coalesce(json_agg(json_build_object(
      'oid', c.oid::int8, 'name', c.conname, 'type', c.contype, 'rel', c.conrelid::int8, 'frel', c.confrelid::int8,
      'cols', to_json(c.conkey), 'fcols', to_json(c.confkey), 'comment', c.comment) order by c.conname, c.oid), '[]') from cons c),
  'partitionKeys', (select coalesce(json_agg(json_build_object(
      'name', k.name, 'rel', k.rel::int8, 'frel', k.confrelid::int8, 'cols', to_json(k.cols), 'fcols', to_json(k.fcols),
      'comment', k.comment) order by k.name, k.rel), '[]') from partition_keys k),
  'types', (select coalesce(json_agg(json_build_object(
      'oid', t.oid::int8, 'name', t.typname, 'typtype', t.typtype, 'category', t.typcategory, 'elem', t.typelem::int8,
      'base', t.typbasetype::int8, 'relid', t.typrelid::int8, 'schema', t.schema_name, 'onPath', t.on_path, 'canUse', t.can_use,
      'comment', t.comment, 'enumLabels', t.enum_labels)), '[]') from types t),
  'functions', (select coalesce(json_agg(json_build_object(
      'oid', f.oid::int8, 'name', f.proname, 'schema', f.nspname, 'volatility', f.provolatile, 'setof', f.proretset,
      'returnType', f.prorettype::int8, 'rows', f.prorows, 'argTypes', to_json(f.arg_types::int8[]), 'allArgTypes', to_json(f.proallargtypes::int8[]),
      'argModes', to_json(f.proargmodes), 'argNames', to_json(f.proargnames), 'nargs', f.pronargs, 'nargDefaults', f.pronargdefaults,
      'variadic', f.provariadic::int8, 'argText', f.arg_text, 'argDefaults', f.arg_defaults, 'comment', f.comment, 'canExecute', f.can_execute,
      'overloaded', f.same_name > 1
    ) order by f.nspname, f.proname, f.oid), '[]') from funcs f)
) as catalog
