/**
 * `POST /v1/projects/{ref}/console/role-token` `{role: 'authenticated', sub: '<uuid>'}` → 201
 * `{token, expires_at}`: a one-hour JWT of the project for a signed-in user with that id, so that the
 * console's GraphiQL can try the API as that user. Whoever may read the project's service_role key
 * (api-keys) may already sign anything, so the same role is needed here.
 */
import { Type } from '@sinclair/typebox';
import { signUserToken } from './user-token.js';
import { projectOf } from '../http/project-access.js';
import type { ManagementModule } from '../http/module.js';
import { Strict, StringEnum } from '../http/schemas.js';

const TTL_SECONDS = 3600;

const RoleTokenBody = Strict({
  role: StringEnum(['authenticated']),
  sub: Type.String({
    pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
  }),
});

export const consoleRoleTokenRoutes: ManagementModule = async (app) => {
  app.post(
    '/projects/:ref/console/role-token',
    { schema: { body: RoleTokenBody }, config: { failureMessage: 'Failed to create a role token' } },
    async (req, reply) => {
      const { sub } = req.body;
      const ctx = await projectOf(req).context();
      const { token, exp } = await signUserToken(ctx, sub, TTL_SECONDS);
      return reply.code(201).send({ token, expires_at: new Date(exp * 1000).toISOString() });
    },
  );
};
