/**
 * POST /v1/projects/{ref}/functions/deploy?slug=… (V1DeployAFunction): the multipart upload the
 * Supabase CLI sends with `--use-api` — a `metadata` field (entrypoint_path, import_map_path,
 * name, verify_jwt, static_patterns) and one `file` part per source file, named by its path.
 * Creates the function or replaces its code (version + 1); answers 201 with the function.
 * The module graph must resolve offline from the upload and the platform's Deno cache, else 400.
 */
import type { FastifyInstance } from 'fastify';
import { createHash } from 'node:crypto';
import type { Platform } from '../../platform/platform.js';
import { badRequest, projectOf } from '../http/index.js';
import { readMultipartBundle } from '../../functions/bundle.js';
import { BundleError, findFile, type Bundle } from '../../functions/bundle-files.js';
import { UnresolvedImportError } from '../../functions/import-check.js';
import type { FunctionsRuntimeAccess } from '../../functions/runtime-access.js';
import {
  DuplicateSlugError,
  getFunction,
  insertFunction,
  updateFunction,
} from '../../functions/function-store.js';
import { PATH_SLUG } from '../../functions/function-input.js';
import { filesMultipart } from '../../functions/function-body-multipart.js';
import { functionResponse } from './function-response.js';

function optionalString(metadata: Record<string, unknown>, name: string): string | undefined {
  const v = metadata[name];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw badRequest(`metadata.${name} must be a string`);
  return v;
}

export function registerDeployRoute(
  app: FastifyInstance,
  platform: Platform,
  functions: FunctionsRuntimeAccess,
  bodyLimit: number,
): void {
  app.post(
    '/projects/:ref/functions/deploy',
    { bodyLimit, config: { failureMessage: 'Failed to deploy function' } },
    async (req, reply) => {
      const project = projectOf(req);
      const query = req.query as Record<string, unknown>;
      const slug = typeof query.slug === 'string' ? query.slug : '';
      if (slug.length > 128 || !PATH_SLUG.test(slug))
        throw badRequest('slug must match pattern "^[A-Za-z0-9_-]+$"');
      const contentType = req.headers['content-type'] ?? '';
      if (!/^multipart\/form-data\s*;/i.test(contentType))
        throw badRequest('Request body must be multipart/form-data with metadata and file parts');
      let bundle: Bundle;
      let metadata: Record<string, unknown>;
      try {
        const form = await readMultipartBundle(
          (req.body as Buffer | undefined) ?? Buffer.alloc(0),
          contentType,
        );
        metadata = form.metadata;
        if (form.files.size === 0) throw new BundleError('At least one file part is required');
        const entrypointPath = optionalString(metadata, 'entrypoint_path');
        if (!entrypointPath) throw new BundleError('metadata.entrypoint_path is required');
        const entry = findFile(form.files, entrypointPath);
        if (!entry) throw new BundleError(`Entrypoint ${entrypointPath} is not among the uploaded files`);
        const importMapPath = optionalString(metadata, 'import_map_path');
        const importMap = importMapPath ? findFile(form.files, importMapPath) : undefined;
        if (importMapPath && !importMap)
          throw new BundleError(`Import map ${importMapPath} is not among the uploaded files`);
        bundle = { files: form.files, entry, importMap };
      } catch (err) {
        if (err instanceof BundleError) throw badRequest(err.message);
        throw err;
      }
      const verifyJwt = metadata.verify_jwt;
      if (verifyJwt !== undefined && typeof verifyJwt !== 'boolean')
        throw badRequest('metadata.verify_jwt must be a boolean');
      const name = optionalString(metadata, 'name') ?? slug;

      try {
        await functions.checkImports(bundle);
      } catch (err) {
        if (err instanceof UnresolvedImportError)
          throw badRequest(`Failed to bundle the function: ${err.message}`);
        throw err;
      }

      const stored = filesMultipart(
        { deno2_entrypoint_path: bundle.entry, import_map_path: bundle.importMap },
        bundle.files,
      );
      const body = {
        bytes: stored.body,
        contentType: stored.contentType,
        sha256: createHash('sha256').update(stored.body).digest('hex'),
      };
      const fields = {
        name,
        verifyJwt: verifyJwt as boolean | undefined,
        entrypointPath: optionalString(metadata, 'entrypoint_path'),
        importMapPath: optionalString(metadata, 'import_map_path'),
        importMap: bundle.importMap !== undefined,
      };
      const existing = await getFunction(platform, project.ref, slug);
      const saved = existing
        ? await updateFunction(platform, project.ref, slug, fields, body)
        : await insertFunction(platform, project.ref, { ...fields, slug }, body).catch((err) => {
            // Created concurrently by another deploy: this one replaces it.
            if (err instanceof DuplicateSlugError)
              return updateFunction(platform, project.ref, slug, fields, body);
            throw err;
          });
      platform.functionEvents.announceChange(project.ref, slug);
      if (!saved) throw new Error('deployed function vanished');
      return reply.code(201).send(functionResponse(saved));
    },
  );
}
