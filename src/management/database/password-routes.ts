/**
 * `PATCH /v1/projects/{ref}/database/password` `{"password"}` (≥ 4 characters, as the reference
 * schema): sets the password of the project's login `postgres.<ref>`; 200 `{"message"}`.
 * `POST|DELETE /v1/projects/{ref}/cli/login-role` (the CLI's temporary login roles, which then
 * `SET SESSION ROLE postgres`) cannot be honoured: 404 naming the feature and what to do instead.
 */
import type { ManagementModule } from '../http/module.js';
import { refuse } from '../http/errors.js';
import { projectOf } from '../http/project-access.js';
import { Strict } from '../http/schemas.js';
import { DbPassword } from '../projects/create-body.js';
import { setProjectLoginPassword } from '../../platform/project-login.js';
import { withSuperuserSession } from '../../db/superuser-session.js';

export const CLI_LOGIN_ROLE_MESSAGE =
  "Temporary CLI login roles are not available on Strata: connect with the project's database password (supabase --password, or SUPABASE_DB_PASSWORD)";

export const databasePasswordRoutes: ManagementModule = async (app, { platform }) => {
  app.patch(
    '/projects/:ref/database/password',
    {
      schema: { body: Strict({ password: DbPassword(4) }) },
      config: { failureMessage: 'Failed to update database password' },
    },
    async (req) => {
      const ctx = await projectOf(req).context();
      await withSuperuserSession(ctx.superuserUrl, (c) =>
        setProjectLoginPassword(c, ctx.ref, req.body.password),
      );
      return { message: 'Database password updated' };
    },
  );

  app.route({
    method: ['POST', 'DELETE'],
    url: '/projects/:ref/cli/login-role',
    handler: refuse(CLI_LOGIN_ROLE_MESSAGE),
  });
};
