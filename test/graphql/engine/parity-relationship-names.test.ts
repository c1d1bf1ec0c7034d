/**
 * Several foreign keys between the same two tables. pg_graphql 1.6.1 names a relationship from its
 * key alone (graphql.rs graphql_foreign_key_field_name), so two keys whose names do not end in
 * `_id` (AdventureWorks' bill of materials: `productassemblyid` and `componentid`, both to
 * `product`) give two fields named `product`: pg_graphql lists both (an invalid schema) and a query
 * reads the last; Strata kept the last and dropped the other. Now each such relationship is named
 * `<name>By<Columns>`, a `local_name` / `foreign_name` directive keeps its name, a name only one
 * relationship takes stays pg_graphql's, and each renamed relationship is reported. Every
 * assertion on a renamed field failed before (one of the two relationships had no field).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSchema, printSchema, validateSchema } from 'graphql';
import { setupEnv, type Env } from './harness.js';
import { buildGraphQLSchema, reflectSchema } from '../../../src/graphql/engine.js';

const SCHEMA = `
comment on schema public is '@graphql({"inflect_names": true, "introspection": true})';
create table unitmeasure (unitmeasurecode char(3) primary key, name text not null);
create table product (
  productid int primary key, name text not null,
  sizeunitmeasurecode char(3) references unitmeasure(unitmeasurecode),
  weightunitmeasurecode char(3) references unitmeasure(unitmeasurecode)
);
create table bill_of_materials (
  billofmaterialsid int primary key,
  productassemblyid int references product(productid),
  componentid int not null references product(productid),
  perassemblyqty int not null
);
insert into unitmeasure values ('CM', 'Centimeter'), ('G', 'Gram');
insert into product values (1, 'Bike', 'CM', 'G'), (2, 'Wheel', null, 'G'), (3, 'Spoke', 'CM', null);
insert into bill_of_materials values (10, 1, 2, 2), (11, 2, 3, 32);

-- three keys to one table
create table place (id int primary key, name text not null);
create table trip (id int primary key, start_place int references place(id), end_place int references place(id), stop_place int references place(id));
insert into place values (1, 'A'), (2, 'B'), (3, 'C');
insert into trip values (1, 1, 2, 3);

-- a self-referencing pair: the to-one names differ (manager, mentor), the to-many ones do not
create table employee (id int primary key, name text not null, manager_id int references employee(id), mentor_id int references employee(id));
insert into employee values (1, 'boss', null, null), (2, 'ann', 1, 1), (3, 'bob', 1, 2);

-- directives win: one named by foreign_name "account", the other keeps nothing of pg_graphql's
create table account (id int primary key, name text not null);
create table transfer (id int primary key, payer int not null references account(id), payee int not null references account(id));
comment on constraint transfer_payer_fkey on transfer is '@graphql({"foreign_name": "account", "local_name": "paid"})';
insert into account values (1, 'x'), (2, 'y');
insert into transfer values (1, 1, 2);

-- the same column referencing two tables: <name>By<Columns> is taken by the first, the second
-- is named after its constraint
create table person (id int primary key);
create table org (id int primary key);
create table asset (id int primary key, owner_id int references person(id) references org(id));
insert into person values (1); insert into org values (1); insert into asset values (5, 1);

-- two directives giving one name: kept as given, and said
create table memo (id int primary key, a int references account(id), b int references account(id));
comment on constraint memo_a_fkey on memo is '@graphql({"foreign_name": "acct"})';
comment on constraint memo_b_fkey on memo is '@graphql({"foreign_name": "acct"})';
`;

let env: Env;
beforeAll(async () => {
  env = await setupEnv(SCHEMA);
});
afterAll(() => env.close());

async function fieldNames(type: string): Promise<string[]> {
  const r = (await env.gql(`{ __type(name: "${type}") { fields { name } } }`)) as {
    data: { __type: { fields: { name: string }[] } | null };
  };
  return (r.data.__type?.fields ?? []).map((f) => f.name);
}

describe('two or three foreign keys to one table', () => {
  it('both to-one relationships of a bill of materials are fields, named after their columns', async () => {
    const f = await fieldNames('BillOfMaterials');
    expect(f).toContain('productByProductassemblyid');
    expect(f).toContain('productByComponentid');
    expect(f).not.toContain('product');
    expect(
      await env.gql(
        '{ billOfMaterialsCollection { edges { node { billofmaterialsid productByProductassemblyid { name } productByComponentid { name } } } } }',
      ),
    ).toEqual({
      data: {
        billOfMaterialsCollection: {
          edges: [
            {
              node: {
                billofmaterialsid: 10,
                productByProductassemblyid: { name: 'Bike' },
                productByComponentid: { name: 'Wheel' },
              },
            },
            {
              node: {
                billofmaterialsid: 11,
                productByProductassemblyid: { name: 'Wheel' },
                productByComponentid: { name: 'Spoke' },
              },
            },
          ],
        },
      },
    });
  });

  it('the one-to-many side: each key has its own collection', async () => {
    const f = await fieldNames('Product');
    expect(f).toEqual(
      expect.arrayContaining([
        'unitmeasureBySizeunitmeasurecode',
        'unitmeasureByWeightunitmeasurecode',
        'billOfMaterialsCollectionByProductassemblyid',
        'billOfMaterialsCollectionByComponentid',
      ]),
    );
    expect(await fieldNames('Unitmeasure')).toEqual(
      expect.arrayContaining([
        'productCollectionBySizeunitmeasurecode',
        'productCollectionByWeightunitmeasurecode',
      ]),
    );
    const ids = (c: { edges: { node: { billofmaterialsid: number } }[] }) =>
      c.edges.map((e) => e.node.billofmaterialsid);
    const r = (await env.gql(
      '{ productByPk(productid: 2) { unitmeasureByWeightunitmeasurecode { name } billOfMaterialsCollectionByProductassemblyid { edges { node { billofmaterialsid } } } billOfMaterialsCollectionByComponentid { edges { node { billofmaterialsid } } } } unitmeasureByPk(unitmeasurecode: "CM") { productCollectionBySizeunitmeasurecode { edges { node { name } } } } }',
    )) as {
      data: {
        productByPk: {
          unitmeasureByWeightunitmeasurecode: { name: string };
          billOfMaterialsCollectionByProductassemblyid: { edges: { node: { billofmaterialsid: number } }[] };
          billOfMaterialsCollectionByComponentid: { edges: { node: { billofmaterialsid: number } }[] };
        };
        unitmeasureByPk: { productCollectionBySizeunitmeasurecode: { edges: { node: { name: string } }[] } };
      };
    };
    expect(r.data.productByPk.unitmeasureByWeightunitmeasurecode).toEqual({ name: 'Gram' });
    expect(ids(r.data.productByPk.billOfMaterialsCollectionByProductassemblyid)).toEqual([11]);
    expect(ids(r.data.productByPk.billOfMaterialsCollectionByComponentid)).toEqual([10]);
    expect(
      r.data.unitmeasureByPk.productCollectionBySizeunitmeasurecode.edges.map((e) => e.node.name),
    ).toEqual(['Bike', 'Spoke']);
  });

  it('three keys: three to-one fields and three collections', async () => {
    expect(await fieldNames('Trip')).toEqual(
      expect.arrayContaining(['placeByStartPlace', 'placeByEndPlace', 'placeByStopPlace']),
    );
    expect(await fieldNames('Place')).toEqual(
      expect.arrayContaining([
        'tripCollectionByStartPlace',
        'tripCollectionByEndPlace',
        'tripCollectionByStopPlace',
      ]),
    );
    expect(
      await env.gql(
        '{ tripCollection { edges { node { placeByStartPlace { name } placeByEndPlace { name } placeByStopPlace { name } } } } placeByPk(id: 3) { tripCollectionByStopPlace { edges { node { id } } } tripCollectionByStartPlace { edges { node { id } } } } }',
      ),
    ).toEqual({
      data: {
        tripCollection: {
          edges: [
            {
              node: {
                placeByStartPlace: { name: 'A' },
                placeByEndPlace: { name: 'B' },
                placeByStopPlace: { name: 'C' },
              },
            },
          ],
        },
        placeByPk: {
          tripCollectionByStopPlace: { edges: [{ node: { id: 1 } }] },
          tripCollectionByStartPlace: { edges: [] },
        },
      },
    });
  });

  it('a self-referencing pair: distinct to-one names stay pg_graphql’s, the two collections are told apart', async () => {
    const f = await fieldNames('Employee');
    expect(f).toEqual(
      expect.arrayContaining([
        'manager',
        'mentor',
        'employeeCollectionByManagerId',
        'employeeCollectionByMentorId',
      ]),
    );
    expect(f).not.toContain('employeeCollection');
    expect(
      await env.gql(
        '{ employeeByPk(id: 1) { employeeCollectionByManagerId { edges { node { name } } } employeeCollectionByMentorId { edges { node { name mentor { name } } } } } }',
      ),
    ).toEqual({
      data: {
        employeeByPk: {
          employeeCollectionByManagerId: { edges: [{ node: { name: 'ann' } }, { node: { name: 'bob' } }] },
          employeeCollectionByMentorId: { edges: [{ node: { name: 'ann', mentor: { name: 'boss' } } }] },
        },
      },
    });
  });

  it('a directive keeps its name; the other relationship that wanted it is renamed; an unshared name stays', async () => {
    const t = await fieldNames('Transfer');
    expect(t).toEqual(expect.arrayContaining(['account', 'accountByPayee']));
    // On account: `paid` (local_name) and the payee key's `transferCollection`, no longer shared.
    expect(await fieldNames('Account')).toEqual(expect.arrayContaining(['paid', 'transferCollection']));
    expect(
      await env.gql(
        '{ transferCollection { edges { node { account { name } accountByPayee { name } } } } accountByPk(id: 2) { transferCollection { edges { node { id } } } paid { edges { node { id } } } } }',
      ),
    ).toEqual({
      data: {
        transferCollection: { edges: [{ node: { account: { name: 'x' }, accountByPayee: { name: 'y' } } }] },
        accountByPk: { transferCollection: { edges: [{ node: { id: 1 } }] }, paid: { edges: [] } },
      },
    });
  });

  it('the same columns referencing two tables: the second is named after its constraint', async () => {
    expect(await fieldNames('Asset')).toEqual(
      expect.arrayContaining(['ownerByOwnerId', 'ownerViaAssetOwnerIdFkey1']),
    );
    expect(
      await env.gql(
        '{ assetCollection { edges { node { ownerByOwnerId { id } ownerViaAssetOwnerIdFkey1 { id } } } } }',
      ),
    ).toEqual({
      data: {
        assetCollection: {
          edges: [{ node: { ownerByOwnerId: { id: 1 }, ownerViaAssetOwnerIdFkey1: { id: 1 } } }],
        },
      },
    });
    const { warnings } = await reflectSchema(env.client);
    expect(warnings).toContainEqual(
      expect.stringMatching(/^Memo\.acct: directives give 2 relationships this name .*the last one answers/),
    );
  });

  it('every renamed relationship is reported with the directive that names it; the schema is valid SDL', async () => {
    const { warnings } = await reflectSchema(env.client);
    const about = (field: string) => warnings.filter((w) => w.startsWith(`${field}:`));
    expect(about('BillOfMaterials.productByComponentid')).toEqual([
      expect.stringMatching(
        /public\.bill_of_materials\(componentid\) → public\.product\(productid\) is named productByComponentid, not "product".*comment on constraint "bill_of_materials_componentid_fkey" on "public"\."bill_of_materials" is '@graphql\(\{"foreign_name": "…"\}\)'/,
      ),
    ]);
    expect(about('Product.billOfMaterialsCollectionByComponentid')).toEqual([
      expect.stringContaining('"local_name"'),
    ]);
    expect(about('Transfer.accountByPayee')).toHaveLength(1);
    expect(about('Transfer.account')).toEqual([]);
    // bill of materials 8, trip 6, employee 2, transfer 1, asset 2, memo (to-many side) 2
    expect(warnings.filter((w) => / is named /.test(w))).toHaveLength(8 + 6 + 2 + 1 + 2 + 2);
    const sdl = printSchema(await buildGraphQLSchema(env.client));
    expect(validateSchema(buildSchema(sdl))).toEqual([]);
  });
});
