/**
 * parseDocument's bounds: the nesting scan counts `{`/`[`/`(` tokens only (not inside strings,
 * block strings or comments), refuses past 256 levels before the recursive parser runs, and the
 * token budget stops the parser at 100,000 tokens.
 */
import { describe, expect, it } from 'vitest';
import { MAX_DOCUMENT_TOKENS, parseDocument } from '../../../src/graphql/execute/parse-document.js';

const deep = (n: number) => `${'['.repeat(n)}1${']'.repeat(n)}`;
const nestedMessage = 'Syntax Error: Document is nested more than 256 levels deep. Parsing aborted.';

describe('parseDocument bounds', () => {
  it('punctuators in strings, block strings and comments are not nesting', () => {
    const braces = '{'.repeat(400);
    const docs = [
      `{ f(a: "${braces}") }`,
      `{ f(a: "esc \\" ${braces}") }`,
      `{ f(a: """${braces} \\""" ${braces}""") }`,
      `# ${braces}\n{ f }`,
      `{ f(a: ${deep(250)}) }`,
    ];
    for (const d of docs) expect(() => parseDocument(d)).not.toThrow();
  });

  it('refuses past 256 levels of real nesting, wherever the strings are', () => {
    for (const d of [
      `{ f(a: ${deep(300)}) }`,
      `{ f(a: "}}}}") g(b: ${deep(300)}) }`,
      `# ]]]]\n{ f(a: ${deep(257)}) }`,
    ])
      expect(() => parseDocument(d)).toThrow(nestedMessage);
  });

  it('an unterminated string ends at its line break: nesting after it still counts', () => {
    expect(() => parseDocument(`{ f(a: "open\n${deep(300)}) }`)).toThrow(nestedMessage);
    expect(() => parseDocument('{ f(a: "open\n) }')).toThrow('Syntax Error: Unterminated string.');
  });

  it(`stops at ${MAX_DOCUMENT_TOKENS} tokens, in the engine's words`, () => {
    const doc = `{ ${Array.from({ length: MAX_DOCUMENT_TOKENS / 3 + 1 }, (_, i) => `a${i}: f`).join(' ')} }`;
    expect(() => parseDocument(doc)).toThrow(
      `Syntax Error: Document contains more than ${MAX_DOCUMENT_TOKENS} tokens. Parsing aborted.`,
    );
    const ok = `{ ${Array.from({ length: 30_000 }, (_, i) => `a${i}: f`).join(' ')} }`;
    expect(parseDocument(ok).definitions).toHaveLength(1);
  });
});
