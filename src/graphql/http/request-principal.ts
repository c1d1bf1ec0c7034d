/** The Principal of one GraphQL request: the apikey header must be the project's, a bearer JWT picks the user. */
import type { IncomingHttpHeaders } from 'node:http';
import { principalOf, AuthError } from '../../auth/principal.js';
import { apiKeyOf, bearerOf } from '../../auth/request-credentials.js';
import type { Principal } from '../../db/with-role.js';
import type { GraphQLTarget } from './options.js';

export { AuthError };

/** Reads one request header by its lower-case name. */
export type HeaderGetter = (name: string) => string | null | undefined;

/** Throws AuthError (→ 401) when the credentials are missing or not the target project's. */
export function principalOfRequest(target: GraphQLTarget, header: HeaderGetter): Promise<Principal> {
  const nodeHeaders: IncomingHttpHeaders = {
    apikey: header('apikey') ?? undefined,
    authorization: header('authorization') ?? undefined,
  };
  return principalOf(
    {
      jwtSecret: target.jwtSecret,
      anonKey: target.anonKey ?? '',
      serviceRoleKey: target.serviceRoleKey ?? '',
    },
    apiKeyOf(nodeHeaders),
    bearerOf(nodeHeaders),
  );
}
