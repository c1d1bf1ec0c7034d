/**
 * An image object shown in a dialog: its bytes fetched with the project's key and shown from a
 * `blob:` URL (the console's CSP allows images from blob: and nothing from the API origin). An image
 * element never runs script, SVG included, so user content cannot script the console this way.
 */
import { useEffect, useState } from 'react';
import { ApiError, type ApiKeys, messageOf, objectPath, projectBase, storageHeaders } from '../api';
import { Dialog } from '../dialog';
import { ErrorText } from '../form';
import { humanSize } from '../format';

/** Larger images are downloaded, not previewed. */
export const PREVIEW_MAX_BYTES = 20 * 1024 * 1024;

export const previewable = (type: string | undefined, size: number | undefined): boolean =>
  !!type && /^image\/(png|jpeg|gif|webp|avif|bmp|svg\+xml)$/i.test(type) && (size ?? 0) <= PREVIEW_MAX_BYTES;

export function PreviewDialog({
  projectRef,
  keys,
  bucketId,
  path,
  onClose,
}: {
  projectRef: string;
  keys: ApiKeys;
  bucketId: string;
  path: string;
  onClose: () => void;
}) {
  const [src, setSrc] = useState<string>();
  const [size, setSize] = useState<{ w: number; h: number; bytes: number }>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    let url: string | undefined;
    let live = true;
    (async () => {
      const res = await fetch(`${projectBase(projectRef)}/storage/v1/object/${objectPath(bucketId, path)}`, {
        headers: storageHeaders(keys),
      });
      if (!res.ok)
        throw new ApiError(res.status, messageOf(await res.json().catch(() => undefined), res.status));
      const blob = await res.blob();
      if (!live) return;
      url = URL.createObjectURL(blob);
      setSrc(url);
      setSize((s) => ({ w: s?.w ?? 0, h: s?.h ?? 0, bytes: blob.size }));
    })().catch((err: unknown) => live && setError(err instanceof Error ? err.message : String(err)));
    return () => {
      live = false;
      if (url) URL.revokeObjectURL(url);
    };
  }, [projectRef, keys, bucketId, path]);
  const name = path.split('/').pop() ?? path;
  return (
    <Dialog title={`Preview of ${name}`} onClose={onClose}>
      <ErrorText error={error} />
      {!src && !error && <p className="muted">Loading…</p>}
      {src && (
        <figure className="preview">
          <img
            src={src}
            alt={name}
            onLoad={(e) => {
              const { naturalWidth: w, naturalHeight: h } = e.currentTarget;
              setSize((s) => ({ w, h, bytes: s?.bytes ?? 0 }));
            }}
          />
          <figcaption className="muted">
            {name}
            {size?.w ? ` · ${size.w} × ${size.h} px` : ''}
            {size?.bytes ? ` · ${humanSize(size.bytes)}` : ''}
          </figcaption>
        </figure>
      )}
    </Dialog>
  );
}
