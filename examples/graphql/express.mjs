// Express: the same handler as middleware; other paths fall through to the next route.
import express from 'express';
import pg from 'pg';
import { createGraphQLHandler } from '../../dist/graphql/http/index.js';
import { mintApiKey } from '../../dist/auth/jwt.js';

const jwtSecret = process.env.JWT_SECRET;
if (!jwtSecret) throw new Error('set JWT_SECRET (and DATABASE_URL): see README');
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
const anonKey = await mintApiKey(jwtSecret, 'anon', 'example');
const app = express();
app.use(createGraphQLHandler({ pool, jwtSecret, anonKey, basePath: '/api' })); // → /api/graphql/v1
app.get('/health', (_req, res) => res.json({ ok: true }));
app.listen(4000, () => console.log(`http://127.0.0.1:4000/api/graphql/v1  apikey: ${anonKey}`));
