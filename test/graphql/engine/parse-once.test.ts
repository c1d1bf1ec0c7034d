/** A request's document is parsed once: the HTTP layer's parse is the AST the engine runs. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolve } from '../../../src/graphql/engine.js';
import { GraphQLEngineError } from '../../../src/graphql/plan/errors.js';
import { parseRequestDocument } from '../../../src/graphql/execute/document.js';
import { queryShape } from '../../../src/graphql/http/query-shape.js';
import { setupEnv, type Env } from './harness.js';

let env: Env;
beforeAll(async () => {
  env = await setupEnv();
});
afterAll(() => env.close());

describe('parse once', () => {
  it('the engine runs the AST it is given and does not parse the text again', async () => {
    const parsed = parseRequestDocument('{ __typename }');
    // The text is not a document: only the given AST can answer.
    expect(await resolve(env.client, { query: 'not a document {', parsed })).toEqual({
      data: { __typename: 'Query' },
    });
  });
  it('a parse error travels as the request-level error the engine answers', async () => {
    const parsed = parseRequestDocument('{ account');
    expect(parsed).toBeInstanceOf(GraphQLEngineError);
    const res = await resolve(env.client, { query: '{ __typename }', parsed });
    expect(res).toEqual({ errors: [{ message: (parsed as GraphQLEngineError).message }] });
  });
  it('one parse per text serves the shape check and the engine', () => {
    const q = 'query A { accountCollection { edges { node { id } } } } mutation B { __typename }';
    const doc = parseRequestDocument(q);
    expect(parseRequestDocument(q)).toBe(doc);
    if (doc instanceof GraphQLEngineError) throw doc;
    expect(queryShape(doc, 'A')).toMatchObject({ depth: 4, operation: 'query' });
    expect(queryShape(doc, 'B')).toMatchObject({ depth: 1, operation: 'mutation' });
  });
});
