// Plain Node http: the handler is a (req, res) listener.
import { createServer } from 'node:http';
import pg from 'pg';
import { createGraphQLHandler } from '../../dist/graphql/http/index.js';
import { mintApiKey } from '../../dist/auth/jwt.js';

const jwtSecret = process.env.JWT_SECRET;
if (!jwtSecret) throw new Error('set JWT_SECRET (and DATABASE_URL): see README');
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
const anonKey = await mintApiKey(jwtSecret, 'anon', 'example');
const handler = createGraphQLHandler({ pool, jwtSecret, anonKey, maxDepth: 16 });
createServer(handler).listen(4000, () => console.log(`http://127.0.0.1:4000/graphql/v1  apikey: ${anonKey}`));
