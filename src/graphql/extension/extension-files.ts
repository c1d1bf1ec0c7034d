/** `<name>.control` and `<name>--<version>.sql`: the engine's objects as a PostgreSQL extension. */
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { quoteLiteral } from '../../db/sql-text.js';

export const DEFAULT_EXTENSION_NAME = 'strata_graphql';
export const EXTENSION_COMMENT =
  'Strata GraphQL engine: schema version tracking and the SQL objects of the pg_graphql-compatible API';

const NAME = /^[a-z_][a-z0-9_]*$/;
const VERSION = /^[A-Za-z0-9._+~]+$/;

export function checkExtensionName(name: string, version: string): void {
  if (!NAME.test(name)) throw new Error(`invalid extension name "${name}"`);
  if (!VERSION.test(version) || version.includes('--'))
    throw new Error(`invalid extension version "${version}"`);
}

export function controlFileText(name: string, version: string): string {
  return `# ${name}: written by Strata; rewritten on upgrade.
comment = ${quoteLiteral(EXTENSION_COMMENT)}
default_version = ${quoteLiteral(version)}
schema = graphql
relocatable = false
superuser = true
trusted = false
`;
}

/**
 * The install script: the engine's SQL (without `create schema`: CREATE EXTENSION makes the control
 * file's schema itself), plus graphql.strata_version() and graphql.strata_objects_hash().
 */
export function scriptFileText(name: string, version: string, engineSql: string): string {
  return `-- ${name} ${version}: the GraphQL engine's database objects, written by Strata from the engine's SQL (sql/graphql/objects.sql).
\\echo Use "CREATE EXTENSION ${name}" to load this file. \\quit

${engineSql.trim().replace(/;?$/, ';')}

${versionFunctionSql(version, engineSql)}
`;
}

/** A digest of the engine's SQL: a changed engine under an unchanged version is reinstalled too. */
export function objectsHash(engineSql: string): string {
  return createHash('sha256').update(engineSql).digest('hex').slice(0, 16);
}

/**
 * graphql.strata_version(): the version of the installed objects (on servers without the
 * extension too); graphql.strata_objects_hash(): which engine SQL they came from.
 */
export function versionFunctionSql(version: string, engineSql: string): string {
  return `create or replace function graphql.strata_version() returns text
language sql immutable
as $$ select ${quoteLiteral(version)}::text $$;
grant execute on function graphql.strata_version() to public;
create or replace function graphql.strata_objects_hash() returns text
language sql immutable
as $$ select ${quoteLiteral(objectsHash(engineSql))}::text $$;`;
}

function writeAtomically(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o644 });
  renameSync(tmp, path);
}

/** Writes `text` unless already there; returns how to put back what was there before. */
function writeIfChanged(path: string, text: string): () => void {
  const before = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
  if (before === text) return () => {};
  writeAtomically(path, text);
  return before === undefined ? () => rmSync(path, { force: true }) : () => writeAtomically(path, before);
}

export function extensionFilePaths(
  dir: string,
  name: string,
  version: string,
): { control: string; script: string } {
  return { control: join(dir, `${name}.control`), script: join(dir, `${name}--${version}.sql`) };
}

/**
 * Writes both files (atomically; untouched when already identical). The script goes first: a
 * control file must never name a missing script. Returns a function that restores the folder as
 * it was (for a folder that turns out not to be the server's).
 */
export function writeExtensionFiles(
  dir: string,
  name: string,
  version: string,
  engineSql: string,
): () => void {
  checkExtensionName(name, version);
  const paths = extensionFilePaths(dir, name, version);
  const undoScript = writeIfChanged(paths.script, scriptFileText(name, version, engineSql));
  const undoControl = writeIfChanged(paths.control, controlFileText(name, version));
  return () => {
    undoControl();
    undoScript();
  };
}

export function removeExtensionFiles(dir: string, name: string, version: string): void {
  const paths = extensionFilePaths(dir, name, version);
  rmSync(paths.control, { force: true });
  rmSync(paths.script, { force: true });
}
