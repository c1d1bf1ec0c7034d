/**
 * Image transformation options (§ render): read from a render route's query string (validated the
 * way the reference's JSON schema does, with its messages), from the `transform` body of a signed
 * URL request, or from the `transformations` claim of a signed render token ("height:100,width:200,
 * resize:cover,quality:80,format:avif", the form the reference signs).
 */
import { errors } from '../errors.js';

export type ResizeMode = 'cover' | 'contain' | 'fill';
export type FormatOption = 'origin' | 'avif' | 'webp';

export interface TransformOptions {
  width?: number;
  height?: number;
  resize?: ResizeMode;
  quality?: number;
  format?: FormatOption;
}

const RESIZE: readonly ResizeMode[] = ['cover', 'contain', 'fill'];
const FORMATS: readonly FormatOption[] = ['origin', 'avif', 'webp'];
const QUALITY_MIN = 20;
const QUALITY_MAX = 100;

function integerField(where: string, name: string, v: unknown, min: number, max?: number): number {
  const n = typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v.trim()) : v;
  if (typeof n !== 'number' || !Number.isInteger(n))
    throw errors.invalidRequest(`${where}/${name} must be integer`);
  if (n < min) throw errors.invalidRequest(`${where}/${name} must be >= ${min}`);
  if (max !== undefined && n > max) throw errors.invalidRequest(`${where}/${name} must be <= ${max}`);
  return n;
}

function enumField<T extends string>(where: string, name: string, v: unknown, allowed: readonly T[]): T {
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v))
    throw errors.invalidRequest(`${where}/${name} must be equal to one of the allowed values`);
  return v as T;
}

function one(v: unknown): unknown {
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Options from a query string (`where` = "querystring") or a JSON body's `transform`
 * (`where` = "body/transform"). Unknown keys are ignored, as the reference's schema does.
 */
export function parseTransformOptions(source: Record<string, unknown>, where: string): TransformOptions {
  const o: TransformOptions = {};
  const width = one(source.width);
  const height = one(source.height);
  const resize = one(source.resize);
  const quality = one(source.quality);
  const format = one(source.format);
  if (width !== undefined) o.width = integerField(where, 'width', width, 0);
  if (height !== undefined) o.height = integerField(where, 'height', height, 0);
  if (resize !== undefined) o.resize = enumField(where, 'resize', resize, RESIZE);
  if (quality !== undefined) o.quality = integerField(where, 'quality', quality, QUALITY_MIN, QUALITY_MAX);
  if (format !== undefined) o.format = enumField(where, 'format', format, FORMATS);
  return o;
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
  return segments;
}

/**
 * The `transformations` claim for POST /object/sign with a `transform` body (only when image
 * transformation is enabled, as the reference), or undefined for a plain download URL.
 */
export function signedTransformations(body: Record<string, unknown>, enabled: boolean): string | undefined {
  const t = body.transform;
  if (t === undefined || t === null) return undefined;
  if (typeof t !== 'object' || Array.isArray(t)) throw errors.invalidRequest('body/transform must be object');
  const options = parseTransformOptions(t as Record<string, unknown>, 'body/transform');
  if (!enabled) return undefined;
  return transformationsString(options) || undefined;
}
