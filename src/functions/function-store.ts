/** Edge function records and bodies in the platform database (table edge_functions). */
import type { Platform } from '../platform/platform.js';

export interface FunctionRecord {
  id: string;
  projectRef: string;
  slug: string;
  name: string;
  status: 'ACTIVE' | 'REMOVED' | 'THROTTLED';
  version: number;
  verifyJwt: boolean;
  importMap: boolean | null;
  entrypointPath: string | null;
  importMapPath: string | null;
  ezbrSha256: string | null;
  bodyContentType: string;
  bodySha256: string;
  createdAt: Date;
  updatedAt: Date;
}

/** Metadata fields a create or update may set (undefined = leave as is / default). */
export interface FunctionFields {
  slug?: string;
  name?: string;
  verifyJwt?: boolean;
  importMap?: boolean;
  entrypointPath?: string;
  importMapPath?: string;
  ezbrSha256?: string;
}

export interface FunctionBody {
  bytes: Buffer;
  contentType: string;
  sha256: string;
}

export class DuplicateSlugError extends Error {
  constructor(slug: string) {
    super(`Duplicated function slug: ${slug}`);
  }
}

const COLUMNS = `id, project_ref, slug, name, status, version, verify_jwt, import_map, entrypoint_path, import_map_path,
  ezbr_sha256, body_content_type, body_sha256, created_at, updated_at`;

interface Row {
  id: string;
  project_ref: string;
  slug: string;
  name: string;
  status: FunctionRecord['status'];
  version: number;
  verify_jwt: boolean;
  import_map: boolean | null;
  entrypoint_path: string | null;
  import_map_path: string | null;
  ezbr_sha256: string | null;
  body_content_type: string;
  body_sha256: string;
  created_at: Date;
  updated_at: Date;
}

function fromRow(r: Row): FunctionRecord {
  return {
    id: r.id,
    projectRef: r.project_ref,
    slug: r.slug,
    name: r.name,
    status: r.status,
    version: r.version,
    verifyJwt: r.verify_jwt,
    importMap: r.import_map,
    entrypointPath: r.entrypoint_path,
    importMapPath: r.import_map_path,
    ezbrSha256: r.ezbr_sha256,
    bodyContentType: r.body_content_type,
    bodySha256: r.body_sha256,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: string }).code === '23505';
}

export async function listFunctions(platform: Platform, ref: string): Promise<FunctionRecord[]> {
  const { rows } = await platform.pool.query<Row>(
    `select ${COLUMNS} from edge_functions where project_ref = $1 order by created_at, slug`,
    [ref],
  );
  return rows.map(fromRow);
}

export async function getFunction(
  platform: Platform,
  ref: string,
  slug: string,
): Promise<FunctionRecord | undefined> {
  const { rows } = await platform.pool.query<Row>(
    `select ${COLUMNS} from edge_functions where project_ref = $1 and slug = $2`,
    [ref, slug],
  );
  return rows[0] ? fromRow(rows[0]) : undefined;
}

export async function getFunctionBody(
  platform: Platform,
  ref: string,
  slug: string,
): Promise<(FunctionBody & { record: FunctionRecord }) | undefined> {
  const { rows } = await platform.pool.query<Row & { body: Buffer }>(
    `select ${COLUMNS}, body from edge_functions where project_ref = $1 and slug = $2`,
    [ref, slug],
  );
  const r = rows[0];
  return r
    ? { bytes: r.body, contentType: r.body_content_type, sha256: r.body_sha256, record: fromRow(r) }
    : undefined;
}

export async function insertFunction(
  platform: Platform,
  ref: string,
  f: FunctionFields & { slug: string; name: string },
  body: FunctionBody,
): Promise<FunctionRecord> {
  try {
    const { rows } = await platform.pool.query<Row>(
      `insert into edge_functions (project_ref, slug, name, verify_jwt, import_map, entrypoint_path, import_map_path, ezbr_sha256, body, body_content_type, body_sha256)
       values ($1, $2, $3, coalesce($4, true), $5, $6, $7, $8, $9, $10, $11)
       returning ${COLUMNS}`,
      [
        ref,
        f.slug,
        f.name,
        f.verifyJwt ?? null,
        f.importMap ?? null,
        f.entrypointPath ?? null,
        f.importMapPath ?? null,
        f.ezbrSha256 ?? null,
        body.bytes,
        body.contentType,
        body.sha256,
      ],
    );
    const [row] = rows;
    if (!row) throw new Error('insert into functions returned no row');
    return fromRow(row);
  } catch (err) {
    if (isUniqueViolation(err)) throw new DuplicateSlugError(f.slug);
    throw err;
  }
}

/** Applies the given fields (and body, if any); bumps version and updated_at. Undefined when the function does not exist. */
export async function updateFunction(
  platform: Platform,
  ref: string,
  slug: string,
  f: FunctionFields,
  body: FunctionBody | undefined,
): Promise<FunctionRecord | undefined> {
  const sets: string[] = ['version = version + 1', 'updated_at = now()'];
  const values: unknown[] = [ref, slug];
  const set = (column: string, value: unknown) => {
    values.push(value);
    sets.push(`${column} = $${values.length}`);
  };
  if (f.slug !== undefined) set('slug', f.slug);
  if (f.name !== undefined) set('name', f.name);
  if (f.verifyJwt !== undefined) set('verify_jwt', f.verifyJwt);
  if (f.importMap !== undefined) set('import_map', f.importMap);
  if (f.entrypointPath !== undefined) set('entrypoint_path', f.entrypointPath);
  if (f.importMapPath !== undefined) set('import_map_path', f.importMapPath);
  if (f.ezbrSha256 !== undefined) set('ezbr_sha256', f.ezbrSha256);
  if (body) {
    set('body', body.bytes);
    set('body_content_type', body.contentType);
    set('body_sha256', body.sha256);
  }
  try {
    const { rows } = await platform.pool.query<Row>(
      `update edge_functions set ${sets.join(', ')} where project_ref = $1 and slug = $2 returning ${COLUMNS}`,
      values,
    );
    return rows[0] ? fromRow(rows[0]) : undefined;
  } catch (err) {
    if (isUniqueViolation(err)) throw new DuplicateSlugError(f.slug ?? slug);
    throw err;
  }
}

export async function deleteFunction(platform: Platform, ref: string, slug: string): Promise<boolean> {
  const { rowCount } = await platform.pool.query(
    'delete from edge_functions where project_ref = $1 and slug = $2',
    [ref, slug],
  );
  return (rowCount ?? 0) > 0;
}
