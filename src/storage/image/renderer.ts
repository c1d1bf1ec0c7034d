/**
 * Renders one object row with one set of options: size check from the row, bytes read from the
 * backend (bounded), header probe, then the transform under the concurrency gate, all behind the
 * variant cache.
 */
import type { Readable } from 'node:stream';
import type { ImageConfig } from '../../config.js';
import type { StorageBackend } from '../backend/interface.js';
import { errors } from '../errors.js';
import type { ObjectRow } from '../database/index.js';
import { VariantCache } from './cache.js';
import { imageErrors } from './errors.js';
import { Gate } from './gate.js';
import { clampDimensions, type TransformOptions } from './options.js';
import { outputFormatFor, probe, transform, type Rendered } from './transform.js';

export interface RenderResult {
  rendered: Rendered;
  hit: boolean;
  applied: TransformOptions;
}

async function readAll(stream: Readable, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of stream) {
      const b = chunk as Buffer;
      total += b.length;
      if (total > max) throw imageErrors.fileTooBig();
      chunks.push(b);
    }
  } finally {
    stream.destroy();
  }
  return Buffer.concat(chunks, total);
}

export class ImageRenderer {
  readonly cache: VariantCache;
  private readonly gate: Gate;

  constructor(private readonly config: ImageConfig) {
    this.cache = new VariantCache(config.cacheBytes);
    this.gate = new Gate(config.concurrency, config.queueLimit, imageErrors.busy);
  }

  async render(
    projectRef: string,
    backend: StorageBackend,
    row: ObjectRow,
    requested: TransformOptions,
    accept: string | undefined,
  ): Promise<RenderResult> {
    if (!this.config.enabled) throw imageErrors.disabled();
    const m = row.metadata;
    if (!m || !row.version) throw errors.missingBytes();
    if (Number(m.size ?? 0) > this.config.maxSourceBytes) throw imageErrors.fileTooBig();
    const o = clampDimensions(requested, this.config.maxDimension);
    const version = row.version;
    const loc = { bucket: row.bucket_id, key: row.name, version };
    // The output format depends on the source's, known only after reading it; the Accept header
    // matters only when no explicit format is asked for, so it is part of the key just then.
    const acceptsWebp = o.format === undefined && !!accept && /\bimage\/webp\b/i.test(accept);
    const variant = JSON.stringify([
      o.width ?? 0,
      o.height ?? 0,
      o.resize ?? '',
      o.quality ?? 0,
      o.format ?? '',
      o.gravity ?? '',
      o.x_offset ?? 0,
      o.y_offset ?? 0,
      acceptsWebp,
    ]);
    const { rendered, hit } = await this.cache.get(
      { object: `${projectRef}/${row.bucket_id}/${row.name}`, version, variant },
      () =>
        this.gate.run(async () => {
          const stream = await backend.get(loc);
          if (!stream) throw errors.missingBytes();
          const input = await readAll(stream, this.config.maxSourceBytes);
          const source = await probe(input, this.config.maxSourcePixels);
          const output = outputFormatFor(source.format, o.format, acceptsWebp ? 'image/webp' : undefined);
          return transform(input, source, o, output, this.config.maxSourcePixels);
        }),
    );
    return { rendered, hit, applied: o };
  }
}
