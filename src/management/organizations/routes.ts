/** M3 GET /v1/organizations and M4 POST /v1/organizations. */
import type { ManagementModule } from '../http/module.js';
import { callerOf } from '../http/auth.js';
import { badRequest } from '../http/errors.js';
import { objectBody, rejectUnknownKeys, stringField } from '../http/validate.js';
import { createOrganization, listOrganizations } from './service.js';

export const organizationRoutes: ManagementModule = async (app, { platform }) => {
  app.get(
    '/organizations',
    { config: { failureMessage: 'Unexpected error listing organizations' } },
    async (req) => {
      return listOrganizations(platform, callerOf(req).userId);
    },
  );

  app.post(
    '/organizations',
    { config: { failureMessage: 'Unexpected error creating an organization' } },
    async (req, reply) => {
      const body = objectBody(req.body);
      rejectUnknownKeys(body, ['name']);
      const name = stringField(body, 'name', { required: true, maxLength: 256 });
      if (name.trim() === '') throw badRequest('name should not be empty');
      const org = await createOrganization(platform, callerOf(req).userId, name);
      return reply.code(201).send(org);
    },
  );
};
