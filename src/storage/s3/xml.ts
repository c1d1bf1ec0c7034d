/**
 * XML in and out of the S3 protocol (fast-xml-parser, as the reference). Request bodies are read
 * with a byte cap; characters XML 1.0 cannot carry (NUL and other C0 controls) never reach a reply.
 */
import type { Readable } from 'node:stream';
import { XMLBuilder, XMLParser } from 'fast-xml-parser';
import { s3Errors } from './errors.js';

export const S3_NS = 'http://s3.amazonaws.com/doc/2006-03-01/';

const builder = new XMLBuilder({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  suppressEmptyNode: false,
});
const parser = new XMLParser({
  ignoreAttributes: true,
  parseTagValue: false,
  trimValues: false,
  processEntities: true,
  htmlEntities: false,
  isArray: (name) => name === 'Object' || name === 'Part',
});

/** Replaces characters XML 1.0 forbids (so a hostile key cannot make a reply unparseable). */
export function xmlSafe(s: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to find them
  return s.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '\uFFFD');
}

function sanitize(v: unknown): unknown {
  if (typeof v === 'string') return xmlSafe(v);
  if (Array.isArray(v)) return v.map(sanitize);
  if (v && typeof v === 'object' && !(v instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = sanitize(x);
    return out;
  }
  return v;
}

export function toXml(root: string, body: Record<string, unknown>, withNamespace = true): string {
  const content = withNamespace ? { '@_xmlns': S3_NS, ...body } : body;
  return `<?xml version="1.0" encoding="UTF-8"?>${builder.build({ [root]: sanitize(content) })}`;
}

/** Reads a request body of at most `max` bytes and parses it; MalformedXML when it is not XML. */
export async function readXml(stream: Readable, max: number): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let total = 0;
  // An oversized body is drained, not kept, so that the error reply can still be read by the client.
  for await (const chunk of stream) {
    const b = chunk as Buffer;
    total += b.length;
    if (total <= max) chunks.push(b);
  }
  if (total > max) throw s3Errors.malformedXml();
  const text = Buffer.concat(chunks, total).toString('utf8');
  if (text.trim() === '') throw s3Errors.malformedXml();
  try {
    const parsed = parser.parse(text, true) as unknown;
    if (!parsed || typeof parsed !== 'object') throw s3Errors.malformedXml();
    return parsed as Record<string, unknown>;
  } catch {
    throw s3Errors.malformedXml();
  }
}
