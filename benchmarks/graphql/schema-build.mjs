// Child process: time Strata's buildGraphQLSchema(client) on the 1,000-table schema `wide`,
// in a fresh process (the first call pays module loading and a cold JIT, as a new server would).
// Env: DATABASE_URL (API login role), SCHEMA (wide), ROLE (authenticated), REPEAT (3).
// Prints one line: SCHEMA_BUILD {"runsMs":[...],"types":N,"queryFields":N}
import pg from 'pg';
import { dist } from './paths.mjs';

const tImport = performance.now();
const engine = await import(dist('graphql/engine.js'));
const importMs = performance.now() - tImport;
const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
await client.connect();
await client.query(`set role ${process.env.ROLE ?? 'authenticated'}`);
await client.query(`set search_path to ${process.env.SCHEMA ?? 'wide'}`);
const runsMs = [];
let schema;
for (let i = 0; i < Number(process.env.REPEAT ?? 3); i++) {
  const t = performance.now();
  schema = await engine.buildGraphQLSchema(client);
  runsMs.push(performance.now() - t);
}
const types = Object.keys(schema.getTypeMap()).length;
const queryFields = Object.keys(schema.getQueryType()?.getFields() ?? {}).length;
await client.end();
console.log(`SCHEMA_BUILD ${JSON.stringify({ importMs, runsMs, types, queryFields })}`);
