/** `strata serve` and `strata sdl`. PLACEHOLDER until the GraphQL HTTP layer lands. */
export async function serveCommand(_args: string[]): Promise<void> {
  throw new Error('strata serve is not available yet');
}

export async function sdlCommand(_args: string[]): Promise<void> {
  throw new Error('strata sdl is not available yet');
}
