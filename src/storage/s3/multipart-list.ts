/**
 * ListMultipartUploads: the bucket's unfinished multipart uploads, ordered by key (byte order,
 * `collate "C"`) then by when they were created, as the reference orders them. `key-marker` alone
 * resumes after every upload of that key; with `upload-id-marker` it resumes after that upload of
 * the key (AWS). `prefix` filters, `delimiter` rolls keys up into CommonPrefixes. A caller other
 * than the service role sees only the uploads it created (as every other multipart call).
 */
import { isServiceRole, SERVICE } from '../auth.js';
import { inTx, selectUploadsPage, type UploadListRow } from '../database/index.js';
import { OPERATIONS } from '../operations.js';
import { bucketLimits } from '../service/buckets.js';
import { q, sendXml, type S3Request } from './context.js';
import { s3Errors } from './errors.js';
import { toXml } from './xml.js';

const MAX_UPLOADS = 1000;

export async function listMultipartUploads(r: S3Request): Promise<unknown> {
  await bucketLimits(r.project, r.bucket);
  const prefix = q(r, 'prefix') ?? '';
  const delimiter = q(r, 'delimiter') ?? '';
  const keyMarker = q(r, 'key-marker') ?? '';
  const uploadIdMarker = keyMarker ? (q(r, 'upload-id-marker') ?? '') : '';
  const maxText = q(r, 'max-uploads') ?? String(MAX_UPLOADS);
  if (!/^\d{1,10}$/.test(maxText))
    throw s3Errors.invalidArgument('Provided max-uploads not an integer or within integer range');
  const max = Math.min(Number(maxText), MAX_UPLOADS);
  const owner = isServiceRole(r.caller) ? null : (r.caller.sub ?? '');

  const uploads: UploadListRow[] = [];
  const prefixes: string[] = [];
  let truncated = false;
  let lastMarker: { key: string; id: string } | undefined;
  await inTx(r.project, SERVICE, OPERATIONS.S3_LIST_MULTIPART, async (db) => {
    // Position after the markers: past the marker upload of the key, or past the key (a common
    // prefix given back as a key-marker: past every key under it).
    let afterKey = delimiter && keyMarker.endsWith(delimiter) ? `${keyMarker}\u{10FFFF}` : keyMarker;
    let afterUpload = uploadIdMarker;
    for (;;) {
      const rows = await selectUploadsPage(db, {
        bucket: r.bucket,
        prefix,
        afterKey,
        afterUpload,
        limit: max + 1,
        owner,
      });
      let rolledUp = false;
      for (const row of rows) {
        if (uploads.length + prefixes.length === max) {
          truncated = true;
          return;
        }
        const i = delimiter ? row.key.indexOf(delimiter, prefix.length) : -1;
        if (i >= 0) {
          const p = row.key.slice(0, i + delimiter.length);
          prefixes.push(p);
          lastMarker = { key: p, id: '' };
          // The keys under this common prefix are skipped: read on after the prefix's last key.
          afterKey = `${p}\u{10FFFF}`;
          afterUpload = '';
          rolledUp = true;
          break;
        }
        uploads.push(row);
        lastMarker = { key: row.key, id: row.id };
      }
      if (!rolledUp) return;
    }
  });
  const initiator = (row: UploadListRow) => ({ ID: row.owner_id ?? '', DisplayName: row.owner_id ?? '' });
  return sendXml(
    r,
    200,
    toXml('ListMultipartUploadsResult', {
      Bucket: r.bucket,
      KeyMarker: keyMarker,
      UploadIdMarker: uploadIdMarker,
      ...(truncated && lastMarker
        ? { NextKeyMarker: lastMarker.key, NextUploadIdMarker: lastMarker.id }
        : {}),
      ...(delimiter ? { Delimiter: delimiter } : {}),
      Prefix: prefix,
      MaxUploads: max,
      IsTruncated: truncated,
      Upload: uploads.map((u) => ({
        Key: u.key,
        UploadId: u.id,
        Initiator: initiator(u),
        Owner: initiator(u),
        StorageClass: 'STANDARD',
        Initiated: new Date(u.created_at).toISOString(),
      })),
      CommonPrefixes: prefixes.map((Prefix) => ({ Prefix })),
    }),
  );
}
