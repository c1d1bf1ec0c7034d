/**
 * Which tables get a change stream (`<type>Changes`), as the schema reflects it: the table's
 * collection name with `Collection` → `Changes`, following the inflection; none for a table
 * whose `<Type>Change` type name is taken (a notice says why), none at all while `ChangeOp` is
 * taken, none for a key type change streams do not support, none without the switch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { printSchema, validateSchema, type GraphQLEnumType, type GraphQLObjectType } from 'graphql';
import { reflectSchema } from '../../src/graphql/engine.js';
import { connect, createTestDatabase, type TestDatabase } from '../support/database.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'changes_schema', bootstrap: false });
});

afterAll(async () => {
  await db?.drop();
});

async function reflect(schemaSql: string) {
  const c = await connect(db.url);
  try {
    await c.query('drop schema if exists public cascade; create schema public;');
    await c.query(schemaSql);
    const { schema, warnings } = await reflectSchema(c);
    expect(validateSchema(schema)).toEqual([]);
    const sub = schema.getSubscriptionType();
    return {
      schema,
      warnings,
      fields: Object.keys(sub?.getFields() ?? {}).filter((f) => f.endsWith('Changes')),
    };
  } finally {
    await c.end();
  }
}

describe('change stream fields', () => {
  it('per table with a supported key, named after the collection field, with and without inflection', async () => {
    const on = await reflect(`
      comment on schema public is '@graphql({"inflect_names": true, "strata": {"subscriptions": true}})';
      create table blog_post (id bigint primary key, title text);
      create table tag (name text, lang text, primary key (name, lang));
      create table at_time (at timestamptz primary key);
      create table no_key (x int);`);
    expect(on.fields.sort()).toEqual(['blogPostChanges', 'tagChanges']);
    expect(on.warnings.join('\n')).toMatch(/at_time .*has no change stream.*primary key has a type/);
    const f = on.schema.getSubscriptionType()?.getFields().blogPostChanges;
    expect(f?.args.map((a) => `${a.name}: ${String(a.type)}`)).toEqual([
      'filter: BlogPostFilter',
      'after: String',
    ]);
    expect(String(f?.type)).toBe('BlogPostChange!');
    const change = on.schema.getType('BlogPostChange') as GraphQLObjectType;
    expect(Object.values(change.getFields()).map((x) => `${x.name}: ${String(x.type)}`)).toEqual([
      'op: ChangeOp!',
      'record: BlogPost',
      'nodeId: ID!',
      'cursor: String!',
    ]);
    expect((on.schema.getType('ChangeOp') as GraphQLEnumType).getValues().map((v) => v.name)).toEqual([
      'INSERT',
      'UPDATE',
      'DELETE',
    ]);

    const plain = await reflect(`
      comment on schema public is '@graphql({"strata": {"subscriptions": true}})';
      create table blog_post (id int primary key);`);
    expect(plain.fields).toEqual(['blog_postChanges']);
    expect(printSchema(plain.schema)).toContain('type blog_postChange {');
    expect(String(plain.schema.getSubscriptionType()?.getFields().blog_postChanges?.type)).toBe(
      'blog_postChange!',
    );
  });

  it('left out when its type name is taken; all left out when ChangeOp is taken; none without the switch', async () => {
    const clash = await reflect(`
      comment on schema public is '@graphql({"inflect_names": true, "strata": {"subscriptions": true}})';
      create table note (id int primary key);
      create table note_change (id int primary key);`);
    expect(clash.fields).toEqual(['noteChangeChanges']);
    expect(clash.warnings.join('\n')).toMatch(
      /public\.note .*has no change stream \(noteChanges\): the type name "NoteChange" is already taken/,
    );

    const op = await reflect(`
      comment on schema public is '@graphql({"inflect_names": true, "strata": {"subscriptions": true}})';
      create table note (id int primary key);
      create type change_op as enum ('a');`);
    expect(op.fields).toEqual([]);
    expect(op.warnings.join('\n')).toMatch(/no table has a change stream .*"ChangeOp" is already taken/);
    expect(op.schema.getSubscriptionType()?.getFields().noteCollection).toBeDefined();

    const off = await reflect(`
      comment on schema public is '@graphql({"inflect_names": true})';
      create table note (id int primary key);
      create table change_op (id int primary key);`);
    expect(off.schema.getSubscriptionType()).toBeUndefined();
    expect(off.schema.getType('ChangeOp')?.name).toBe('ChangeOp');
    expect(off.warnings.join('\n')).not.toMatch(/change stream/);
  });
});
