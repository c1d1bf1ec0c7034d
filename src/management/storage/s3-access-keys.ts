/**
 * S3 protocol access keys of a project (the platform has no public Management route for these;
 * modelled on the storage server's credentials admin API):
 *   GET    /v1/projects/{ref}/storage/s3-access-keys        → [{id, description, access_key, created_at}]
 *   POST   /v1/projects/{ref}/storage/s3-access-keys        {description?} → 201 {…, secret_key} (shown once)
 *   DELETE /v1/projects/{ref}/storage/s3-access-keys/{id}   → 200 {id}, 404 when unknown
 * A key acts as the project's service role on {project}/storage/v1/s3.
 */
import type { ManagementModule } from '../http/module.js';
import { badRequest, notFound } from '../http/errors.js';
import { projectOf } from '../http/project-access.js';
import { isObject, rejectUnknownKeys, stringField } from '../http/validate.js';
import { createAccessKey, deleteAccessKey, listAccessKeys } from '../../storage/s3/credentials.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const s3AccessKeyRoutes: ManagementModule = async (app, { platform }) => {
  app.get(
    '/projects/:ref/storage/s3-access-keys',
    { config: { failureMessage: "Failed to retrieve project's S3 access keys" } },
    async (req) => listAccessKeys(platform, projectOf(req).ref),
  );

  app.post(
    '/projects/:ref/storage/s3-access-keys',
    { config: { failureMessage: 'Failed to create S3 access key' } },
    async (req, reply) => {
      const project = projectOf(req);
      const body = req.body === undefined ? {} : req.body;
      if (!isObject(body)) throw badRequest('Body must be an object');
      rejectUnknownKeys(body, ['description']);
      const description = stringField(body, 'description', { maxLength: 500 }) ?? '';
      return reply.code(201).send(await createAccessKey(platform, project.ref, description));
    },
  );

  app.delete<{ Params: { ref: string; id: string } }>(
    '/projects/:ref/storage/s3-access-keys/:id',
    { config: { failureMessage: 'Failed to delete S3 access key' } },
    async (req) => {
      const project = projectOf(req);
      const id = req.params.id;
      if (!UUID.test(id)) throw badRequest('id must be a UUID');
      if (!(await deleteAccessKey(platform, project.ref, id))) throw notFound('S3 access key not found');
      return { id };
    },
  );
};
