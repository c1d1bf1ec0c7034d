/**
 * M1 GET /v1/projects, M2 POST /v1/projects, and the adjacent GET /v1/projects/{ref},
 * DELETE /v1/projects/{ref} and GET /v1/projects/{ref}/api-keys.
 */
import type { ManagementModule } from '../http/module.js';
import { callerOf } from '../http/auth.js';
import { badRequest, RESOURCE_REMOVED } from '../http/errors.js';
import { authorizeRole, loadManagedOrganization, projectOf } from '../http/project-access.js';
import { CreateProjectBody, createProjectInput } from './create-body.js';
import { legacyApiKeys, listProjects, projectResponse } from './service.js';

export const projectRoutes: ManagementModule = async (app, { platform, services }) => {
  const { restrictions, serverVersions } = services;
  app.get('/projects', async (req) => {
    const projects = await listProjects(platform, callerOf(req).userId);
    return Promise.all(projects.map((p) => serverVersions.projectWithDatabase(p)));
  });

  app.post(
    '/projects',
    {
      schema: { body: CreateProjectBody },
      config: {
        failureMessage: 'Failed to create project',
        // The scope of M2's counter is the organization named in the body.
        managementRateLimit: {
          scope: (req) => {
            // Runs before validation: the body may be anything.
            const b = req.body as
              | { organization_slug?: unknown; organization_id?: unknown }
              | null
              | undefined;
            const org = b?.organization_slug ?? b?.organization_id;
            return typeof org === 'string' ? `org:${org}` : undefined;
          },
        },
      },
    },
    async (req, reply) => {
      const input = createProjectInput(req.body);
      const org = await loadManagedOrganization(
        platform,
        callerOf(req).userId,
        input.organizationSlug,
        'organization_slug',
      );
      authorizeRole(req, org.role);
      const ctx = await platform.createProject({
        name: input.name,
        organizationId: org.slug,
        region: input.region,
        dbPassword: input.dbPass,
      });
      // Acknowledged means created: a project whose server could not be updated for it is removed
      // again before the error is answered (a client that retries makes no duplicate).
      try {
        await restrictions.syncServer(ctx.dbServer);
      } catch (err) {
        await platform.deleteProject(ctx.ref).catch(() => {});
        throw err;
      }
      return reply.code(201).send(projectResponse(ctx));
    },
  );

  app.get('/projects/:ref', { config: { failureMessage: 'Failed to retrieve project' } }, async (req) => {
    return serverVersions.projectWithDatabase(projectOf(req));
  });

  app.delete('/projects/:ref', { config: { failureMessage: 'Failed to delete project' } }, async (req) => {
    const project = projectOf(req);
    if (project.isDefault) throw badRequest('The default project cannot be deleted');
    // Parallel deletes: one removes it (its function workers first: they hold sessions on the
    // database and its functions login); the others answer as for a removed project.
    const removed = await platform.deleteProject(project.ref, () =>
      platform.functionEvents.announceProjectRemoved(project.ref),
    );
    if (!removed) throw badRequest(RESOURCE_REMOVED);
    await restrictions.syncServer(project.dbServer);
    return { id: project.id, ref: project.ref, name: project.name };
  });

  app.get(
    '/projects/:ref/api-keys',
    { config: { failureMessage: "Failed to retrieve project's api keys" } },
    async (req) => {
      return legacyApiKeys(await projectOf(req).context());
    },
  );
};
