/** Strata's version (package.json), which is also the version of the engine's database objects. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// Same relative place from src/graphql/extension and dist/graphql/extension.
const PACKAGE_JSON = fileURLToPath(new URL('../../../package.json', import.meta.url));

export const STRATA_VERSION: string = (JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { version: string })
  .version;
