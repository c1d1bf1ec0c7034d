/**
 * The backend of a project, from the platform's configuration (one S3 client per process). The S3
 * backend's module (the AWS SDK, about 10 MiB of the process) is imported only when it is the
 * configured backend: `Backends.load`.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import type { StrataConfig } from '../../config.js';
import type { ProjectContext } from '../../platform/project-context.js';
import { FileBackend } from './file.js';
import type { StorageBackend } from './interface.js';

type S3Module = typeof import('./s3.js');

export type { StorageBackend } from './interface.js';

export class Backends {
  private s3?: S3Client;
  /** Set exactly when the storage backend is S3. */
  private readonly s3Settings: NonNullable<StrataConfig['s3']> | undefined;
  private readonly byProject = new Map<string, StorageBackend>();

  /** The backends of `config`, with the S3 backend's module loaded when S3 is the backend. */
  static async load(config: StrataConfig): Promise<Backends> {
    return new Backends(config, config.storageBackend === 's3' ? await import('./s3.js') : undefined);
  }

  private constructor(
    private readonly config: StrataConfig,
    private readonly s3Module: S3Module | undefined,
  ) {
    if (config.storageBackend === 's3') {
      if (!config.s3) throw new Error('storageBackend "s3" needs the s3 settings (STRATA_S3_BUCKET, ...)');
      this.s3Settings = config.s3;
    }
  }

  for(project: ProjectContext): StorageBackend {
    const cached = this.byProject.get(project.ref);
    if (cached) return cached;
    let backend: StorageBackend;
    if (this.s3Settings && this.s3Module) {
      this.s3 ??= this.s3Module.createS3Client(this.s3Settings);
      backend = new this.s3Module.S3Backend(this.s3, this.s3Settings.bucket, `${project.ref}/`);
    } else {
      backend = new FileBackend(join(project.filesDir, 'storage'), {
        fsync: this.config.storageFsync,
        eTag: this.config.storageEtagAlgorithm,
      });
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
  const { createS3Client, S3Backend } = await import('./s3.js');
  const client = createS3Client(config.s3);
  try {
    await new S3Backend(client, config.s3.bucket, `${ref}/`).removeAll();
  } finally {
    client.destroy();
  }
}
