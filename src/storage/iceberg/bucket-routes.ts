/** /iceberg/bucket: create, list and delete analytics buckets (the reference's routes/iceberg/bucket.ts). */
import { OPERATIONS } from '../operations.js';
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  type AnalyticsBucketRow,
  bucketHasNamespaces,
  deleteAnalyticsBucket,
  findAnalyticsBucket,
  icebergTx,
  insertAnalyticsBucket,
  listAnalyticsBuckets,
} from '../database/iceberg.js';
import { ListCount, StringEnum } from '../routes/schemas.js';
import { IcebergError, iceErrors } from './errors.js';
import { isObject } from './json.js';
import { type IcebergDeps, icebergScope } from './scope.js';

/**
 * An analytics bucket's name is the warehouse of its catalog and the host part of its s3:// URIs:
 * 3 to 63 lowercase letters, digits and hyphens, beginning and ending with a letter or digit (the
 * S3 bucket rules without dots), and not ending in the reserved `--table-s3`.
 */
const ANALYTICS_BUCKET = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;

function assertAnalyticsBucketName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || !ANALYTICS_BUCKET.test(name) || name.endsWith('--table-s3')) {
    throw new IcebergError(400, 'InvalidBucketName', 'Bucket name invalid');
  }
}

const ListQuery = Type.Object({
  limit: Type.Optional(ListCount(1)),
  offset: Type.Optional(ListCount(0)),
  search: Type.Optional(Type.String()),
  sortColumn: Type.Optional(StringEnum(['id', 'name', 'created_at', 'updated_at'])),
  sortOrder: Type.Optional(StringEnum(['asc', 'desc'])),
});

const bucketJson = (b: AnalyticsBucketRow) => ({
  id: b.name,
  name: b.name,
  created_at: b.created_at,
  updated_at: b.updated_at,
});

export async function icebergBucketRoutes(app: FastifyInstance, deps: IcebergDeps): Promise<void> {
  app.post('/bucket', async (req) => {
    const s = await icebergScope(deps, req);
    const body = req.body;
    if (!isObject(body) || typeof body.name !== 'string')
      throw iceErrors.badRequest("body must have required property 'name'");
    const name = body.name;
    assertAnalyticsBucketName(name);
    const row = await icebergTx(s.project, s.caller, OPERATIONS.ICEBERG_CREATE_BUCKET, (db) =>
      insertAnalyticsBucket(db, name),
    );
    if (!row) throw iceErrors.bucketExists();
    return bucketJson(row);
  });

  app.get(
    '/bucket',
    { schema: { querystring: ListQuery } },
    async (req: FastifyRequest<{ Querystring: Static<typeof ListQuery> }>) => {
      const s = await icebergScope(deps, req);
      const rows = await icebergTx(s.project, s.caller, OPERATIONS.ICEBERG_LIST_BUCKETS, (db) =>
        listAnalyticsBuckets(db, req.query),
      );
      return rows.map(bucketJson);
    },
  );

  app.delete<{ Params: { name: string } }>('/bucket/:name', async (req) => {
    const s = await icebergScope(deps, req);
    const name = req.params.name;
    await icebergTx(s.project, s.caller, OPERATIONS.ICEBERG_DELETE_BUCKET, async (db) => {
      const bucket = await findAnalyticsBucket(db, name, true);
      if (!bucket) throw iceErrors.noSuchBucket();
      if (await bucketHasNamespaces(db, bucket.id)) throw iceErrors.notEmpty('bucket', name);
      await deleteAnalyticsBucket(db, bucket.id);
    });
    return { message: 'Successfully deleted' };
  });
}
