/**
 * The server tells its log what `strata sdl` warns about: when a catalog is first loaded (for a
 * role, search_path and schema version), every relationship renamed because two would share a
 * name (and every table left out for a type-name clash) is one notice, on both request paths
 * (direct JSON and graphql-yoga). Before, nothing was said and one relationship was silently
 * unreachable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGraphQLHandler } from '../../../src/graphql/http/handler.js';
import { connect } from '../../support/database.js';
import { graphqlTestDb, listen, type GraphQLTestDb } from './support.js';
import { postGraphQL } from '../../support/graphql.js';

let t: GraphQLTestDb;
let server: Awaited<ReturnType<typeof listen>>;
const notices: string[] = [];

beforeAll(async () => {
  t = await graphqlTestDb('gqlnotices');
  const c = await connect(t.db.url);
  try {
    await c.query(`
      create table public.product (productid int primary key, name text not null);
      create table public.bill_of_materials (id int primary key,
        productassemblyid int references public.product(productid), componentid int references public.product(productid));
      insert into public.product values (1, 'Bike'), (2, 'Wheel');
      insert into public.bill_of_materials values (10, 1, 2);
      grant select on public.product, public.bill_of_materials to anon;`);
  } finally {
    await c.end();
  }
  server = await listen(
    createGraphQLHandler({
      pool: t.pool,
      jwtSecret: t.jwtSecret,
      anonKey: t.anonKey,
      serviceRoleKey: t.serviceRoleKey,
      onSchemaNotice: (m) => notices.push(m),
    }),
  );
});
afterAll(async () => {
  await server?.close();
  await t?.close();
});

describe('schema notices in the server log', () => {
  it('a renamed relationship is logged once per loaded catalog, and the request is answered', async () => {
    const query =
      '{ bill_of_materialsCollection { edges { node { productByProductassemblyid { name } productByComponentid { name } } } } }';
    const r = await postGraphQL(`${server.url}/graphql/v1`, { query }, { apikey: t.anonKey });
    expect(r.json).toEqual({
      data: {
        bill_of_materialsCollection: {
          edges: [
            {
              node: { productByProductassemblyid: { name: 'Bike' }, productByComponentid: { name: 'Wheel' } },
            },
          ],
        },
      },
    });
    const renamed = (list: string[]) => list.filter((m) => / is named /.test(m)).sort();
    expect(renamed(notices)).toEqual([
      expect.stringMatching(
        /^bill_of_materials\.productByComponentid: the relationship public\.bill_of_materials\(componentid\)/,
      ),
      expect.stringMatching(/^bill_of_materials\.productByProductassemblyid: /),
      expect.stringMatching(/^product\.bill_of_materialsCollectionByComponentid: .*"local_name"/),
      expect.stringMatching(/^product\.bill_of_materialsCollectionByProductassemblyid: /),
    ]);
    const count = notices.length;
    await postGraphQL(`${server.url}/graphql/v1`, { query }, { apikey: t.anonKey });
    expect(notices).toHaveLength(count);

    // A directive names one relationship (a new schema version): the graphql-yoga path (a browser's
    // Origin) loads the new catalog, and the log says what is left: the to-many side.
    const c = await connect(t.db.url);
    try {
      await c.query(
        `comment on constraint bill_of_materials_productassemblyid_fkey on public.bill_of_materials is '@graphql({"foreign_name": "assembly"})'`,
      );
    } finally {
      await c.end();
    }
    notices.length = 0;
    const y = await postGraphQL(
      `${server.url}/graphql/v1`,
      { query: '{ bill_of_materialsCollection { edges { node { assembly { name } product { name } } } } }' },
      { apikey: t.anonKey, origin: 'http://example.test' },
    );
    expect(y.json).toEqual({
      data: {
        bill_of_materialsCollection: {
          edges: [{ node: { assembly: { name: 'Bike' }, product: { name: 'Wheel' } } }],
        },
      },
    });
    expect(renamed(notices)).toEqual([
      expect.stringMatching(/^product\.bill_of_materialsCollectionByComponentid: /),
      expect.stringMatching(/^product\.bill_of_materialsCollectionByProductassemblyid: /),
    ]);
  });
});
