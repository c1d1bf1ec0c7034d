/** Per-bucket upload limits: file_size_limit and allowed_mime_types. */
import { errors } from './errors.js';

const UNITS: Record<string, number> = { b: 1, kb: 1e3, mb: 1e6, gb: 1e9 };

/** Bytes from a number or "5MB"-style string; null stays null (no per-bucket limit). */
export function parseFileSizeLimit(v: unknown): number | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v) || v < 0) throw errors.invalidFileSize();
    return v;
  }
  if (typeof v !== 'string') throw errors.invalidFileSize();
  const m = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)$/i.exec(v.trim());
  if (!m) {
    if (/^\d+$/.test(v.trim())) return Number(v.trim());
    throw errors.invalidFileSize();
  }
  const n = Number(Number(m[1]).toPrecision(3));
  const unit = UNITS[m[2]?.toLowerCase() ?? ''];
  if (unit === undefined) throw errors.invalidFileSize();
  return Math.round(n * unit);
}

/** A bucket limit above the platform's global limit is refused (413). */
export function checkBucketLimit(limit: number | null, globalLimit: number): void {
  if (limit !== null && limit > globalLimit) throw errors.entityTooLarge();
}

const MIME_ENTRY = /^[A-Za-z0-9+.-]+\/[A-Za-z0-9+.-]+(;\s*charset=[A-Za-z0-9_.:+-]+)?$/;

/**
 * Validates and normalises allowed_mime_types (an array of strings by the route schema): empty
 * strings dropped, [] kept as "no restriction".
 */
export function parseAllowedMimeTypes(v: readonly string[] | null | undefined): string[] | null {
  if (v === null || v === undefined) return null;
  const out: string[] = [];
  for (const t of v) {
    if (t === '') continue;
    if (t.length > 1000 || !(MIME_ENTRY.test(t) || t.endsWith('*'))) throw errors.invalidMimeType(t);
    out.push(t);
  }
  return out;
}

/** Upload-time check: same type and an exact rest or `*` (so `text/*` accepts `text/plain;charset=UTF-8`). */
export function checkMimeType(allowed: string[] | null, contentType: string): void {
  if (!allowed || allowed.length === 0) return;
  const i = contentType.indexOf('/');
  const type = i < 0 ? contentType : contentType.slice(0, i);
  const rest = i < 0 ? '' : contentType.slice(i + 1);
  const ok = allowed.some((entry) => {
    const j = entry.indexOf('/');
    if (j < 0) return false;
    const et = entry.slice(0, j);
    const er = entry.slice(j + 1);
    return et === type && (er === '*' || er === rest);
  });
  if (!ok) throw errors.invalidMimeType(contentType);
}

/** The effective per-upload limit in bytes. */
export function effectiveLimit(
  globalLimit: number,
  bucketLimit: number | null,
  placeholder: boolean,
): number {
  if (placeholder) return 0;
  return bucketLimit === null ? globalLimit : Math.min(globalLimit, bucketLimit);
}
