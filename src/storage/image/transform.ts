/**
 * One render with sharp (libvips): decode with a pixel cap, auto-orient, resize, encode. Resize
 * modes follow the reference's imgproxy mapping (cover → fill: crop to the box; contain → fit:
 * inside the box; fill → force: stretch), never enlarging (imgproxy's default). The output format
 * is AVIF or WebP when asked; "origin" keeps the source's; otherwise WebP when the client's Accept
 * allows it (imgproxy's WebP detection), else the source's. SVG is passed through unchanged, as
 * the reference's render path does.
 */
import type { Metadata, Sharp, SharpOptions } from 'sharp';
import { imageErrors } from './errors.js';
import type { FormatOption, ResizeMode, TransformOptions } from './options.js';

type SharpFactory = (input: Buffer, options: SharpOptions) => Sharp;
let loading: Promise<SharpFactory> | undefined;

/**
 * sharp (libvips, about 20 MiB of the process once loaded) is imported on the first render, not at
 * start: most servers never render an image.
 */
function loadSharp(): Promise<SharpFactory> {
  loading ??= import('sharp').then(({ default: sharp }) => {
    // Rendered variants are cached by us; libvips' own operation cache would only hold memory.
    sharp.cache(false);
    return sharp;
  });
  return loading;
}

export type OutputFormat = 'jpeg' | 'png' | 'webp' | 'avif' | 'gif';

export interface Rendered {
  body: Buffer;
  contentType: string;
}

/** Default encoder quality, imgproxy's. */
const DEFAULT_QUALITY = 80;

const FIT: Record<ResizeMode, 'cover' | 'inside' | 'fill'> = {
  cover: 'cover',
  contain: 'inside',
  fill: 'fill',
};

/** The output format a request gets (part of the cache key, so decided before rendering). */
export function outputFormatFor(
  sourceFormat: string,
  format: FormatOption | undefined,
  accept: string | undefined,
): OutputFormat {
  if (format === 'avif' || format === 'webp') return format;
  if (format !== 'origin' && accept && /\bimage\/webp\b/i.test(accept)) return 'webp';
  switch (sourceFormat) {
    case 'jpeg':
    case 'png':
    case 'webp':
    case 'gif':
      return sourceFormat;
    case 'heif':
      return 'avif';
    default:
      return 'png';
  }
}

export interface SourceInfo {
  format: string;
  width: number;
  height: number;
}

/** Reads the header only; anything libvips cannot identify as an image is the reference's 400. */
export async function probe(input: Buffer, maxPixels: number): Promise<SourceInfo> {
  const sharp = await loadSharp();
  let meta: Metadata;
  try {
    meta = await sharp(input, { limitInputPixels: false }).metadata();
  } catch {
    throw imageErrors.invalidSource();
  }
  if (!meta.format || !meta.width || !meta.height) throw imageErrors.invalidSource();
  if (meta.width * meta.height > maxPixels) throw imageErrors.resolutionTooBig();
  return { format: meta.format, width: meta.width, height: meta.height };
}

export async function transform(
  input: Buffer,
  source: SourceInfo,
  o: TransformOptions,
  output: OutputFormat,
  maxPixels: number,
): Promise<Rendered> {
  if (source.format === 'svg') return { body: input, contentType: 'image/svg+xml' };
  const sharp = await loadSharp();
  try {
    let img = sharp(input, { limitInputPixels: maxPixels, failOn: 'error' }).rotate();
    if (o.width || o.height) {
      img = img.resize({
        width: o.width,
        height: o.height,
        fit: FIT[o.resize ?? 'cover'],
        withoutEnlargement: true,
      });
    }
    const quality = o.quality ?? DEFAULT_QUALITY;
    switch (output) {
      case 'jpeg':
        img = img.jpeg({ quality, mozjpeg: true });
        break;
      case 'webp':
        img = img.webp({ quality });
        break;
      case 'avif':
        img = img.avif({ quality, effort: 2 });
        break;
      case 'png':
        img = img.png();
        break;
      case 'gif':
        img = img.gif();
        break;
    }
    const body = await img.toBuffer();
    return { body, contentType: `image/${output}` };
  } catch {
    throw imageErrors.invalidSource();
  }
}
