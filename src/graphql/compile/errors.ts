/** Errors with pg_graphql's exact wording. `requestLevel` errors are answered without a `data` key. */
export class GraphQLEngineError extends Error {
  constructor(
    message: string,
    readonly requestLevel = false,
  ) {
    super(message);
  }
}

export const fail = (message: string): never => {
  throw new GraphQLEngineError(message);
};
