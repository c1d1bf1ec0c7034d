/**
 * The generated TypeScript file (the reference generator's layout, postgres-meta's typegen): Json, Database with
 * one entry per schema (Tables, Views, Functions, Enums, CompositeTypes), helper generics and the
 * Constants object with enum values.
 */
import type { Column, PgFunction, Relation, TypegenCatalog } from './catalog.js';
import { literalObj, member, obj, render, seq, stringLiteral, tuple, union, type Doc } from './doc.js';
import { HELPER_TYPES } from './helper-types.js';
import { nullableItems, rowRelationOf, typeItems, type TypeContext } from './ts-types.js';

const JSON_TYPE = `export type Json =
  | string
  | number
  | boolean
  | null
  | { [key: string]: Json | undefined }
  | Json[]
`;

const NONE = '[_ in never]: never';
const byName = <T extends { name: string }>(a: T, b: T) => a.name.localeCompare(b.name);
const INPUT_MODES = new Set(['in', 'inout', 'variadic']);
/** Single unnamed arguments PostgREST can pass a request body to. */
const UNNAMED_BODY_TYPES = new Set(['json', 'jsonb', 'text', 'xml', 'bytea']);

const inputsOf = (fn: PgFunction) => fn.args.filter((a) => INPUT_MODES.has(a.mode));
const arrayOf = (items: string[]) => (items.length > 1 ? `(${items.join(' | ')})[]` : `${items[0]}[]`);

function section(members: Doc[]): Doc {
  return obj(members.length ? members : [NONE]);
}

function columnType(ctx: TypeContext, c: Column, nullable: boolean): Doc {
  return union(nullableItems(typeItems(ctx, c.typeId), nullable));
}

/** Functions the API can call: no inputs, all named, or one unnamed body / row argument; no trigger functions. */
function callable(ctx: TypeContext, fn: PgFunction): boolean {
  const ret = ctx.catalog.types.get(fn.returnTypeId);
  if (ret && (ret.name === 'trigger' || ret.name === 'event_trigger') && ret.schema === 'pg_catalog')
    return false;
  const inputs = inputsOf(fn);
  if (inputs.every((a) => a.name !== '')) return true;
  const [only] = inputs;
  if (inputs.length !== 1 || only === undefined) return false;
  const t = ctx.catalog.types.get(only.typeId);
  return (
    !!t &&
    ((t.schema === 'pg_catalog' && UNNAMED_BODY_TYPES.has(t.name)) || rowRelationOf(ctx, t.id) !== undefined)
  );
}

/** The single input argument's row relation, if the function takes exactly one argument of a row type. */
function singleRowInput(
  ctx: TypeContext,
  fn: PgFunction,
): { relation: Relation | undefined; unnamed: boolean } | undefined {
  const inputs = inputsOf(fn);
  const [only] = inputs;
  if (inputs.length !== 1 || only === undefined) return undefined;
  const relid = rowRelationOf(ctx, only.typeId);
  if (relid === undefined) return undefined;
  return { relation: ctx.catalog.relations.find((r) => r.id === relid), unnamed: only.name === '' };
}

/** The relation a function returns rows of, when it is one the file describes. */
function returnedRelation(ctx: TypeContext, fn: PgFunction): Relation | undefined {
  const relid = rowRelationOf(ctx, fn.returnTypeId);
  return relid === undefined ? undefined : ctx.catalog.relations.find((r) => r.id === relid);
}

function rowObject(ctx: TypeContext, rel: Relation): Doc {
  return obj(rel.columns.map((c) => member(c.name, columnType(ctx, c, c.nullable))));
}

/** Functions taking exactly one unnamed argument of `rel`'s row type: computed fields, shown in its Row. */
function computedFields(ctx: TypeContext, rel: Relation, fns: PgFunction[]): Doc[] {
  return fns
    .filter((fn) => {
      const input = singleRowInput(ctx, fn);
      return input?.unnamed && input.relation?.id === rel.id;
    })
    .map((fn) => {
      const returned = returnedRelation(ctx, fn);
      if (returned) return member(fn.name, union([rowObject(ctx, returned), 'null']));
      const items = typeItems(ctx, fn.returnTypeId);
      return member(fn.name, union(nullableItems(fn.setReturning ? [arrayOf(items)] : items, true)));
    });
}

function relationshipsOf(catalog: TypegenCatalog, rel: Relation): Doc {
  const rels = catalog.relationships
    .filter((r) => r.schema === rel.schema && r.referencedSchema === rel.schema && r.relation === rel.name)
    .sort(
      (a, b) =>
        a.foreignKeyName.localeCompare(b.foreignKeyName) ||
        a.referencedRelation.localeCompare(b.referencedRelation) ||
        JSON.stringify(a.referencedColumns).localeCompare(JSON.stringify(b.referencedColumns)),
    );
  return tuple(
    rels.map((r) =>
      obj([
        member('foreignKeyName', stringLiteral(r.foreignKeyName)),
        member('columns', tuple(r.columns.map(stringLiteral))),
        member('isOneToOne', String(r.isOneToOne)),
        member('referencedRelation', stringLiteral(r.referencedRelation)),
        member('referencedColumns', tuple(r.referencedColumns.map(stringLiteral))),
      ]),
    ),
  );
}

function tableDoc(ctx: TypeContext, rel: Relation, fns: PgFunction[]): Doc {
  const row = [
    ...rel.columns.map((c) => member(c.name, columnType(ctx, c, c.nullable))),
    ...computedFields(ctx, rel, fns),
  ];
  const insert = rel.columns.map((c) =>
    c.identity === 'ALWAYS'
      ? member(c.name, 'never', true)
      : member(c.name, columnType(ctx, c, c.nullable), c.nullable || c.identity !== null || c.hasDefault),
  );
  const update = rel.columns.map((c) =>
    c.identity === 'ALWAYS'
      ? member(c.name, 'never', true)
      : member(c.name, columnType(ctx, c, c.nullable), true),
  );
  return obj([
    member('Row', obj(row)),
    member('Insert', obj(insert)),
    member('Update', obj(update)),
    member('Relationships', relationshipsOf(ctx.catalog, rel)),
  ]);
}

function viewDoc(ctx: TypeContext, rel: Relation, fns: PgFunction[]): Doc {
  const members: Doc[] = [
    member(
      'Row',
      obj([
        ...rel.columns.map((c) => member(c.name, columnType(ctx, c, c.nullable))),
        ...computedFields(ctx, rel, fns),
      ]),
    ),
  ];
  if (rel.kind === 'view' && rel.updatable) {
    const writable = rel.columns.map((c) =>
      c.updatable ? member(c.name, columnType(ctx, c, true), true) : member(c.name, 'never', true),
    );
    members.push(member('Insert', obj(writable)), member('Update', obj(writable)));
  }
  members.push(member('Relationships', relationshipsOf(ctx.catalog, rel)));
  return obj(members);
}

/** A composite type the file names (a table, view or composite type of an included schema). */
function describedComposite(ctx: TypeContext, typeId: number): string | undefined {
  const t = ctx.catalog.types.get(typeId);
  if (t?.typtype !== 'c' || !ctx.included.has(t.schema)) return undefined;
  return t.name;
}

function returnsOf(ctx: TypeContext, fn: PgFunction): Doc[] {
  const tableArgs = fn.args.filter((a) => a.mode === 'table');
  const outArgs = fn.args.filter((a) => a.mode === 'out' || a.mode === 'inout');
  if (tableArgs.length || outArgs.length) {
    const cols = obj(
      (tableArgs.length ? tableArgs : outArgs).map((a) => member(a.name, union(typeItems(ctx, a.typeId)))),
    );
    return [member('Returns', fn.setReturning ? seq(cols, '[]') : cols)];
  }
  const input = singleRowInput(ctx, fn);
  const composite = describedComposite(ctx, fn.returnTypeId);
  if (input?.unnamed && composite === undefined) {
    // PostgREST cannot call it as an RPC (only as a computed field): the reference marks it so.
    const message = `the function ${fn.schema}.${fn.name} with parameter or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache`;
    return [member('Returns', seq(obj([member('error', 'true')]), ` & ${stringLiteral(message)}`))];
  }
  if (composite !== undefined) {
    const oneRow = !fn.setReturning || fn.rows === 1;
    const rel = returnedRelation(ctx, fn);
    const shape: Doc = rel ? rowObject(ctx, rel) : union(typeItems(ctx, fn.returnTypeId));
    const returns: Doc = oneRow ? shape : typeof shape === 'string' ? `${shape}[]` : seq(shape, '[]');
    return [
      member('Returns', returns),
      member(
        'SetofOptions',
        obj([
          member('from', stringLiteral(input?.relation ? input.relation.name : '*')),
          member('to', stringLiteral(composite)),
          member('isOneToOne', String(oneRow)),
          member('isSetofReturn', String(fn.setReturning)),
        ]),
      ),
    ];
  }
  const items = typeItems(ctx, fn.returnTypeId);
  return [member('Returns', fn.setReturning ? arrayOf(items) : union(items))];
}

/**
 * PostgREST picks an overload by the argument names a call sends. The overloads that a call with
 * exactly `fn`'s arguments would match (itself included); more than one means PostgREST cannot choose.
 */
function candidatesFor(fn: PgFunction, overloads: PgFunction[]): PgFunction[] {
  const sent = new Set(inputsOf(fn).map((a) => a.name));
  return overloads.filter((other) => {
    const inputs = inputsOf(other);
    const all = new Set(inputs.map((a) => a.name));
    return inputs.every((a) => a.hasDefault || sent.has(a.name)) && [...sent].every((n) => all.has(n));
  });
}

function signature(ctx: TypeContext, fn: PgFunction): string {
  const args = inputsOf(fn).map((a) => `${a.name} => ${ctx.catalog.types.get(a.typeId)?.name ?? 'unknown'}`);
  return `${fn.schema}.${fn.name}(${args.join(', ')})`;
}

function overloadDoc(ctx: TypeContext, fn: PgFunction, overloads: PgFunction[]): Doc {
  const inputs = inputsOf(fn).sort(byName);
  const args: Doc =
    inputs.length === 0
      ? 'never'
      : obj(
          inputs.map((a) => member(a.name, union(typeItems(ctx, a.typeId)), a.hasDefault)),
          false,
        );
  const candidates = candidatesFor(fn, overloads);
  if (candidates.length > 1) {
    const list = candidates
      .sort((a, b) => a.id - b.id)
      .map((c) => signature(ctx, c))
      .join(', ');
    const message = `Could not choose the best candidate function between: ${list}. Try renaming the parameters or the function itself in the database so function overloading can be resolved`;
    return obj(
      [
        member('Args', args),
        member('Returns', seq(obj([member('error', 'true')]), ` & ${stringLiteral(message)}`)),
      ],
      false,
    );
  }
  return obj([member('Args', args), ...returnsOf(ctx, fn)], false);
}

function functionsDoc(ctx: TypeContext, fns: PgFunction[]): Doc {
  const groups = new Map<string, PgFunction[]>();
  for (const fn of fns) groups.set(fn.name, [...(groups.get(fn.name) ?? []), fn]);
  return section(
    [...groups.entries()].map(([name, overloads]) =>
      member(
        name,
        union(
          [...overloads]
            .sort((a, b) => a.identityArgs.localeCompare(b.identityArgs))
            .map((fn) => overloadDoc(ctx, fn, overloads)),
        ),
      ),
    ),
  );
}

function schemaDoc(ctx: TypeContext, schema: string): Doc {
  const { catalog } = ctx;
  const fns = catalog.functions.filter((f) => f.schema === schema && callable(ctx, f)).sort(byName);
  const rels = catalog.relations.filter((r) => r.schema === schema).sort(byName);
  const enums = [...catalog.types.values()]
    .filter((t) => t.schema === schema && t.typtype === 'e')
    .sort(byName);
  const composites = catalog.compositeTypes.filter((c) => c.schema === schema).sort(byName);
  return obj([
    member(
      'Tables',
      section(rels.filter((r) => r.kind === 'table').map((r) => member(r.name, tableDoc(ctx, r, fns)))),
    ),
    member(
      'Views',
      section(rels.filter((r) => r.kind !== 'table').map((r) => member(r.name, viewDoc(ctx, r, fns)))),
    ),
    member('Functions', functionsDoc(ctx, fns)),
    member('Enums', section(enums.map((e) => member(e.name, union(e.enums.map(stringLiteral)))))),
    member(
      'CompositeTypes',
      section(
        composites.map((c) =>
          member(
            c.name,
            obj(
              c.attributes.map((a) => member(a.name, union(nullableItems(typeItems(ctx, a.typeId), true)))),
            ),
          ),
        ),
      ),
    ),
  ]);
}

function constantsDoc(ctx: TypeContext): Doc {
  return literalObj(
    ctx.catalog.schemas.map((schema) => {
      const enums = [...ctx.catalog.types.values()]
        .filter((t) => t.schema === schema && t.typtype === 'e')
        .sort(byName);
      return member(
        schema,
        literalObj([
          member('Enums', literalObj(enums.map((e) => member(e.name, tuple(e.enums.map(stringLiteral)))))),
        ]),
      );
    }),
  );
}

/** The whole generated file. */
export function generateTypescript(catalog: TypegenCatalog): string {
  const ctx: TypeContext = { catalog, included: new Set(catalog.schemas) };
  const database = obj(catalog.schemas.map((s) => member(s, schemaDoc(ctx, s))));
  const head = 'export type Database = ';
  const constants = 'export const Constants = ';
  return [
    JSON_TYPE,
    head + render(database, 0, head.length) + '\n',
    HELPER_TYPES,
    constants + render(constantsDoc(ctx), 0, constants.length, ' as const'.length) + ' as const\n',
  ].join('\n');
}
