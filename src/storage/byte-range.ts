/**
 * The Range request header (RFC 9110 §14), one parser for the REST download, the S3 GetObject and
 * S3 UploadPartCopy's `x-amz-copy-source-range`.
 *
 * - `bytes=a-b`, `bytes=a-` and the suffix form `bytes=-n`. A suffix longer than the object selects
 *   the whole object (§14.1.1: "If the selected representation is shorter than the specified
 *   suffix-length, the entire representation is used"), as S3 does; a last-pos past the end is
 *   the end (§14.1.2).
 * - A byte-range-set is satisfiable when one of its ranges starts before the end or is a non-zero
 *   suffix (§14.1.1); otherwise 416 with `Content-Range: bytes * /N` (§15.5.17).
 * - A header that does not parse, or names another unit, is ignored (§14.2: "An origin server MUST
 *   ignore a Range header field that contains a range unit it does not understand", and a server
 *   "MAY ignore the Range header field"): the whole object, 200.
 * - Several satisfiable ranges are answered with the whole object, 200 (§14.2 lets a server ignore
 *   Range; S3 likewise serves the whole object rather than multipart/byteranges).
 */

export interface ByteSpan {
  /** Inclusive, as in Content-Range. */
  start: number;
  end: number;
}

export type RangeDecision =
  | { kind: 'whole' }
  | { kind: 'partial'; span: ByteSpan }
  | { kind: 'unsatisfiable' };

interface RawRange {
  first?: number;
  last?: number;
  suffix?: number;
}

const DIGITS = /^\d+$/;

/** Digits as a number, undefined past 2^53 (no object is that large, so it starts past the end). */
function num(s: string): number {
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : Number.MAX_SAFE_INTEGER;
}

/** The ranges of a `bytes=` header, or undefined when it is not one (then it is ignored). */
export function parseRangeSet(header: string): RawRange[] | undefined {
  const m = /^\s*bytes\s*=\s*(.*)$/i.exec(header);
  if (!m?.[1]) return undefined;
  const out: RawRange[] = [];
  for (const part of m[1].split(',')) {
    const spec = part.trim();
    if (spec === '') continue;
    const dash = spec.indexOf('-');
    if (dash < 0) return undefined;
    const a = spec.slice(0, dash).trim();
    const b = spec.slice(dash + 1).trim();
    if (a === '') {
      if (!DIGITS.test(b)) return undefined;
      out.push({ suffix: num(b) });
    } else {
      if (!DIGITS.test(a) || (b !== '' && !DIGITS.test(b))) return undefined;
      const first = num(a);
      const last = b === '' ? undefined : num(b);
      if (last !== undefined && last < first) return undefined;
      out.push({ first, last });
    }
  }
  return out.length ? out : undefined;
}

function resolve(r: RawRange, size: number): ByteSpan | undefined {
  if (r.suffix !== undefined) {
    if (r.suffix === 0 || size === 0) return undefined;
    return { start: Math.max(0, size - r.suffix), end: size - 1 };
  }
  const first = r.first ?? 0;
  if (first >= size) return undefined;
  return { start: first, end: Math.min(r.last ?? size - 1, size - 1) };
}

/** What to answer for `header` on an object of `size` bytes. */
export function decideRange(header: string | undefined, size: number): RangeDecision {
  if (header === undefined) return { kind: 'whole' };
  const set = parseRangeSet(header);
  if (!set) return { kind: 'whole' };
  const spans = set.map((r) => resolve(r, size));
  const ok = spans.filter((s): s is ByteSpan => s !== undefined);
  if (ok.length === 0) {
    // A non-zero suffix of an empty object is satisfiable by the letter of §14.1.1, but selects
    // nothing: the whole (empty) object.
    if (size === 0 && set.some((r) => r.suffix !== undefined && r.suffix > 0)) return { kind: 'whole' };
    return { kind: 'unsatisfiable' };
  }
  if (set.length > 1) return { kind: 'whole' };
  return { kind: 'partial', span: ok[0] as ByteSpan };
}

/**
 * If-Range (RFC 9110 §13.1.5): the range applies only when the validator matches the current
 * representation — an entity tag by strong comparison (a weak tag never matches), a date only
 * when it equals Last-Modified exactly. Otherwise the whole object is sent (200), so a resumed
 * download never joins bytes of two versions.
 */
export function ifRangeHolds(
  ifRange: string | undefined,
  eTag: string | undefined,
  lastModified?: string,
): boolean {
  if (ifRange === undefined) return true;
  const v = ifRange.trim();
  if (v.startsWith('"') || v.startsWith('W/')) {
    return !v.startsWith('W/') && eTag !== undefined && !eTag.startsWith('W/') && v === eTag;
  }
  if (!lastModified) return false;
  const since = Date.parse(v);
  const last = Math.floor(Date.parse(lastModified) / 1000) * 1000;
  return Number.isFinite(since) && since === last;
}
