/**
 * `PATCH /v1/projects/{ref}/database/password` `{"password"}` (≥ 4 characters, as the reference
 * schema): sets the password of the project's login `postgres.<ref>`; 200 `{"message"}`.
 * `POST|DELETE /v1/projects/{ref}/cli/login-role` (the CLI's temporary login roles, which then
 * `SET SESSION ROLE postgres`) cannot be honoured: 404 naming the feature and what to do instead.
 */
import type { ManagementModule } from '../http/module.js';
import { notFound } from '../http/errors.js';
import { projectOf } from '../http/project-access.js';
import { objectBody, rejectUnknownKeys, stringField } from '../http/validate.js';
import { checkDbPassword } from '../projects/create-body.js';
import { withClient } from '../../db/pool.js';
import { setProjectLoginPassword } from '../../platform/project-login.js';

export const CLI_LOGIN_ROLE_MESSAGE =
  "Temporary CLI login roles are not available on Strata: connect with the project's database password (supabase --password, or SUPABASE_DB_PASSWORD)";

export const databasePasswordRoutes: ManagementModule = async (app, { platform }) => {
  app.patch(
    '/projects/:ref/database/password',
    { config: { failureMessage: 'Failed to update database password' } },
    async (req) => {
      const body = objectBody(req.body);
      rejectUnknownKeys(body, ['password']);
      const password = checkDbPassword(
        stringField(body, 'password', { required: true, minLength: 4 }),
        'password',
      );
      const ctx = await projectOf(req).context();
      await withClient(ctx.superuserUrl, (c) => setProjectLoginPassword(c, ctx.ref, password));
      return { message: 'Database password updated' };
    },
  );

  for (const method of ['POST', 'DELETE'] as const)
    app.route({
      method,
      url: '/projects/:ref/cli/login-role',
      handler: async () => {
        throw notFound(CLI_LOGIN_ROLE_MESSAGE);
      },
    });
};
