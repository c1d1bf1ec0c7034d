/** The wire shape of a function (FunctionResponse): timestamps in epoch milliseconds. */
import type { FunctionRecord } from '../../functions/function-store.js';

export interface FunctionResponse {
  id: string;
  slug: string;
  name: string;
  status: string;
  version: number;
  created_at: number;
  updated_at: number;
  verify_jwt: boolean;
  import_map?: boolean;
  entrypoint_path?: string;
  import_map_path?: string;
  ezbr_sha256?: string;
}

export function functionResponse(f: FunctionRecord): FunctionResponse {
  const out: FunctionResponse = {
    id: f.id,
    slug: f.slug,
    name: f.name,
    status: f.status,
    version: f.version,
    created_at: f.createdAt.getTime(),
    updated_at: f.updatedAt.getTime(),
    verify_jwt: f.verifyJwt,
  };
  if (f.importMap !== null) out.import_map = f.importMap;
  if (f.entrypointPath !== null) out.entrypoint_path = f.entrypointPath;
  if (f.importMapPath !== null) out.import_map_path = f.importMapPath;
  if (f.ezbrSha256 !== null) out.ezbr_sha256 = f.ezbrSha256;
  return out;
}
