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
import type { FormatOption, Gravity, ResizeMode, TransformOptions } from './options.js';

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

/** sharp's crop positions for imgproxy's gravity types (offsets of compass gravity are not applied). */
const POSITION: Record<Gravity, string> = {
  no: 'north',
  so: 'south',
  ea: 'east',
  we: 'west',
  noea: 'northeast',
  nowe: 'northwest',
  soea: 'southeast',
  sowe: 'southwest',
  ce: 'centre',
  sm: 'attention',
  // A focal point crops in focalCrop; without a box to crop it has nothing to place.
  fp: 'centre',
};

/**
 * A cover crop around a focal point (gravity fp, x/y in 0-1 of the image): scale so the box is
 * covered (never enlarging), then cut the box centred on the point, kept inside the image.
 */
function focalCrop(
  source: SourceInfo,
  o: TransformOptions,
):
  | { width: number; height: number; crop: { left: number; top: number; width: number; height: number } }
  | undefined {
  if (o.gravity !== 'fp' || !o.width || !o.height || (o.resize ?? 'cover') !== 'cover') return undefined;
  const scale = Math.min(1, Math.max(o.width / source.width, o.height / source.height));
  const width = Math.max(1, Math.round(source.width * scale));
  const height = Math.max(1, Math.round(source.height * scale));
  const cw = Math.min(o.width, width);
  const ch = Math.min(o.height, height);
  const at = (f: number | undefined, size: number, box: number) =>
    Math.min(Math.max(Math.round((f ?? 0.5) * size - box / 2), 0), size - box);
  return {
    width,
    height,
    crop: { left: at(o.x_offset, width, cw), top: at(o.y_offset, height, ch), width: cw, height: ch },
  };
}

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
    // 'truncated', as imgproxy: a cut-off image is refused, a bad chunk checksum is not.
    let img = sharp(input, { limitInputPixels: maxPixels, failOn: 'truncated' }).rotate();
    const focal = focalCrop(source, o);
    if (focal) {
      img = img.resize({ width: focal.width, height: focal.height, fit: 'fill' }).extract(focal.crop);
    } else if (o.width || o.height) {
      img = img.resize({
        width: o.width,
        height: o.height,
        fit: FIT[o.resize ?? 'cover'],
        position: o.gravity ? POSITION[o.gravity] : undefined,
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
