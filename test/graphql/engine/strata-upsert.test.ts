/**
 * Strata `upsert` (opt-in per schema): `insertInto<Type>Collection(objects, onConflict: {constraint,
 * updateColumns, filter})` as pg_graphql's PR #622 shapes it, under each API role with RLS and
 * column privileges.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Env } from './harness.js';
import { strataSuite } from './strata-suite.js';
import { work } from './wire-tap.js';

const suite = strataSuite(`
    comment on schema public is '@graphql({"inflect_names": true, "introspection": true, "strata": {"upsert": true}})';
    create schema plain;
    comment on schema plain is '@graphql({"inflect_names": true, "introspection": true})';
    create table plain.thing (id int primary key, name text);
    create table stock (
      id serial primary key,
      shop text not null,
      sku text not null,
      qty int not null default 0,
      note text,
      owner text not null default 'alice',
      locked boolean not null default false,
      constraint stock_shop_sku_key unique (shop, sku)
    );
    create unique index stock_note_partial on stock (note) where note is not null;
    insert into stock (shop, sku, qty, owner, locked) values
      ('A', 'x', 1, 'alice', false), ('A', 'y', 2, 'alice', true), ('B', 'x', 3, 'bob', false);
    alter table stock enable row level security;
    create policy own on stock for all to authenticated
      using (owner = current_setting('request.jwt.claims', true)::jsonb ->> 'sub')
      with check (owner = current_setting('request.jwt.claims', true)::jsonb ->> 'sub');
    create policy everything on stock for all to service_role, anon using (true) with check (true);
    grant usage on schema plain to anon, authenticated, service_role;
    grant all on plain.thing to anon, authenticated, service_role;
    grant all on stock to authenticated, service_role;
    revoke all on stock from anon;
    grant select, insert (shop, sku, qty, note), update (qty) on stock to anon;
    grant usage on all sequences in schema public to anon, authenticated, service_role;
  `);
const { sent, as } = suite;
let env: Env;
beforeAll(() => {
  env = suite.env();
});

const rows = async () =>
  (
    await env.client.query(
      'select shop, sku, qty from stock where current_user = current_user order by shop, sku',
    )
  ).rows.map((r) => `${r.shop}${r.sku}:${r.qty}`);
const UPSERT = (objects: string, onConflict: string) =>
  `mutation { insertIntoStockCollection(objects: ${objects}, onConflict: ${onConflict}) { affectedCount records { shop sku qty } } }`;
const enumValues = async (type: string) => {
  const r = (await env.gql(`{ __type(name: "${type}") { enumValues { name } } }`)) as {
    data: { __type: { enumValues: { name: string }[] } | null };
  };
  return r.data.__type?.enumValues.map((v) => v.name);
};

describe('schema', () => {
  it('Constraint enumerates conflict targets (partial unique indexes left out); UpdateColumn follows privileges', async () => {
    await as('service_role');
    expect(await enumValues('StockConstraint')).toEqual(['stock_pkey', 'stock_shop_sku_key']);
    // The UpdateInput's columns: the serial key is not one (pg_graphql's UpdateInputType).
    expect(await enumValues('StockUpdateColumn')).toEqual(['shop', 'sku', 'qty', 'note', 'owner', 'locked']);
    const args = (await env.gql('{ __type(name: "Mutation") { fields { name args { name } } } }')) as {
      data: { __type: { fields: { name: string; args: { name: string }[] }[] } };
    };
    const argsOf = (n: string) => args.data.__type.fields.find((f) => f.name === n)?.args.map((a) => a.name);
    expect(argsOf('insertIntoStockCollection')).toEqual(['objects', 'onConflict']);
    // A schema without the switch keeps pg_graphql's insert field.
    expect(argsOf('insertIntoThingCollection')).toEqual(['objects']);
    expect(await enumValues('ThingConstraint')).toBeUndefined();
    await env.client.query('rollback');
    await as('anon');
    expect(await enumValues('StockUpdateColumn')).toEqual(['qty']);
  });
});

describe('upsert', () => {
  it('service_role: composite unique constraint, the filter skips a locked row; one statement', async () => {
    await as('service_role');
    sent.length = 0;
    const res = await env.gql(
      UPSERT(
        '[{shop: "A", sku: "x", qty: 10}, {shop: "A", sku: "y", qty: 20}, {shop: "A", sku: "z", qty: 30}]',
        '{constraint: stock_shop_sku_key, updateColumns: [qty], filter: {locked: {eq: false}}}',
      ),
    );
    expect(work(sent)).toHaveLength(1);
    expect(res).toEqual({
      data: {
        insertIntoStockCollection: {
          affectedCount: 2,
          records: [
            { shop: 'A', sku: 'x', qty: 10 },
            { shop: 'A', sku: 'z', qty: 30 },
          ],
        },
      },
    });
    expect(await rows()).toEqual(['Ax:10', 'Ay:2', 'Az:30', 'Bx:3']);
  });
  it('variables name the constraint and columns; the filter may go through relationships (a column keeps its name)', async () => {
    await as('service_role');
    await env.client.query(`
      reset role;
      create table shop (code text primary key, open boolean not null);
      insert into shop values ('A', false), ('B', true);
      alter table stock add constraint stock_shop_fk foreign key (shop) references shop(code);
      comment on constraint stock_shop_fk on stock is '@graphql({"foreign_name": "shopRow"})';
      comment on schema public is '@graphql({"inflect_names": true, "introspection": true, "strata": {"upsert": true, "related_filters": true}})';
      grant select on shop to service_role;
      set local role service_role;`);
    const q = `mutation M($o: [StockInsertInput!]!, $c: StockConstraint!, $u: [StockUpdateColumn!]!) {
      insertIntoStockCollection(objects: $o, onConflict: {constraint: $c, updateColumns: $u, filter: {shopRow: {open: {eq: true}}}}) { affectedCount } }`;
    const vars = {
      o: [
        { shop: 'A', sku: 'x', qty: 50 },
        { shop: 'B', sku: 'x', qty: 60 },
      ],
      c: 'stock_shop_sku_key',
      u: ['qty'],
    };
    const typeRes = (await env.gql('{ __type(name: "StockFilter") { inputFields { name } } }')) as {
      data: { __type: { inputFields: { name: string }[] } };
    };
    expect(typeRes.data.__type.inputFields.map((f) => f.name)).toContain('shopRow');
    expect(await env.gql(q, vars)).toEqual({ data: { insertIntoStockCollection: { affectedCount: 1 } } });
    expect(await env.gql(q, vars)).toEqual({ data: { insertIntoStockCollection: { affectedCount: 1 } } });
    expect(await rows()).toEqual(['Ax:1', 'Ay:2', 'Bx:60']);
  });
  it('empty updateColumns: DO NOTHING (only new rows count)', async () => {
    await as('service_role');
    const res = await env.gql(
      UPSERT(
        '[{shop: "A", sku: "x", qty: 10}, {shop: "C", sku: "x", qty: 5}]',
        '{constraint: stock_shop_sku_key, updateColumns: []}',
      ),
    );
    expect(res).toEqual({
      data: { insertIntoStockCollection: { affectedCount: 1, records: [{ shop: 'C', sku: 'x', qty: 5 }] } },
    });
  });
  it('authenticated with RLS: her row is updated; a conflict with a row she cannot update is an error and nothing is written', async () => {
    await as('authenticated', 'alice');
    const ok = await env.gql(
      UPSERT('[{shop: "A", sku: "x", qty: 11}]', '{constraint: stock_shop_sku_key, updateColumns: [qty]}'),
    );
    expect(ok).toEqual({
      data: { insertIntoStockCollection: { affectedCount: 1, records: [{ shop: 'A', sku: 'x', qty: 11 }] } },
    });
    await env.client.query('savepoint s');
    const denied = (await env.gql(
      UPSERT(
        '[{shop: "A", sku: "q", qty: 1}, {shop: "B", sku: "x", qty: 99}]',
        '{constraint: stock_shop_sku_key, updateColumns: [qty]}',
      ),
    )) as { data: unknown; errors: { message: string }[] };
    expect(denied.data).toBeNull();
    expect(denied.errors[0]?.message).toMatch(/row-level security/);
    await env.client.query('rollback to savepoint s');
    await env.client.query('reset role');
    expect(await rows()).toEqual(['Ax:11', 'Ay:2', 'Bx:3']);
  });
  it('authenticated: DO NOTHING on a row RLS hides inserts nothing and reports nothing', async () => {
    await as('authenticated', 'alice');
    const res = await env.gql(
      UPSERT('[{shop: "B", sku: "x", qty: 99}]', '{constraint: stock_shop_sku_key, updateColumns: []}'),
    );
    expect(res).toEqual({ data: { insertIntoStockCollection: { affectedCount: 0, records: [] } } });
  });
  it('anon: only columns with UPDATE privilege may be named; the primary key as target', async () => {
    await as('anon');
    const bad = await env.gql(
      UPSERT(
        '[{shop: "A", sku: "x", note: "n"}]',
        '{constraint: stock_shop_sku_key, updateColumns: [qty, note]}',
      ),
    );
    expect(bad).toEqual({ data: null, errors: [{ message: 'Invalid input for StockUpdateColumn type' }] });
    const ok = await env.gql(
      UPSERT('[{shop: "A", sku: "x", qty: 7}]', '{constraint: stock_shop_sku_key, updateColumns: [qty]}'),
    );
    expect(ok).toEqual({
      data: { insertIntoStockCollection: { affectedCount: 1, records: [{ shop: 'A', sku: 'x', qty: 7 }] } },
    });
  });
  it('bad input: unknown constraint, a variable naming one, extra keys; nothing is written', async () => {
    await as('service_role');
    const objects = '[{shop: "Z", sku: "z", qty: 1}]';
    expect(await env.gql(UPSERT(objects, '{constraint: stock_note_partial, updateColumns: []}'))).toEqual({
      data: null,
      errors: [{ message: 'Invalid input for StockConstraint type' }],
    });
    expect(
      await env.gql(
        'mutation M($c: StockConstraint!) { insertIntoStockCollection(objects: [{shop: "Z", sku: "z"}], onConflict: {constraint: $c, updateColumns: []}) { affectedCount } }',
        { c: 'nope' },
      ),
    ).toEqual({ data: null, errors: [{ message: 'Invalid input for StockConstraint type' }] });
    expect(await env.gql(UPSERT(objects, '{constraint: stock_pkey, updateColumns: [], where: {}}'))).toEqual({
      data: null,
      errors: [{ message: 'Input for type StockOnConflict contains extra keys ["where"]' }],
    });
    expect(await rows()).toEqual(['Ax:1', 'Ay:2', 'Bx:3']);
  });
});
