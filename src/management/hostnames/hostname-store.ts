/** Custom hostname records in the platform database (table custom_hostnames). */
import { randomBytes } from 'node:crypto';
import type { Platform } from '../../platform/platform.js';
import type { HostnameStatus } from './state-machine.js';

export interface HostnameRecord {
  projectRef: string;
  id: string;
  hostname: string;
  status: HostnameStatus;
  txtName: string;
  txtValue: string;
  originServer: string;
  verificationErrors: string[];
  createdAt: Date;
  updatedAt: Date;
}

interface Row {
  project_ref: string;
  id: string;
  hostname: string;
  status: HostnameStatus;
  txt_name: string;
  txt_value: string;
  origin_server: string;
  verification_errors: string[];
  created_at: Date;
  updated_at: Date;
}

function fromRow(r: Row): HostnameRecord {
  return {
    projectRef: r.project_ref,
    id: r.id,
    hostname: r.hostname,
    status: r.status,
    txtName: r.txt_name,
    txtValue: r.txt_value,
    originServer: r.origin_server,
    verificationErrors: r.verification_errors ?? [],
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export async function getHostname(platform: Platform, ref: string): Promise<HostnameRecord | undefined> {
  const { rows } = await platform.pool.query<Row>('select * from custom_hostnames where project_ref = $1', [
    ref,
  ]);
  return rows[0] ? fromRow(rows[0]) : undefined;
}

/** Whether another project already holds `hostname`. */
export async function hostnameTakenElsewhere(
  platform: Platform,
  ref: string,
  hostname: string,
): Promise<boolean> {
  const { rowCount } = await platform.pool.query(
    `select 1 from custom_hostnames h join projects p on p.ref = h.project_ref
     where h.hostname = $1 and h.project_ref <> $2 and p.status <> 'REMOVED'`,
    [hostname, ref],
  );
  return (rowCount ?? 0) > 0;
}

/** Inserts a new configuration in state 2_initiated; undefined when the project already has one (or the hostname is taken). */
export async function insertHostname(
  platform: Platform,
  ref: string,
  hostname: string,
  originServer: string,
): Promise<HostnameRecord | undefined> {
  // A deleted project (tombstone) no longer holds its hostname.
  await platform.pool.query(
    `delete from custom_hostnames h using projects p where p.ref = h.project_ref and h.hostname = $1 and p.status = 'REMOVED'`,
    [hostname],
  );
  const txtName = `_acme-challenge.${hostname}`;
  const txtValue = `strata-verification=${randomBytes(16).toString('hex')}`;
  const { rows } = await platform.pool.query<Row>(
    `insert into custom_hostnames (project_ref, hostname, status, txt_name, txt_value, origin_server)
     values ($1, $2, '2_initiated', $3, $4, $5)
     on conflict do nothing
     returning *`,
    [ref, hostname, txtName, txtValue, originServer],
  );
  return rows[0] ? fromRow(rows[0]) : undefined;
}

/** Moves the project's record from `from` to `to` (compare-and-set); undefined when it changed meanwhile. */
export async function updateHostnameStatus(
  platform: Platform,
  ref: string,
  from: HostnameStatus,
  to: HostnameStatus,
  errors: string[],
): Promise<HostnameRecord | undefined> {
  const { rows } = await platform.pool.query<Row>(
    `update custom_hostnames set status = $3, verification_errors = $4::jsonb, updated_at = now(),
       verified_at = case when $3 in ('4_origin_setup_completed') and verified_at is null then now() else verified_at end,
       activated_at = case when $3 = '5_services_reconfigured' and activated_at is null then now() else activated_at end
     where project_ref = $1 and status = $2
     returning *`,
    [ref, from, to, JSON.stringify(errors)],
  );
  return rows[0] ? fromRow(rows[0]) : undefined;
}

export async function deleteHostname(platform: Platform, ref: string): Promise<boolean> {
  const { rowCount } = await platform.pool.query('delete from custom_hostnames where project_ref = $1', [
    ref,
  ]);
  return (rowCount ?? 0) > 0;
}

/** The project whose *active* custom hostname is `hostname`. */
export async function activeRefForHostname(
  platform: Platform,
  hostname: string,
): Promise<string | undefined> {
  const { rows } = await platform.pool.query<{ project_ref: string }>(
    `select h.project_ref from custom_hostnames h join projects p on p.ref = h.project_ref
     where h.hostname = $1 and h.status = '5_services_reconfigured' and p.status <> 'REMOVED'`,
    [hostname],
  );
  return rows[0]?.project_ref;
}
