/**
 * Local development: pg_graphql leaves introspection off (a schema opts in with a comment
 * directive), so GraphiQL's docs explorer shows nothing, and words some errors without naming what
 * is wrong. The default project `npm start` creates opts its `public` schema in to introspection and
 * to Strata's `detailed_errors` once, when it is created; a deployed project keeps pg_graphql's
 * defaults, and a `public` comment that already carries an `@graphql(...)` directive is kept as is.
 */
import type pg from 'pg';
import { quoteLiteral } from '../../db/sql-text.js';

export const INTROSPECTION_DIRECTIVE = '@graphql({"introspection": true})';

/** What the default local project's `public` schema gets. */
export const LOCAL_DEVELOPMENT_DIRECTIVE =
  '@graphql({"introspection": true, "strata": {"detailed_errors": true}})';

/** How a person turns introspection on for a schema (GraphiQL page, `npm start` banner). */
export const INTROSPECTION_HINT = `comment on schema public is '${INTROSPECTION_DIRECTIVE}';`;

/** Turns introspection (and detailed errors) on for `public` unless its comment already has a directive; true when it did. */
export async function enableIntrospectionForLocalDevelopment(client: pg.ClientBase): Promise<boolean> {
  const { rows } = await client.query<{ comment: string | null }>(
    `select obj_description(oid, 'pg_namespace') as comment from pg_namespace where nspname = 'public'`,
  );
  if (!rows[0]) return false;
  const comment = rows[0].comment;
  if (comment?.includes('@graphql(')) return false;
  const text = comment ? `${comment}\n${LOCAL_DEVELOPMENT_DIRECTIVE}` : LOCAL_DEVELOPMENT_DIRECTIVE;
  await client.query(`comment on schema public is ${quoteLiteral(text)}`);
  return true;
}
