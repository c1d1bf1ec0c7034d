/**
 * A bucket's objects: folders, upload (drop or pick, a progress bar per file), download, delete,
 * and Move / URL dialogs. A table with headers: name, size, type, last modified.
 */
import { useState } from 'react';
import { type ApiKeys, ApiError, messageOf, objectPath, projectBase, storage, storageHeaders } from '../api';
import { Dialog } from '../dialog';
import { attempt, ErrorText, Field } from '../form';
import { humanSize, shortDate } from '../format';
import { uploadObject } from '../upload';
import { useLoad } from '../use-load';
import { PreviewDialog, previewable } from './storage-preview';
import type { Bucket } from '../bucket';

interface Entry {
  name: string;
  id: string | null;
  updated_at?: string | null;
  created_at?: string | null;
  metadata?: { size?: number; mimetype?: string; lastModified?: string } | null;
}

interface UploadState {
  name: string;
  fraction: number;
  error?: string;
}

interface Props {
  projectRef: string;
  keys: ApiKeys;
  bucket: Bucket;
}

export function BucketObjects({ projectRef, keys, bucket }: Props) {
  const [prefix, setPrefix] = useState('');
  const [uploads, setUploads] = useState<UploadState[]>([]);
  const [error, setError] = useState<string>();
  const [dragging, setDragging] = useState(false);
  const list = useLoad(
    () =>
      storage<Entry[]>(projectRef, keys, 'POST', `/object/list/${encodeURIComponent(bucket.id)}`, {
        prefix,
        limit: 1000,
        offset: 0,
        sortBy: { column: 'name', order: 'asc' },
      }),
    [projectRef, keys, bucket.id, prefix],
  );
  const upload = async (files: FileList | File[]) => {
    const batch = Array.from(files);
    setError(undefined);
    setUploads(batch.map((f) => ({ name: prefix + f.name, fraction: 0 })));
    const update = (i: number, patch: Partial<UploadState>) =>
      setUploads((all) => all.map((u, j) => (j === i ? { ...u, ...patch } : u)));
    // One after another: each file keeps its own bar; a failed one says why on its line.
    for (const [i, file] of batch.entries()) {
      await attempt(
        () =>
          uploadObject(projectRef, keys, bucket.id, prefix + file.name, file, (fraction) =>
            update(i, { fraction }),
          ),
        (message) => message && update(i, { error: message }),
      );
    }
    list.reload();
  };
  const crumbs = prefix.split('/').filter(Boolean);
  return (
    <section className="objects">
      <nav className="crumbs" aria-label="Folder">
        <button type="button" className="link" onClick={() => setPrefix('')}>
          {bucket.name}
        </button>
        {crumbs.map((c, i) => (
          <span key={crumbs.slice(0, i + 1).join('/')}>
            {' / '}
            <button
              type="button"
              className="link"
              onClick={() => setPrefix(`${crumbs.slice(0, i + 1).join('/')}/`)}
            >
              {c}
            </button>
          </span>
        ))}
      </nav>
      {/* biome-ignore lint/a11y/noStaticElementInteractions: a drop target; the file input inside is the accessible control */}
      <div
        className={dragging ? 'dropzone dragging' : 'dropzone'}
        onDragOver={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={(e) => {
          e.preventDefault();
          setDragging(false);
          void upload(e.dataTransfer.files);
        }}
      >
        Drop files here or{' '}
        <label className="file-pick">
          choose files
          <input
            type="file"
            name="upload"
            multiple
            onChange={(e) => {
              if (e.target.files) void upload(e.target.files);
              e.target.value = '';
            }}
          />
        </label>
        {uploads.length > 0 && (
          <ul className="uploads">
            {uploads.map((u) => (
              <li key={u.name} className="progress-line" data-upload={u.name}>
                <span className="upload-name">{u.name}</span>
                <progress max={1} value={u.fraction} aria-label={`Upload progress of ${u.name}`} />
                <span>{u.error ? 'failed' : `${Math.round(u.fraction * 100)}%`}</span>
                <ErrorText error={u.error} />
              </li>
            ))}
          </ul>
        )}
      </div>
      <NewFolder onCreate={(name) => setPrefix(`${prefix}${name}/`)} />
      <ErrorText error={error ?? list.error} />
      <div className="table-wrap">
        <table className="data objects-table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Size</th>
              <th scope="col" className="wide-only">
                Type
              </th>
              <th scope="col" className="wide-only">
                Last modified
              </th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data?.map((e) =>
              e.id === null ? (
                <tr key={`dir:${e.name}`}>
                  <td colSpan={5}>
                    <button
                      type="button"
                      className="link folder"
                      onClick={() => setPrefix(`${prefix}${e.name}/`)}
                    >
                      {e.name}/
                    </button>
                  </td>
                </tr>
              ) : (
                <ObjectRow
                  key={e.name}
                  {...{ projectRef, keys, bucket }}
                  path={prefix + e.name}
                  entry={e}
                  onChange={list.reload}
                />
              ),
            )}
          </tbody>
        </table>
      </div>
      {list.data?.length === 0 && (
        <p className="empty">This folder is empty. Drop files above or choose files to upload them here.</p>
      )}
    </section>
  );
}

function NewFolder({ onCreate }: { onCreate: (name: string) => void }) {
  const [name, setName] = useState('');
  return (
    <form
      className="inline"
      onSubmit={(e) => {
        e.preventDefault();
        const n = name.trim().replace(/^\/+|\/+$/g, '');
        if (n) onCreate(n);
        setName('');
      }}
    >
      <input
        aria-label="Folder name"
        placeholder="folder name"
        value={name}
        onChange={(e) => setName(e.target.value)}
      />
      <button type="submit">Open folder</button>
      <span className="muted"> (a folder exists once a file is uploaded into it)</span>
    </form>
  );
}

function ObjectRow({
  projectRef,
  keys,
  bucket,
  path,
  entry,
  onChange,
}: Props & { path: string; entry: Entry; onChange: () => void }) {
  const [error, setError] = useState<string>();
  const [dialog, setDialog] = useState<'move' | 'url' | 'preview'>();
  const base = `${projectBase(projectRef)}/storage/v1`;
  const download = () =>
    attempt(async () => {
      const res = await fetch(`${base}/object/${objectPath(bucket.id, path)}`, {
        headers: storageHeaders(keys),
      });
      if (!res.ok)
        throw new ApiError(res.status, messageOf(await res.json().catch(() => undefined), res.status));
      const href = URL.createObjectURL(await res.blob());
      const a = document.createElement('a');
      a.href = href;
      a.download = path.split('/').pop() ?? 'download';
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(href), 10_000);
    }, setError);
  const remove = () =>
    confirm(`Delete ${path}?`) &&
    attempt(async () => {
      await storage(projectRef, keys, 'DELETE', `/object/${objectPath(bucket.id, path)}`);
      onChange();
    }, setError);
  const type = entry.metadata?.mimetype;
  return (
    <tr className="object" data-name={path}>
      <td className="object-name">
        {entry.name}
        {type && <span className="muted narrow-only"> · {type}</span>}
      </td>
      <td className="size">{humanSize(entry.metadata?.size)}</td>
      <td className="muted wide-only">{type ?? '—'}</td>
      <td className="muted wide-only">{shortDate(entry.updated_at ?? entry.metadata?.lastModified)}</td>
      <td className="actions">
        {previewable(type, entry.metadata?.size) && (
          <button type="button" onClick={() => setDialog('preview')}>
            Preview
          </button>
        )}
        <button type="button" onClick={() => void download()}>
          Download
        </button>
        <button type="button" onClick={() => setDialog('move')}>
          Move
        </button>
        <button type="button" className="danger" onClick={() => void remove()}>
          Delete
        </button>
        <button type="button" onClick={() => setDialog('url')}>
          {bucket.public ? 'URL' : 'Signed URL'}
        </button>
        <ErrorText error={error} />
        {dialog === 'move' && (
          <MoveDialog
            {...{ projectRef, keys, bucket, path }}
            onClose={() => setDialog(undefined)}
            onMoved={() => {
              setDialog(undefined);
              onChange();
            }}
          />
        )}
        {dialog === 'preview' && (
          <PreviewDialog
            projectRef={projectRef}
            keys={keys}
            bucketId={bucket.id}
            path={path}
            onClose={() => setDialog(undefined)}
          />
        )}
        {dialog === 'url' && (
          <UrlDialog {...{ projectRef, keys, bucket, path }} onClose={() => setDialog(undefined)} />
        )}
      </td>
    </tr>
  );
}

type ObjectProps = Props & { path: string; onClose: () => void };

function MoveDialog({
  projectRef,
  keys,
  bucket,
  path,
  onClose,
  onMoved,
}: ObjectProps & { onMoved: () => void }) {
  const [to, setTo] = useState(path);
  const [error, setError] = useState<string>();
  const move = (e: React.FormEvent) => {
    e.preventDefault();
    void attempt(async () => {
      await storage(projectRef, keys, 'POST', '/object/move', {
        bucketId: bucket.id,
        sourceKey: path,
        destinationKey: to.trim(),
      });
      onMoved();
    }, setError);
  };
  return (
    <Dialog title={`Move ${path}`} onClose={onClose}>
      <form onSubmit={move}>
        <Field label="Move to" error={error}>
          <input name="move-to" value={to} onChange={(e) => setTo(e.target.value)} />
        </Field>
        <p className="dialog-actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit">Move here</button>
        </p>
      </form>
    </Dialog>
  );
}

const EXPIRY_UNITS = { seconds: 1, minutes: 60, hours: 3600, days: 86400 } as const;
type ExpiryUnit = keyof typeof EXPIRY_UNITS;

function UrlDialog({ projectRef, keys, bucket, path, onClose }: ObjectProps) {
  const base = `${projectBase(projectRef)}/storage/v1`;
  const [amount, setAmount] = useState('1');
  const [unit, setUnit] = useState<ExpiryUnit>('hours');
  const [url, setUrl] = useState<string>();
  const [error, setError] = useState<string>();
  const sign = (e: React.FormEvent) => {
    e.preventDefault();
    void attempt(async () => {
      if (!/^\d+$/.test(amount.trim()) || Number(amount) < 1)
        throw new Error(`Expiry must be a whole number of ${unit}, 1 or more`);
      const r = await storage<{ signedURL: string }>(
        projectRef,
        keys,
        'POST',
        `/object/sign/${objectPath(bucket.id, path)}`,
        { expiresIn: Number(amount) * EXPIRY_UNITS[unit] },
      );
      setUrl(`${base}${r.signedURL}`);
    }, setError);
  };
  const publicUrl = `${base}/object/public/${objectPath(bucket.id, path)}`;
  return (
    <Dialog title={`URL of ${path}`} onClose={onClose}>
      {bucket.public && (
        <p>
          <button type="button" onClick={() => setUrl(publicUrl)}>
            Public URL
          </button>{' '}
          <span className="muted">anyone with the address can read it (the bucket is public)</span>
        </p>
      )}
      <form className="inline wrap" onSubmit={sign}>
        <Field label="Expires in">
          <input
            name="expires-in"
            inputMode="numeric"
            size={5}
            value={amount}
            onChange={(e) => setAmount(e.target.value)}
          />
        </Field>
        <Field label="Unit">
          <select name="expiry-unit" value={unit} onChange={(e) => setUnit(e.target.value as ExpiryUnit)}>
            {Object.keys(EXPIRY_UNITS).map((u) => (
              <option key={u}>{u}</option>
            ))}
          </select>
        </Field>
        <button type="submit">Create signed URL</button>
      </form>
      <ErrorText error={error} />
      {url && (
        <>
          <input
            className="url"
            readOnly
            aria-label="Object URL"
            value={url}
            onFocus={(e) => e.target.select()}
          />
          <p>
            <button type="button" onClick={() => void navigator.clipboard.writeText(url)}>
              Copy URL
            </button>
          </p>
        </>
      )}
    </Dialog>
  );
}
