/**
 * How a backend spells one segment of an object key in a file path or an S3 object key. Keys may
 * hold empty, `.` and `..` segments (as the reference accepts them: `a//b`, `a/../b`), which a
 * file system or an HTTP path would collapse or resolve. Those three are written with a leading
 * `%`, which no key character is, so the mapping is one-to-one, never leaves the bucket, and the
 * spelling of every other segment (all data stored so far) is unchanged.
 */
const SPECIAL = new Set(['', '.', '..']);

/** A segment as a file or directory name: `''`, `.`, `..` become `%`, `%.`, `%..`. */
export function fileSegment(segment: string): string {
  return SPECIAL.has(segment) ? `%${segment}` : segment;
}

/** The key segment a file or directory name stands for (the inverse of fileSegment). */
export function keySegmentOfFile(name: string): string {
  return name.startsWith('%') ? name.slice(1) : name;
}

/** A segment inside an S3 object key: percent-encoded; `''`, `.`, `..` become `%`, `%2E`, `%2E%2E`. */
export function s3Segment(segment: string): string {
  if (segment === '') return '%';
  if (segment === '.' || segment === '..') return segment.replaceAll('.', '%2E');
  return encodeURIComponent(segment);
}

/** The key segment an S3 object key segment stands for; throws on a malformed one. */
export function keySegmentOfS3(part: string): string {
  return part === '%' ? '' : decodeURIComponent(part);
}
