/**
 * Sub-resources S3 clients read although Strata keeps nothing for them, answered as AWS answers for
 * a bucket or object that never had any: GetBucketVersioning (a never-versioned bucket is an empty
 * VersioningConfiguration, no Status) and GetObjectTagging (an empty TagSet). Both check that the
 * bucket (and object) exist and that the caller may read them.
 */
import { assertKey } from '../keys.js';
import { bucketLimits } from '../service/buckets.js';
import { requireObject } from '../service/objects.js';
import { sendXml, type S3Request } from './context.js';
import { toXml } from './xml.js';
import { OPERATIONS } from '../operations.js';

export async function getBucketVersioning(r: S3Request): Promise<unknown> {
  await bucketLimits(r.project, r.bucket);
  return sendXml(r, 200, toXml('VersioningConfiguration', {}));
}

export async function getObjectTagging(r: S3Request): Promise<unknown> {
  assertKey(r.key);
  await requireObject(r.project, r.caller, OPERATIONS.S3_GET_OBJECT_TAGGING, r.bucket, r.key);
  return sendXml(r, 200, toXml('Tagging', { TagSet: '' }));
}
