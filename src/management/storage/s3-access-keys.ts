/**
 * S3 protocol access keys of a project (the platform has no public Management route for these;
 * modelled on the storage server's credentials admin API):
 *   GET    /v1/projects/{ref}/storage/s3-access-keys        → [{id, description, access_key, created_at}]
 *   POST   /v1/projects/{ref}/storage/s3-access-keys        {description?} → 201 {…, secret_key} (shown once)
 *   DELETE /v1/projects/{ref}/storage/s3-access-keys/{id}   → 200 {id}, 404 when unknown
 * A key acts as the project's service role on {project}/storage/v1/s3.
 */
import type { ManagementModule } from '../http/module.js';
import { Type } from '@sinclair/typebox';
import { notFound } from '../http/errors.js';
import { projectOf } from '../http/project-access.js';
import { optionalBody, Optional, Strict } from '../http/schemas.js';
import { createAccessKey, deleteAccessKey, listAccessKeys } from '../../storage/s3/credentials.js';

const NewKey = Strict(
  { description: Optional(Type.String({ maxLength: 500 })) },
  { messages: { type: 'Body must be an object' } },
);

const KeyParams = Type.Object({
  ref: Type.String(),
  id: Type.String({
    pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
    messages: { pattern: 'id must be a UUID' },
  }),
});

export const s3AccessKeyRoutes: ManagementModule = async (app, { platform }) => {
  app.get(
    '/projects/:ref/storage/s3-access-keys',
    { config: { failureMessage: "Failed to retrieve project's S3 access keys" } },
    async (req) => listAccessKeys(platform, projectOf(req).ref),
  );

  app.post(
    '/projects/:ref/storage/s3-access-keys',
    {
      ...optionalBody(NewKey),
      config: { failureMessage: 'Failed to create S3 access key' },
    },
    async (req, reply) => {
      const project = projectOf(req);
      const description = req.body.description ?? '';
      return reply.code(201).send(await createAccessKey(platform, project.ref, description));
    },
  );

  app.delete(
    '/projects/:ref/storage/s3-access-keys/:id',
    { schema: { params: KeyParams }, config: { failureMessage: 'Failed to delete S3 access key' } },
    async (req) => {
      const project = projectOf(req);
      const id = req.params.id;
      if (!(await deleteAccessKey(platform, project.ref, id))) throw notFound('S3 access key not found');
      return { id };
    },
  );
};
