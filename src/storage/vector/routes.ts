/**
 * Vector buckets, upstream's `/vector` routes (S3 Vectors' operations, each a POST with a JSON
 * body): CreateVectorBucket, GetVectorBucket, ListVectorBuckets, DeleteVectorBucket, CreateIndex,
 * GetIndex, ListIndexes, DeleteIndex, PutVectors, GetVectors, ListVectors, QueryVectors,
 * DeleteVectors. Service role only, as upstream (its role guard, after body validation): any other
 * caller gets 403 AccessDenied.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Caller, isServiceRole, requireCaller } from '../auth.js';
import { StorageError } from '../errors.js';
import { type StorageDeps, scopeOf } from '../routes/context.js';
import { vectorErrors } from './errors.js';
import * as service from './service.js';
import {
  BucketBody,
  CreateIndexBody,
  DeleteVectorsBody,
  GetVectorsBody,
  IndexBody,
  ListBucketsBody,
  ListIndexesBody,
  ListVectorsBody,
  PutVectorsBody,
  QueryVectorsBody,
  compileVectorSchema,
} from './validation.js';

/** PutVectors carries up to 500 vectors of up to 4096 numbers: upstream's 20 MiB body limit. */
const PUT_BODY_LIMIT = 20 * 1024 * 1024;

/** The service role's caller, else 403 in upstream's words (its JWT check and role guard). */
async function serviceCaller(req: FastifyRequest, deps: StorageDeps): Promise<service.VectorScope> {
  const { project } = scopeOf(deps, req);
  let caller: Caller;
  try {
    caller = await requireCaller(req, project);
  } catch (err) {
    if (!(err instanceof StorageError)) throw err;
    // No token: upstream verifies the empty string, which its JWT library calls malformed.
    throw vectorErrors.accessDenied(err.code === 'AccessDenied' ? err.message : 'Invalid Compact JWS');
  }
  if (!isServiceRole(caller)) throw vectorErrors.accessDenied('Access denied: Invalid role');
  return { project, caller };
}

export async function vectorRoutes(app: FastifyInstance, deps: StorageDeps): Promise<void> {
  app.setValidatorCompiler(compileVectorSchema);

  /** A POST route: body checked by `schema`, caller checked, then `work`; no result is an empty 200. */
  const route = <S extends TSchema>(
    name: string,
    schema: S,
    work: (scope: service.VectorScope, body: Static<S>) => Promise<unknown>,
    bodyLimit?: number,
  ) =>
    app.post<{ Body: Static<S> }>(
      `/${name}`,
      { schema: { body: schema }, ...(bodyLimit ? { bodyLimit } : {}) },
      async (req: FastifyRequest<{ Body: Static<S> }>, reply: FastifyReply) => {
        const scope = await serviceCaller(req, deps);
        const result = await work(scope, req.body);
        return result === undefined ? reply.code(200).send() : reply.code(200).send(result);
      },
    );

  route('CreateVectorBucket', BucketBody, (s, b) => service.createBucket(s, b.vectorBucketName));
  route('GetVectorBucket', BucketBody, (s, b) => service.getBucket(s, b.vectorBucketName));
  route('ListVectorBuckets', ListBucketsBody, (s, b) => service.listBuckets(s, b));
  route('DeleteVectorBucket', BucketBody, (s, b) => service.deleteBucket(s, b.vectorBucketName));

  route('CreateIndex', CreateIndexBody, (s, b) => service.createIndex(s, b));
  route('GetIndex', IndexBody, (s, b) => service.getIndex(s, b.vectorBucketName, b.indexName));
  route('ListIndexes', ListIndexesBody, (s, b) => service.listIndexes(s, b));
  route('DeleteIndex', IndexBody, (s, b) => service.deleteIndex(s, b.vectorBucketName, b.indexName));

  const putLimit = Math.max(PUT_BODY_LIMIT, deps.platform.config.bodyLimit);
  route('PutVectors', PutVectorsBody, (s, b) => service.putVectors(s, b), putLimit);
  route('GetVectors', GetVectorsBody, (s, b) => service.getVectors(s, b));
  route('ListVectors', ListVectorsBody, (s, b) => service.listVectors(s, b));
  route('QueryVectors', QueryVectorsBody, (s, b) => service.queryVectors(s, b));
  route('DeleteVectors', DeleteVectorsBody, (s, b) => service.deleteVectors(s, b));
}
