/**
 * `/rest/v1/*` (PostgREST on the hosted platform, where supabase-js's `from()` goes) is not part
 * of Strata: every method answers 404 in PostgREST's error shape, so supabase-js surfaces a message
 * that says where the data is instead of a bare "Route not found".
 */
import type { FastifyInstance } from 'fastify';

export const REST_NOT_SERVED = {
  code: 'PGRST125',
  details: 'Strata serves no REST (PostgREST) API; `supabase.from()` and /rest/v1 are not available.',
  hint: 'Query the same tables through GraphQL: POST <project URL>/graphql/v1 with the same apikey (pg_graphql-compatible).',
  message: 'The REST API (/rest/v1) is not part of Strata: use GraphQL at /graphql/v1',
} as const;

export function registerRestNotServed(app: FastifyInstance): void {
  for (const path of ['/rest/v1', '/rest/v1/*'])
    app.all(path, async (_req, reply) => reply.code(404).send(REST_NOT_SERVED));
}
