/**
 * Parsing with bounds, so that no document can make the parser (or any later walk of the AST, all
 * of them recursive) exhaust the stack or take unbounded time: a nesting budget, checked by a scan
 * of the text (iterative, ~100x faster than lexing) before the recursive parser runs, and a token
 * budget (graphql-js's `maxTokens`), checked by the parser as it reads. Every walk over a parsed
 * document can rely on its depth being at most MAX_DOCUMENT_NESTING. Failures are GraphQL syntax
 * errors, worded as graphql-js words its own.
 */
import { GraphQLError, parse, type DocumentNode } from 'graphql';

/**
 * Most tokens a document may have: legitimate documents have a few thousand (bulk values belong
 * in variables); this bounds parsing to ~100 ms of CPU whatever the body limit is, and leaves room
 * for the width limit to refuse large operations with its own message.
 */
export const MAX_DOCUMENT_TOKENS = 100_000;
/** Deepest nesting of `{`, `[` and `(` (selection sets, lists, input objects, argument lists). */
export const MAX_DOCUMENT_NESTING = 256;

const QUOTE = 34;
const BACKSLASH = 92;
const HASH = 35;

/**
 * The deepest `{`/`[`/`(` nesting of the document's tokens: punctuators inside strings, block
 * strings and comments do not count. Past the first point where the text is not valid GraphQL the
 * count may be anything, but the parser never gets beyond that point.
 */
function nestingOverLimit(q: string): boolean {
  const n = q.length;
  let depth = 0;
  for (let i = 0; i < n; i++) {
    const c = q.charCodeAt(i);
    if (c === 123 || c === 91 || c === 40) {
      if (++depth > MAX_DOCUMENT_NESTING) return true;
    } else if (c === 125 || c === 93 || c === 41) depth--;
    else if (c === HASH) {
      while (i + 1 < n && q.charCodeAt(i + 1) !== 10 && q.charCodeAt(i + 1) !== 13) i++;
    } else if (c === QUOTE) {
      if (q.charCodeAt(i + 1) === QUOTE && q.charCodeAt(i + 2) === QUOTE) {
        // Block string: up to the next """ that is not \""" (its one escape).
        i += 3;
        while (i < n && !(q.charCodeAt(i) === QUOTE && q.startsWith('""', i + 1))) {
          i += q.charCodeAt(i) === BACKSLASH && q.startsWith('"""', i + 1) ? 4 : 1;
        }
        i += 2;
      } else {
        // String: up to the next unescaped quote (a line break ends it: a lexical error).
        i++;
        while (i < n) {
          const d = q.charCodeAt(i);
          if (d === QUOTE || d === 10 || d === 13) break;
          i += d === BACKSLASH ? 2 : 1;
        }
      }
    }
  }
  return false;
}

/** graphql-js `parse` (no locations) within the bounds above; throws GraphQLError. */
export function parseDocument(query: string): DocumentNode {
  if (nestingOverLimit(query))
    throw new GraphQLError(
      `Syntax Error: Document is nested more than ${MAX_DOCUMENT_NESTING} levels deep. Parsing aborted.`,
    );
  try {
    return parse(query, { noLocation: true, maxTokens: MAX_DOCUMENT_TOKENS });
  } catch (e) {
    // graphql-js words this one "more that"; the engine's message says what it means.
    if (e instanceof GraphQLError && e.message.includes(TOKENS_TYPO))
      throw new GraphQLError(
        `Syntax Error: Document contains more than ${MAX_DOCUMENT_TOKENS} tokens. Parsing aborted.`,
      );
    throw e;
  }
}

const TOKENS_TYPO = `Document contains more that ${MAX_DOCUMENT_TOKENS} tokens`;
