/** The backend of a project, from the platform's configuration (one S3 client per process). */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import type { StrataConfig } from '../../config.js';
import type { ProjectContext } from '../../platform/project-context.js';
import { FileBackend } from './file.js';
import { S3Backend, createS3Client } from './s3.js';
import type { StorageBackend } from './interface.js';

export type { StorageBackend } from './interface.js';

export class Backends {
  private s3?: S3Client;
  /** Set exactly when the storage backend is S3. */
  private readonly s3Settings: NonNullable<StrataConfig['s3']> | undefined;
  private readonly byProject = new Map<string, StorageBackend>();

  constructor(private readonly config: StrataConfig) {
    if (config.storageBackend === 's3') {
      if (!config.s3) throw new Error('storageBackend "s3" needs the s3 settings (STRATA_S3_BUCKET, ...)');
      this.s3Settings = config.s3;
    }
  }

  for(project: ProjectContext): StorageBackend {
    const cached = this.byProject.get(project.ref);
    if (cached) return cached;
    let backend: StorageBackend;
    if (this.s3Settings) {
      this.s3 ??= createS3Client(this.s3Settings);
      backend = new S3Backend(this.s3, this.s3Settings.bucket, `${project.ref}/`);
    } else {
      backend = new FileBackend(join(project.filesDir, 'storage'), { fsync: this.config.storageFsync });
    }
    this.byProject.set(project.ref, backend);
    return backend;
  }

  close(): void {
    this.s3?.destroy();
    this.byProject.clear();
  }
}

/**
 * Removes all of a deleted project's bytes: its files folder (file backend, TUS uploads on the file
 * backend, function bundles' cache) and, on the S3 backend, every key under `<ref>/` in the bucket.
 */
export async function removeProjectBytes(config: StrataConfig, ref: string, filesDir: string): Promise<void> {
  await rm(filesDir, { recursive: true, force: true });
  if (config.storageBackend !== 's3' || !config.s3) return;
  const client = createS3Client(config.s3);
  try {
    await new S3Backend(client, config.s3.bucket, `${ref}/`).removeAll();
  } finally {
    client.destroy();
  }
}
