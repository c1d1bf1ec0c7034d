/** Storage browser: buckets (create, edit, empty, delete) and their objects (see storage-objects). */
import { useState } from 'react';
import { storage } from '../api';
import { attempt, ErrorText, Field } from '../form';
import { useLoad } from '../use-load';
import type { Bucket } from '../bucket';
import { NeedsKeys, type ProjectProps } from '../project-props';
import { BucketObjects } from './storage-objects';

export function StoragePage({ project, keys, keysError }: ProjectProps) {
  const ref = project.ref;
  const [selected, setSelected] = useState<string>();
  const buckets = useLoad(
    () => (keys ? storage<Bucket[]>(ref, keys, 'GET', '/bucket') : Promise.resolve([])),
    [ref, keys],
  );
  if (!keys) return <NeedsKeys error={keysError} />;
  const bucket = buckets.data?.find((b) => b.id === selected);
  return (
    <>
      <h1>Storage</h1>
      <ErrorText error={buckets.error} />
      <div className="split">
        <div className="list">
          <ul className="buckets">
            {buckets.data?.map((b) => (
              <li key={b.id}>
                <button
                  type="button"
                  className={b.id === selected ? 'link active' : 'link'}
                  onClick={() => setSelected(b.id)}
                >
                  {b.name}
                </button>{' '}
                <span className="muted">{b.public ? 'public' : 'private'}</span>
              </li>
            ))}
          </ul>
          {buckets.data?.length === 0 && (
            <p className="empty">No buckets yet. Create one to upload files into it.</p>
          )}
          <details className="new-bucket" open={buckets.data?.length === 0}>
            <summary className="new-bucket-summary">New bucket</summary>
            <BucketForm
              title="New bucket"
              onSave={async (b) => {
                await storage(ref, keys, 'POST', '/bucket', { id: b.name, ...b });
                buckets.reload();
                setSelected(b.name);
              }}
            />
          </details>
        </div>
        <div className="detail">
          {bucket && (
            <>
              <BucketForm
                key={bucket.id}
                title={`Bucket ${bucket.name}`}
                initial={bucket}
                onSave={async (b) => {
                  const { name: _name, ...settings } = b;
                  await storage(ref, keys, 'PUT', `/bucket/${encodeURIComponent(bucket.id)}`, settings);
                  buckets.reload();
                }}
              />
              <BucketActions
                bucket={bucket}
                onEmpty={() => storage(ref, keys, 'POST', `/bucket/${encodeURIComponent(bucket.id)}/empty`)}
                onDelete={async () => {
                  await storage(ref, keys, 'DELETE', `/bucket/${encodeURIComponent(bucket.id)}`);
                  setSelected(undefined);
                  buckets.reload();
                }}
              />
              <BucketObjects key={`objects:${bucket.id}`} projectRef={ref} keys={keys} bucket={bucket} />
            </>
          )}
        </div>
      </div>
    </>
  );
}

interface BucketSettings {
  name: string;
  public: boolean;
  file_size_limit: number | null;
  allowed_mime_types: string[] | null;
}

function BucketForm({
  title,
  initial,
  onSave,
}: {
  title: string;
  initial?: Bucket;
  onSave: (b: BucketSettings) => Promise<void>;
}) {
  const [name, setName] = useState(initial?.name ?? '');
  const [isPublic, setPublic] = useState(initial?.public ?? false);
  const [limit, setLimit] = useState(initial?.file_size_limit ? String(initial.file_size_limit) : '');
  const [mimes, setMimes] = useState(initial?.allowed_mime_types?.join(', ') ?? '');
  const [error, setError] = useState<string>();
  const [saved, setSaved] = useState(false);
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    setSaved(false);
    if (limit && !/^\d+$/.test(limit.trim())) {
      setError('File size limit must be a whole number of bytes');
      return;
    }
    const types = mimes
      .split(',')
      .map((m) => m.trim())
      .filter(Boolean);
    const ok = await attempt(
      () =>
        onSave({
          name: name.trim(),
          public: isPublic,
          file_size_limit: limit ? Number(limit) : null,
          allowed_mime_types: types.length ? types : null,
        }),
      setError,
    );
    if (ok && !initial) setName('');
    setSaved(ok && Boolean(initial));
  };
  return (
    <form className="card bucket-form" onSubmit={(e) => void submit(e)} aria-label={title}>
      <h3>{title}</h3>
      {!initial && (
        <Field label="Name">
          <input name="bucket-name" value={name} onChange={(e) => setName(e.target.value)} />
        </Field>
      )}
      <label className="check">
        <input
          type="checkbox"
          name="public"
          checked={isPublic}
          onChange={(e) => setPublic(e.target.checked)}
        />{' '}
        Public
      </label>
      <Field label="File size limit (bytes)">
        <input name="file-size-limit" value={limit} onChange={(e) => setLimit(e.target.value)} />
      </Field>
      <Field label="Allowed MIME types (comma-separated)">
        <input name="allowed-mime-types" value={mimes} onChange={(e) => setMimes(e.target.value)} />
      </Field>
      <ErrorText error={error} />
      <button type="submit">{initial ? 'Save' : 'Create bucket'}</button>{' '}
      {saved && <span className="muted">Saved.</span>}
    </form>
  );
}

function BucketActions({
  bucket,
  onEmpty,
  onDelete,
}: {
  bucket: Bucket;
  onEmpty: () => Promise<unknown>;
  onDelete: () => Promise<void>;
}) {
  const [error, setError] = useState<string>();
  const [done, setDone] = useState<string>();
  const act = (what: string, f: () => Promise<unknown>) => {
    if (!confirm(`${what} bucket ${bucket.name}?`)) return;
    void attempt(async () => {
      await f();
      setDone(`${what}: done.`);
    }, setError);
  };
  return (
    <p>
      <button type="button" onClick={() => act('Empty', onEmpty)}>
        Empty bucket
      </button>{' '}
      <button type="button" className="danger" onClick={() => act('Delete', onDelete)}>
        Delete bucket
      </button>{' '}
      <span className="muted">{done}</span>
      <ErrorText error={error} />
    </p>
  );
}
