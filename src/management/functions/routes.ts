/**
 * Edge functions under /v1/projects/{ref}/functions: create (JSON, eszip or raw body; metadata
 * also from the query), list, get, update (PATCH), delete, body (raw, or multipart with
 * `Accept: multipart/form-data`); plus the non-spec GET .../functions/{function_slug}/runtime-config
 * (functions/runtime-config.ts) and .../logs. Records, uploads and runtime config come from
 * src/functions/; each change is announced on platform.functionEvents for the runtime.
 * The path parameter is `:function_slug` as in the spec (`:slug` means an organization here).
 */
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { ManagementModule } from '../http/index.js';
import { ApiError, badRequest, badRequestOn, notFound, oneMessage, projectOf } from '../http/index.js';
import {
  deleteFunction,
  DuplicateSlugError,
  getFunction,
  getFunctionBody,
  insertFunction,
  listFunctions,
  updateFunction,
} from '../../functions/function-store.js';
import {
  FunctionInputError,
  parseUpload,
  PATH_SLUG,
  SOURCE_CONTENT_TYPE,
  type ParsedUpload,
} from '../../functions/function-input.js';
import { functionResponse } from './function-response.js';
import {
  entrypointFileName,
  sourceMultipart,
  wantsMultipart,
} from '../../functions/function-body-multipart.js';
import { runtimeConfig } from '../../functions/runtime-config.js';
import { registerDeployRoute } from './deploy-route.js';

export const FUNCTION_NOT_FOUND = 'Function not found';
/** Function uploads (eszip bundles) may be larger than JSON bodies. */
const UPLOAD_LIMIT = 20 * 1024 * 1024;

/** `:function_slug` of the routes of one function. */
const FunctionParams = Type.Object({
  ref: Type.String(),
  function_slug: Type.String({ pattern: PATH_SLUG.source }),
});

const LogsQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({ minimum: 1, messages: oneMessage('limit must be a positive integer', ['minimum']) }),
  ),
});

function upload(req: FastifyRequest, mode: 'create' | 'update'): Promise<ParsedUpload> {
  const query = req.query as Record<string, unknown>;
  return badRequestOn([FunctionInputError], () =>
    parseUpload(req.headers['content-type'], req.body as Buffer | undefined, query, mode),
  );
}

export const functionRoutes: ManagementModule = async (app, { platform, functions }) => {
  const announce = (ref: string, slug: string) => platform.functionEvents.announceChange(ref, slug);
  // In this scope every body arrives as raw bytes: JSON, eszip and anything else are told apart
  // by parseUpload (supabase-management-js v2 sends JSON without a content type).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    '*',
    { parseAs: 'buffer', bodyLimit: Math.max(UPLOAD_LIMIT, platform.config.bodyLimit) },
    (_req, body, done) => done(null, body),
  );
  const uploadOpts = { bodyLimit: Math.max(UPLOAD_LIMIT, platform.config.bodyLimit) };
  registerDeployRoute(app, platform, functions, uploadOpts.bodyLimit);

  app.post(
    '/projects/:ref/functions',
    { ...uploadOpts, config: { failureMessage: "Failed to create project's function" } },
    async (req, reply) => {
      const project = projectOf(req);
      const { fields, body } = await upload(req, 'create');
      const { slug } = fields;
      if (!slug) throw badRequest('slug is required');
      if (!body) throw badRequest('body is required');
      const name = fields.name ?? slug;
      const created = await badRequestOn([DuplicateSlugError], () =>
        insertFunction(platform, project.ref, { ...fields, slug, name }, body),
      );
      announce(project.ref, created.slug);
      return reply.code(201).send(functionResponse(created));
    },
  );

  app.get(
    '/projects/:ref/functions',
    { config: { failureMessage: "Failed to retrieve project's functions" } },
    async (req) => (await listFunctions(platform, projectOf(req).ref)).map(functionResponse),
  );

  app.get(
    '/projects/:ref/functions/:function_slug',
    {
      schema: { params: FunctionParams },
      config: { failureMessage: 'Failed to retrieve function with given slug' },
    },
    async (req) => {
      const f = await getFunction(platform, projectOf(req).ref, req.params.function_slug);
      if (!f) throw notFound(FUNCTION_NOT_FOUND);
      return functionResponse(f);
    },
  );

  app.patch(
    '/projects/:ref/functions/:function_slug',
    {
      ...uploadOpts,
      schema: { params: FunctionParams },
      config: { failureMessage: 'Failed to update function with given slug' },
    },
    async (req) => {
      const project = projectOf(req);
      const slug = req.params.function_slug;
      const { fields, body } = await upload(req, 'update');
      const updated = await badRequestOn([DuplicateSlugError], () =>
        updateFunction(platform, project.ref, slug, fields, body),
      );
      if (!updated) throw notFound(FUNCTION_NOT_FOUND);
      announce(project.ref, slug);
      if (updated.slug !== slug) announce(project.ref, updated.slug);
      return functionResponse(updated);
    },
  );

  app.delete(
    '/projects/:ref/functions/:function_slug',
    {
      schema: { params: FunctionParams },
      config: { failureMessage: 'Failed to delete function with given slug' },
    },
    async (req) => {
      const ref = projectOf(req).ref;
      const slug = req.params.function_slug;
      if (!(await deleteFunction(platform, ref, slug))) throw notFound(FUNCTION_NOT_FOUND);
      announce(ref, slug);
      return { message: 'ok' };
    },
  );

  app.get(
    '/projects/:ref/functions/:function_slug/body',
    {
      schema: { params: FunctionParams },
      config: { failureMessage: 'Failed to retrieve function body with given slug' },
    },
    async (req, reply) => {
      const stored = await getFunctionBody(platform, projectOf(req).ref, req.params.function_slug);
      if (!stored) throw notFound(FUNCTION_NOT_FOUND);
      if (wantsMultipart(req.headers.accept)) {
        // A deployed bundle is stored as the form itself.
        if (/^multipart\/form-data/i.test(stored.contentType))
          return reply.type(stored.contentType).send(stored.bytes);
        if (stored.contentType !== SOURCE_CONTENT_TYPE) {
          throw new ApiError(
            400,
            'This function was uploaded as a bundle; server-side unbundling is not supported: request the body without Accept: multipart/form-data',
          );
        }
        const form = sourceMultipart(entrypointFileName(stored.record.entrypointPath), stored.bytes);
        return reply.type(form.contentType).send(form.body);
      }
      return reply.type(stored.contentType).header('x-body-sha256', stored.sha256).send(stored.bytes);
    },
  );

  app.get(
    '/projects/:ref/functions/:function_slug/runtime-config',
    {
      schema: { params: FunctionParams },
      config: { failureMessage: 'Failed to retrieve function runtime config' },
    },
    async (req) => {
      const project = projectOf(req);
      const f = await getFunction(platform, project.ref, req.params.function_slug);
      if (!f) throw notFound(FUNCTION_NOT_FOUND);
      return runtimeConfig(
        platform,
        await project.context(),
        `http://${project.ref}.localhost:${req.socket.localPort ?? ''}`,
        f,
      );
    },
  );

  // V1BulkUpdateFunctions: the CLI calls it after deploying several functions with
  // bundle_only=true. Deploys here apply at once, so this confirms each named function
  // (verify_jwt and name as given) and answers the stored records.
  app.put(
    '/projects/:ref/functions',
    { config: { failureMessage: "Failed to update project's functions" } },
    async (req) => {
      const ref = projectOf(req).ref;
      let items: unknown;
      try {
        items = JSON.parse(((req.body as Buffer | undefined) ?? Buffer.alloc(0)).toString('utf8'));
      } catch {
        throw badRequest('Request body must be a JSON array');
      }
      if (!Array.isArray(items)) throw badRequest('Request body must be a JSON array');
      const out = [];
      for (const item of items as Array<Record<string, unknown>>) {
        const slug = typeof item?.slug === 'string' ? item.slug : '';
        if (!PATH_SLUG.test(slug)) throw badRequest('slug must match pattern "^[A-Za-z0-9_-]+$"');
        const current = await getFunction(platform, ref, slug);
        if (!current) throw notFound(FUNCTION_NOT_FOUND);
        const fields = {
          name: typeof item.name === 'string' && item.name !== current.name ? item.name : undefined,
          verifyJwt:
            typeof item.verify_jwt === 'boolean' && item.verify_jwt !== current.verifyJwt
              ? item.verify_jwt
              : undefined,
        };
        const changed =
          fields.name !== undefined || fields.verifyJwt !== undefined
            ? await updateFunction(platform, ref, slug, fields, undefined)
            : current;
        if (!changed) throw notFound(FUNCTION_NOT_FOUND);
        if (changed !== current) announce(ref, slug);
        out.push(functionResponse(changed));
      }
      return { functions: out };
    },
  );

  // Non-spec: the function's recent invocations and console output (bounded; platform database).
  app.get(
    '/projects/:ref/functions/:function_slug/logs',
    {
      schema: { params: FunctionParams, querystring: LogsQuery },
      config: { failureMessage: 'Failed to retrieve function logs' },
    },
    async (req) => {
      const ref = projectOf(req).ref;
      const slug = req.params.function_slug;
      const { limit } = req.query;
      return { result: await functions.readLogs(ref, slug, limit) };
    },
  );
};
