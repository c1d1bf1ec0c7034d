/**
 * GET /v1/organizations, POST /v1/organizations, and the adjacent GET
 * /v1/organizations/{slug} and GET /v1/organizations/{slug}/members (members are added and removed
 * with `strata users` on a self-hosted platform; the hosted API has no route for that either).
 */
import type { ManagementModule } from '../http/module.js';
import { callerOf } from '../http/auth.js';
import { Name, Strict } from '../http/schemas.js';
import { organizationOf } from '../http/project-access.js';
import { createOrganization, listOrganizations } from './service.js';
import { listMembers } from './members.js';

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
    {
      schema: { body: Strict({ name: Name }) },
      config: { failureMessage: 'Unexpected error creating an organization' },
    },
    async (req, reply) => {
      const org = await createOrganization(platform, callerOf(req).userId, req.body.name);
      return reply.code(201).send(org);
    },
  );

  app.get(
    '/organizations/:slug',
    { config: { failureMessage: 'Failed to retrieve organization' } },
    async (req) => {
      const org = organizationOf(req);
      return {
        id: org.slug,
        name: org.name,
        plan: 'free',
        opt_in_tags: [],
        allowed_release_channels: ['ga'],
      };
    },
  );

  app.get(
    '/organizations/:slug/members',
    { config: { failureMessage: 'Failed to retrieve organization members' } },
    async (req) => listMembers(platform.pool, organizationOf(req).slug),
  );
};
