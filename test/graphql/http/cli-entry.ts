/** Runs src/cli.ts's main() from source (vite-node), for the CLI tests: `vite-node cli-entry.ts -- <command> ...`. */
import { main } from '../../../src/cli.js';

const args = process.argv.slice(2);
main(args[0] === '--' ? args.slice(1) : args).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
