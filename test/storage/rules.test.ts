/** The pure rules: key and bucket name syntax, size and MIME limits, log redaction. */
import { describe, expect, it } from 'vitest';
import { isValidBucketName, isValidKey } from '../../src/storage/keys.js';
import {
  checkMimeType,
  effectiveLimit,
  parseAllowedMimeTypes,
  parseFileSizeLimit,
} from '../../src/storage/limits.js';
import { redactUrl } from '../../src/storage/log-redaction.js';

describe('keys and bucket names', () => {
  it('accepts the documented character set', () => {
    for (const k of ["a/b c/d-e_f.g!*'()&$=@;:+,?.txt", '.emptyFolderPlaceholder', 'x'])
      expect(isValidKey(k)).toBe(true);
  });
  it('accepts empty segments as the reference does (leading, trailing, doubled slashes)', () => {
    for (const k of ['/a', 'a/', 'a//b', 'a///b.txt', '/', '//', 'a/.b', 'a/...'])
      expect(isValidKey(k), k).toBe(true);
  });
  it('refuses other characters and dot segments', () => {
    for (const k of [
      '',
      'é.txt',
      'a%b',
      'a#b',
      'a[b]',
      'a{b}',
      'a^b',
      'a~b',
      'a|b',
      'a\\b',
      'a"b',
      'a<b>',
      'a`b',
      '../a',
      'a/./b',
      'a/..',
      '..',
      '.',
      'a//./b',
      'x'.repeat(1025),
    ]) {
      expect(isValidKey(k), k).toBe(false);
    }
  });
  it('bucket names', () => {
    expect(isValidBucketName('avatars')).toBe(true);
    for (const n of ['', 'a/b', ' a', 'a ', '.', '..', 'x--table-s3', 'x'.repeat(101), 'é'])
      expect(isValidBucketName(n), n).toBe(false);
  });
});

describe('limits', () => {
  it('parses sizes with decimal units and 3 significant digits', () => {
    expect(parseFileSizeLimit('1mb')).toBe(1_000_000);
    expect(parseFileSizeLimit('1.5GB')).toBe(1_500_000_000);
    expect(parseFileSizeLimit('1234MB')).toBe(1_230_000_000);
    expect(parseFileSizeLimit('30KB')).toBe(30_000);
    expect(parseFileSizeLimit('3B')).toBe(3);
    expect(parseFileSizeLimit(0)).toBe(0);
    expect(parseFileSizeLimit(null)).toBeNull();
    expect(() => parseFileSizeLimit('5 TB')).toThrow('Invalid file size format');
    expect(() => parseFileSizeLimit(-1)).toThrow();
  });
  it('matches MIME types by type and exact rest or *', () => {
    expect(() => checkMimeType(['text/*'], 'text/plain;charset=UTF-8')).not.toThrow();
    expect(() => checkMimeType(['text/plain'], 'text/plain;charset=UTF-8')).toThrow(
      'mime type text/plain;charset=UTF-8 is not supported',
    );
    expect(() => checkMimeType(['*/*'], 'image/png')).toThrow();
    expect(() => checkMimeType([], 'image/png')).not.toThrow();
    expect(() => checkMimeType(null, 'image/png')).not.toThrow();
  });
  it('validates allowed_mime_types entries', () => {
    expect(parseAllowedMimeTypes(['image/png', '', 'image/*', 'text/plain;charset=utf-8'])).toEqual([
      'image/png',
      'image/*',
      'text/plain;charset=utf-8',
    ]);
    expect(() => parseAllowedMimeTypes(['image'])).toThrow('mime type image is not supported');
  });
  it('the effective limit', () => {
    expect(effectiveLimit(100, null, false)).toBe(100);
    expect(effectiveLimit(100, 10, false)).toBe(10);
    expect(effectiveLimit(100, 0, false)).toBe(0);
    expect(effectiveLimit(100, 10, true)).toBe(0);
  });
});

describe('log redaction', () => {
  it('hides tokens in query strings', () => {
    expect(redactUrl('/storage/v1/object/sign/b/k?token=abc.def&download=x')).toBe(
      '/storage/v1/object/sign/b/k?token=[redacted]&download=x',
    );
    expect(redactUrl('/storage/v1/bucket?authorization=Bearer%20x')).toBe(
      '/storage/v1/bucket?authorization=[redacted]',
    );
  });
});
