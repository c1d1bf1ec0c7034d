// Child process: time Strata's buildGraphQLSchema(client) on the 1,000-table schema `wide`,
// in a fresh process (the first call pays module loading and a cold JIT, as a new server would).
// Then rebuilds after a schema-version bump (a comment on one table, as the superuser), so the
// engine's catalog cache misses and the build runs again with a warm JIT.
// Env: DATABASE_URL (API login role), SUPERUSER_URL, SCHEMA (wide), ROLE (authenticated), REPEAT (2),
// SHAPE_OUT (a file for the built schema's shape, which schema-floor.mjs builds with graphql-js alone).
// Prints one line: SCHEMA_BUILD {"importMs":..,"catalogSqlMs":..,"runsMs":[first, rebuild...],"cpuMs":[..],"types":N,"queryFields":N}
// (cpuMs: this process's CPU time per run, which a busy machine disturbs less than runsMs).
import { writeFileSync } from 'node:fs';
import pg from 'pg';
import { dist } from './paths.mjs';
import { schemaShape } from './schema-shape.mjs';

const schemaName = process.env.SCHEMA ?? 'wide';
const tImport = performance.now();
const engine = await import(dist('graphql/engine.js'));
const importMs = performance.now() - tImport;
const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
await client.connect();
await client.query(`set role ${process.env.ROLE ?? 'authenticated'}`);
await client.query(`set search_path to ${schemaName}`);
const admin = process.env.SUPERUSER_URL
  ? new pg.Client({ connectionString: process.env.SUPERUSER_URL })
  : undefined;
await admin?.connect();

const runsMs = [];
const cpuMs = [];
/** @type {import('graphql').GraphQLSchema | undefined} */
let schema;
const time = async () => {
  const t = performance.now();
  const cpu = process.cpuUsage();
  schema = await engine.buildGraphQLSchema(client);
  runsMs.push(performance.now() - t);
  const used = process.cpuUsage(cpu);
  cpuMs.push((used.user + used.system) / 1000);
};
await time();
for (let i = 0; i < Number(process.env.REPEAT ?? 2) && admin; i++) {
  await admin.query(`comment on table ${schemaName}.t0001 is 'rebuild ${i}'`);
  await time();
}
// The catalog query alone (the SQL part of the first build), measured after the builds so the
// database side is warm, as it was for the rebuilds.
let catalogSqlMs;
try {
  const { CATALOG_SQL } = await import(dist('graphql/introspect/catalog-sql.js'));
  const t = performance.now();
  await client.query(CATALOG_SQL);
  catalogSqlMs = performance.now() - t;
} catch {}
if (!schema) throw new Error('no schema was built');
if (process.env.SHAPE_OUT) writeFileSync(process.env.SHAPE_OUT, JSON.stringify(schemaShape(schema)));
const types = Object.keys(schema.getTypeMap()).length;
const queryFields = Object.keys(schema.getQueryType()?.getFields() ?? {}).length;
await client.end();
await admin?.end();
console.log(`SCHEMA_BUILD ${JSON.stringify({ importMs, catalogSqlMs, runsMs, cpuMs, types, queryFields })}`);
