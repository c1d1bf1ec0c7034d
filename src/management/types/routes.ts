/** GET /v1/projects/{ref}/types/typescript?included_schemas=public,other */
import type { ManagementModule } from '../http/module.js';
import { projectOf } from '../http/project-access.js';
import { badRequest } from '../http/errors.js';
import { withProjectLoginSession } from '../database/project-login-session.js';
import { loadTypegenCatalog } from './catalog.js';
import { generateTypescript } from './template.js';

/** The schemas asked for (default `public`), in request order, without duplicates. */
export function parseIncludedSchemas(raw: unknown): string[] {
  if (raw === undefined || raw === '') return ['public'];
  if (typeof raw !== 'string') throw badRequest('included_schemas must be a string');
  const names = [
    ...new Set(
      raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
  if (names.length === 0) return ['public'];
  if (names.some((n) => n.length > 63))
    throw badRequest('included_schemas: schema names are at most 63 characters');
  return names;
}

export const typesRoutes: ManagementModule = async (app, { platform }) => {
  app.get(
    '/projects/:ref/types/typescript',
    { config: { failureMessage: 'Failed to generate TypeScript types' } },
    async (req) => {
      const schemas = parseIncludedSchemas((req.query as Record<string, unknown>).included_schemas);
      const ctx = await projectOf(req).context();
      // As the project's login: the catalog is readable by it, and what the tenant may have planted on
      // this path (a function shadowing a catalog one in `public`) runs with the tenant's privileges.
      const types = await withProjectLoginSession(platform, ctx, async (c) => {
        await c.query('begin transaction read only');
        try {
          await c.query(`set local statement_timeout = '30s'`);
          return generateTypescript(await loadTypegenCatalog(c, schemas));
        } finally {
          await c.query('rollback').catch(() => {});
        }
      });
      return { types };
    },
  );
};
