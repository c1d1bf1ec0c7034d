/**
 * Parsing with bounds, so that no document can make the parser (or any later walk of the AST, all
 * of them recursive) exhaust the stack or take unbounded time: a token budget (graphql-js's
 * `maxTokens`) and a nesting budget, both checked by the lexer (iterative) before the recursive
 * parser runs. Every walk over a parsed document can rely on its depth being at most
 * MAX_DOCUMENT_NESTING. Failures are GraphQL syntax errors, worded as graphql-js words its own.
 */
import { GraphQLError, Lexer, Source, TokenKind, parse, type DocumentNode } from 'graphql';

/**
 * Most tokens a document may have: legitimate documents have a few thousand; this bounds parsing
 * to well under a second whatever the body limit is, and leaves room for the width limit to
 * refuse large operations with its own message.
 */
export const MAX_DOCUMENT_TOKENS = 250_000;
/** Deepest nesting of `{`, `[` and `(` (selection sets, lists, input objects, argument lists). */
export const MAX_DOCUMENT_NESTING = 256;

const OPEN = new Set<string>([TokenKind.BRACE_L, TokenKind.BRACKET_L, TokenKind.PAREN_L]);
const CLOSE = new Set<string>([TokenKind.BRACE_R, TokenKind.BRACKET_R, TokenKind.PAREN_R]);

/** Throws a GraphQLError (syntax error) when the document is too long or too deeply nested. */
function checkBounds(source: Source): void {
  const lexer = new Lexer(source);
  let depth = 0;
  let tokens = 0;
  const next = () => {
    try {
      return lexer.advance();
    } catch {
      // A lexical error: the parser reaches it (or an earlier error) within the bounds checked so far.
      return undefined;
    }
  };
  for (let t = next(); t && t.kind !== TokenKind.EOF; t = next()) {
    if (++tokens > MAX_DOCUMENT_TOKENS)
      throw new GraphQLError(
        `Syntax Error: Document contains more than ${MAX_DOCUMENT_TOKENS} tokens. Parsing aborted.`,
      );
    if (OPEN.has(t.kind)) {
      if (++depth > MAX_DOCUMENT_NESTING)
        throw new GraphQLError(
          `Syntax Error: Document is nested more than ${MAX_DOCUMENT_NESTING} levels deep. Parsing aborted.`,
        );
    } else if (CLOSE.has(t.kind)) depth--;
  }
}

/** graphql-js `parse` (no locations) within the bounds above; throws GraphQLError. */
export function parseDocument(query: string): DocumentNode {
  const source = new Source(query);
  checkBounds(source);
  return parse(source, { noLocation: true, maxTokens: MAX_DOCUMENT_TOKENS });
}
