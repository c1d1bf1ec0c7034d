/** A bucket's objects: folders, upload (drop or pick, with progress), download, delete, move, URLs. */
import { useState } from 'react';
import { type ApiKeys, ApiError, messageOf, objectPath, projectBase, storage, storageHeaders } from '../api';
import { attempt, ErrorText } from '../form';
import { uploadObject } from '../upload';
import { useLoad } from '../use-load';
import type { Bucket } from './storage';

interface Entry {
  name: string;
  id: string | null;
  metadata?: { size?: number; mimetype?: string } | null;
}

interface Props {
  projectRef: string;
  keys: ApiKeys;
  bucket: Bucket;
}

export function BucketObjects({ projectRef, keys, bucket }: Props) {
  const [prefix, setPrefix] = useState('');
  const [progress, setProgress] = useState<{ name: string; fraction: number }>();
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
    for (const file of Array.from(files)) {
      const name = prefix + file.name;
      setProgress({ name, fraction: 0 });
      const ok = await attempt(
        () =>
          uploadObject(projectRef, keys, bucket.id, name, file, (fraction) =>
            setProgress({ name, fraction }),
          ),
        setError,
      );
      if (!ok) break;
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
        {progress && (
          <div className="progress-line">
            <span>{progress.name}</span>
            <progress max={1} value={progress.fraction} aria-label="Upload progress" />
            <span>{Math.round(progress.fraction * 100)}%</span>
          </div>
        )}
      </div>
      <NewFolder onCreate={(name) => setPrefix(`${prefix}${name}/`)} />
      <ErrorText error={error ?? list.error} />
      <table className="data objects-table">
        <tbody>
          {list.data?.map((e) =>
            e.id === null ? (
              <tr key={`dir:${e.name}`}>
                <td colSpan={3}>
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
      {list.data?.length === 0 && <p className="muted">Empty folder.</p>}
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
  const [url, setUrl] = useState<string>();
  const [expires, setExpires] = useState('3600');
  const [moveTo, setMoveTo] = useState<string>();
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
  const move = (to: string) =>
    attempt(async () => {
      await storage(projectRef, keys, 'POST', '/object/move', {
        bucketId: bucket.id,
        sourceKey: path,
        destinationKey: to,
      });
      setMoveTo(undefined);
      onChange();
    }, setError);
  const sign = () =>
    attempt(async () => {
      if (!/^\d+$/.test(expires) || Number(expires) < 1)
        throw new Error('Expiry must be a positive number of seconds');
      const r = await storage<{ signedURL: string }>(
        projectRef,
        keys,
        'POST',
        `/object/sign/${objectPath(bucket.id, path)}`,
        {
          expiresIn: Number(expires),
        },
      );
      setUrl(`${base}${r.signedURL}`);
    }, setError);
  return (
    <tr className="object" data-name={path}>
      <td>{entry.name}</td>
      <td className="muted">
        {entry.metadata?.size ?? ''} {entry.metadata?.mimetype ?? ''}
      </td>
      <td className="actions">
        <button type="button" onClick={() => void download()}>
          Download
        </button>
        <button type="button" onClick={() => setMoveTo(path)}>
          Move
        </button>
        <button type="button" className="danger" onClick={() => void remove()}>
          Delete
        </button>
        {bucket.public && (
          <button
            type="button"
            onClick={() => setUrl(`${base}/object/public/${objectPath(bucket.id, path)}`)}
          >
            Public URL
          </button>
        )}
        <span className="sign">
          <input
            aria-label="Signed URL expiry (seconds)"
            value={expires}
            onChange={(e) => setExpires(e.target.value)}
            size={6}
          />
          <button type="button" onClick={() => void sign()}>
            Signed URL
          </button>
        </span>
        {moveTo !== undefined && (
          <form
            className="inline"
            onSubmit={(e) => {
              e.preventDefault();
              void move(moveTo);
            }}
          >
            <input aria-label="Move to" value={moveTo} onChange={(e) => setMoveTo(e.target.value)} />
            <button type="submit">Move here</button>
          </form>
        )}
        {url && (
          <input
            className="url"
            readOnly
            aria-label="Object URL"
            value={url}
            onFocus={(e) => e.target.select()}
          />
        )}
        <ErrorText error={error} />
      </td>
    </tr>
  );
}
