/** Errors with pg_graphql's exact wording. `requestLevel` errors are answered without a `data` key. */
export class GraphQLEngineError extends Error {
  constructor(
    message: string,
    readonly requestLevel = false,
  ) {
    super(message);
  }
}

/** A function declaration (not an arrow) so that `if (!x) fail(...)` narrows `x` after it. */
export function fail(message: string): never {
  throw new GraphQLEngineError(message);
}

/** A list of names as pg_graphql's messages print it (Rust's `{:?}` of a `Vec<&str>`: `["a", "b"]`). */
export function debugList(names: readonly string[]): string {
  return `[${names.map((n) => JSON.stringify(n)).join(', ')}]`;
}
