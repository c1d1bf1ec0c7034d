/**
 * User content on the API origins (function answers, stored objects) is inert: it is shown or
 * downloaded, never run as a page beside anything of the platform's (issue 29 item 5, end user →
 * owner; docs/security/origins.md). Every such answer gets `X-Content-Type-Options: nosniff` (its
 * declared type is the only one a browser may use) and `Content-Security-Policy: sandbox` (opened
 * as a page, it gets a unique opaque origin: no script, no storage, no forms, no popups).
 * Functions go further, as the hosted platform does on its default domain: a type a browser would
 * render as a document that can script (HTML, XHTML, SVG, XML) is sent as text/plain.
 */

/** Opened as a page, user content runs nothing and shares no origin with anything. */
export const USER_CONTENT_CSP = 'sandbox';

/** The media type of a Content-Type value: lower case, without parameters. */
export function mediaTypeOf(contentType: string): string {
  return (contentType.split(';', 1)[0] ?? '').trim().toLowerCase();
}

/** Types a browser renders as a document that may run script (directly or through a stylesheet). */
export function isScriptableType(contentType: string): boolean {
  const t = mediaTypeOf(contentType);
  return (
    t === 'text/html' ||
    t === 'application/xhtml+xml' ||
    t === 'text/xml' ||
    t === 'application/xml' ||
    t === 'text/xsl' ||
    t === 'multipart/x-mixed-replace' ||
    t.endsWith('+xml') ||
    t.endsWith('/xml')
  );
}

/** `text/plain` with the value's parameters (its charset) kept. */
function asPlainText(contentType: string): string {
  const semi = contentType.indexOf(';');
  return semi === -1 ? 'text/plain' : `text/plain${contentType.slice(semi)}`;
}

/** Redirect targets that would run script or make a document of the URL's own text. */
const SCRIPTING_SCHEME = /^(?:javascript|vbscript|data):/i;

function scriptingLocation(value: string): boolean {
  // Browsers drop ASCII whitespace and controls inside a scheme (`java\tscript:`) and before it.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: those are what is removed
  return SCRIPTING_SCHEME.test(value.replace(/[\u0000-\u0020]/g, ''));
}

/**
 * A function's response head (flat `[name, value, …]` as undici gives it) made inert: scriptable
 * types sent as text/plain, a `Location` to `javascript:`/`data:`/`vbscript:` dropped, its own
 * nosniff replaced by ours, its own Content-Security-Policy kept (browsers enforce every policy
 * they get, so ours only narrows it) and ours added.
 */
export function inertFunctionHead(headers: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < headers.length; i += 2) {
    const name = headers[i] as string;
    const value = headers[i + 1] as string;
    const lower = name.toLowerCase();
    if (lower === 'x-content-type-options') continue;
    if (lower === 'location' && scriptingLocation(value)) continue;
    if (lower === 'content-type' && isScriptableType(value)) out.push(name, asPlainText(value));
    else out.push(name, value);
  }
  out.push('x-content-type-options', 'nosniff', 'content-security-policy', USER_CONTENT_CSP);
  return out;
}

/** The headers every stored object's bytes are sent with (the type itself stays the stored one). */
export const INERT_OBJECT_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': USER_CONTENT_CSP,
};
