/**
 * A yoga plugin: a GET whose `variables` or `extensions` query-string parameter is not JSON gets
 * 400 BAD_REQUEST, as a POST body that is not JSON does. Yoga's GET parser calls JSON.parse on
 * them unguarded, so such a request used to end as a 500 "Unexpected error." with a stack trace
 * in the log.
 */
import { createGraphQLError, type Plugin } from 'graphql-yoga';

export function useQueryStringJson(): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser }) {
      if (request.method !== 'GET' || !requestParser) return;
      const parse = requestParser;
      setRequestParser((req) => {
        try {
          return parse(req);
        } catch (err) {
          if (!(err instanceof SyntaxError)) throw err;
          throw createGraphQLError('The "variables" and "extensions" query string parameters must be JSON.', {
            extensions: { http: { status: 400 }, code: 'BAD_REQUEST' },
          });
        }
      });
    },
  };
}
