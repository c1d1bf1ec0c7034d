/**
 * Image transformation options (/render/image routes): read from a render route's query string (validated by
 * the route schema `TransformQuery`), from the `transform` body of a signed
 * URL request, or from the `transformations` claim of a signed render token ("height:100,width:200,
 * resize:cover,quality:80,format:avif", the form the reference signs).
 */
import { type Static, Type } from '@sinclair/typebox';
import { errors } from '../errors.js';
import { StringEnum } from '../routes/schemas.js';

export type ResizeMode = 'cover' | 'contain' | 'fill';
export type FormatOption = 'origin' | 'avif' | 'webp';
/** imgproxy's gravity types, as the reference accepts them: compass points, centre, smart, focal point. */
export type Gravity = 'no' | 'so' | 'ea' | 'we' | 'noea' | 'nowe' | 'soea' | 'sowe' | 'ce' | 'sm' | 'fp';

export interface TransformOptions {
  width?: number;
  height?: number;
  resize?: ResizeMode;
  quality?: number;
  format?: FormatOption;
  /** Where a cover crop keeps the image; with `fp`, x_offset/y_offset are the focal point (0-1). */
  gravity?: Gravity;
  x_offset?: number;
  y_offset?: number;
}

const RESIZE = ['cover', 'contain', 'fill'] as const satisfies readonly ResizeMode[];
const FORMATS = ['origin', 'avif', 'webp'] as const satisfies readonly FormatOption[];
const GRAVITY = [
  'no',
  'so',
  'ea',
  'we',
  'noea',
  'nowe',
  'soea',
  'sowe',
  'ce',
  'sm',
  'fp',
] as const satisfies readonly Gravity[];
const QUALITY_MIN = 20;
const QUALITY_MAX = 100;

/**
 * Options from a render route's query string or a signing request's `transform` body, as the
 * reference's schema declares them (Fastify's Ajv words the errors; unknown keys are ignored).
 */
export const TransformQuery = Type.Object({
  width: Type.Optional(Type.Integer({ minimum: 0 })),
  height: Type.Optional(Type.Integer({ minimum: 0 })),
  resize: Type.Optional(StringEnum(RESIZE)),
  quality: Type.Optional(Type.Integer({ minimum: QUALITY_MIN, maximum: QUALITY_MAX })),
  format: Type.Optional(StringEnum(FORMATS)),
  gravity: Type.Optional(StringEnum(GRAVITY)),
  x_offset: Type.Optional(Type.Number()),
  y_offset: Type.Optional(Type.Number()),
});

const inUnit = (n: number | undefined): n is number =>
  n !== undefined && Number.isFinite(n) && n >= 0 && n <= 1;

/** The options of a query string or body validated by `TransformQuery`. */
export function transformOptionsOf(source: Static<typeof TransformQuery>): TransformOptions {
  const o: TransformOptions = {};
  if (source.width !== undefined) o.width = source.width;
  if (source.height !== undefined) o.height = source.height;
  if (source.resize !== undefined) o.resize = source.resize;
  if (source.quality !== undefined) o.quality = source.quality;
  if (source.format !== undefined) o.format = source.format;
  if (source.gravity !== undefined) {
    o.gravity = source.gravity;
    // The reference's rule: a focal point needs both coordinates, each within 0-1.
    if (source.gravity === 'fp' && !(inUnit(source.x_offset) && inUnit(source.y_offset)))
      throw errors.invalidParameter('gravity');
    if (source.x_offset !== undefined) o.x_offset = source.x_offset;
    if (source.y_offset !== undefined) o.y_offset = source.y_offset;
  }
  return o;
}

/** The gravity segment of the reference (`gravity:fp:x:y`, `gravity:sm`, `gravity:no[:x:y]`). */
function gravitySegment(o: TransformOptions): string | undefined {
  if (!o.gravity) return undefined;
  if (o.gravity === 'sm') return 'gravity:sm';
  if (o.gravity === 'fp') return `gravity:fp:${o.x_offset ?? 0}:${o.y_offset ?? 0}`;
  return o.x_offset === undefined && o.y_offset === undefined
    ? `gravity:${o.gravity}`
    : `gravity:${o.gravity}:${o.x_offset ?? 0}:${o.y_offset ?? 0}`;
}

/** The `transformations` string a signed render token carries (the reference's segment form). */
export function transformationsString(o: TransformOptions): string {
  const segments: string[] = [];
  if (o.height) segments.push(`height:${o.height}`);
  if (o.width) segments.push(`width:${o.width}`);
  if (o.width || o.height) segments.push(`resize:${o.resize ?? 'cover'}`);
  if (o.quality) segments.push(`quality:${o.quality}`);
  if (o.format && o.format !== 'origin') segments.push(`format:${o.format}`);
  else if (o.format === 'origin') segments.push('format:origin');
  const gravity = gravitySegment(o);
  if (gravity) segments.push(gravity);
  return segments.join(',');
}

/** Reads a token's `transformations` claim; values that do not parse are dropped, not trusted. */
export function parseTransformationsString(s: string): TransformOptions {
  const o: TransformOptions = {};
  for (const part of s.split(',')) {
    const i = part.indexOf(':');
    if (i <= 0) continue;
    const name = part.slice(0, i);
    const value = part.slice(i + 1);
    if (name === 'gravity') {
      const [g, x, y] = value.split(':');
      if (!(GRAVITY as readonly string[]).includes(g ?? '')) continue;
      const num = (v: string | undefined) =>
        v !== undefined && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : undefined;
      const xo = num(x);
      const yo = num(y);
      if (g === 'fp' && !(inUnit(xo) && inUnit(yo))) continue;
      o.gravity = g as Gravity;
      if (xo !== undefined) o.x_offset = xo;
      if (yo !== undefined) o.y_offset = yo;
      continue;
    }
    const int = /^\d+$/.test(value) ? Number(value) : undefined;
    if (name === 'width' && int !== undefined) o.width = int;
    else if (name === 'height' && int !== undefined) o.height = int;
    else if (name === 'quality' && int !== undefined)
      o.quality = Math.min(QUALITY_MAX, Math.max(QUALITY_MIN, int));
    else if (name === 'resize' && (RESIZE as readonly string[]).includes(value))
      o.resize = value as ResizeMode;
    else if (name === 'format' && (FORMATS as readonly string[]).includes(value))
      o.format = value as FormatOption;
  }
  return o;
}

/** Requested dimensions clamped to 1..max (0 means "not given", as in the reference). */
export function clampDimensions(o: TransformOptions, max: number): TransformOptions {
  const clamp = (n: number | undefined) => (n ? Math.min(Math.max(n, 1), max) : undefined);
  return { ...o, width: clamp(o.width), height: clamp(o.height) };
}

/** The X-Transformations header of a render: what was applied, in the reference's vocabulary. */
export function appliedSegments(o: TransformOptions): string[] {
  const segments: string[] = [];
  if (o.height) segments.push(`height:${o.height}`);
  if (o.width) segments.push(`width:${o.width}`);
  if (o.width || o.height) {
    const imgproxy = o.resize === 'contain' ? 'fit' : o.resize === 'fill' ? 'force' : 'fill';
    segments.push(`resizing_type:${imgproxy}`);
  }
  if (o.quality) segments.push(`quality:${o.quality}`);
  if (o.format && o.format !== 'origin') segments.push(`format:${o.format}`);
  const gravity = gravitySegment(o);
  if (gravity) segments.push(gravity);
  return segments;
}

/**
 * The `transformations` claim for POST /object/sign with a `transform` body (only when image
 * transformation is enabled, as the reference), or undefined for a plain download URL.
 */
export function signedTransformations(
  transform: Static<typeof TransformQuery> | null | undefined,
  enabled: boolean,
): string | undefined {
  if (!transform || !enabled) return undefined;
  return transformationsString(transformOptionsOf(transform)) || undefined;
}
