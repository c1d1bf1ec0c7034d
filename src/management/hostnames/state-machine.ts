/**
 * The custom hostname state machine (the hosted platform's custom-hostname statuses): initialize → 2_initiated; reverify checks DNS
 * (the verification TXT record, then the CNAME to the project's origin) and advances
 * 2 → 3_challenge_verified → 4_origin_setup_completed; activate 4 → 5_services_reconfigured
 * (from then on the platform routes the hostname to the project); delete resets.
 */
export type HostnameStatus =
  | '1_not_started'
  | '2_initiated'
  | '3_challenge_verified'
  | '4_origin_setup_completed'
  | '5_services_reconfigured';

export const MSG_NONE = 'No custom hostname configuration found.';
export const MSG_EXISTS =
  'Delete the custom hostname associated with your project before attempting to create a new one.';
export const MSG_VERIFIED = 'Verification has been completed, please proceed to activation.';
export const MSG_NOT_VERIFIED = 'Verification has not been completed.';
export const MSG_TAKEN = 'The custom hostname is already in use by another project.';

export class HostnameStateError extends Error {}

export interface DnsFindings {
  /** TXT values found at the verification record's name. */
  txt: string[];
  /** CNAME targets of the hostname itself. */
  cname: string[];
}

export interface VerifyOutcome {
  status: HostnameStatus;
  errors: string[];
}

const ORDER: HostnameStatus[] = [
  '1_not_started',
  '2_initiated',
  '3_challenge_verified',
  '4_origin_setup_completed',
  '5_services_reconfigured',
];

export function isVerified(status: HostnameStatus): boolean {
  return ORDER.indexOf(status) >= ORDER.indexOf('4_origin_setup_completed');
}

/** Reverify from `status` given what DNS says now; throws for states past verification. */
export function reverify(
  status: HostnameStatus,
  want: { hostname: string; txtName: string; txtValue: string; origin: string },
  found: DnsFindings,
): VerifyOutcome {
  if (isVerified(status)) throw new HostnameStateError(MSG_VERIFIED);
  const errors: string[] = [];
  const txtOk = found.txt.includes(want.txtValue);
  if (!txtOk) {
    errors.push(`TXT record ${want.txtName} with value ${want.txtValue} not found`);
    // Ownership must be proven first; an earlier proof is kept (3 stays 3) while the record propagates.
    return { status: status === '3_challenge_verified' ? status : '2_initiated', errors };
  }
  if (!found.cname.includes(want.origin)) {
    errors.push(`${want.hostname} does not have a CNAME record pointing to ${want.origin}`);
    return { status: '3_challenge_verified', errors };
  }
  return { status: '4_origin_setup_completed', errors };
}

/** Activate from `status`: only 4 advances; 5 stays 5 (already active). */
export function activate(status: HostnameStatus): HostnameStatus {
  if (status === '5_services_reconfigured') return status;
  if (status !== '4_origin_setup_completed') throw new HostnameStateError(MSG_NOT_VERIFIED);
  return '5_services_reconfigured';
}

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** A valid DNS name of at least two labels, not an IP address nor a *.localhost name; lowercase result, or undefined. */
export function normalizeHostname(input: unknown): string | undefined {
  if (typeof input !== 'string') return undefined;
  const h = input.trim().toLowerCase().replace(/\.$/, '');
  if (h.length < 1 || h.length > 253) return undefined;
  const labels = h.split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) return undefined;
  const last = labels.at(-1);
  if (last === undefined || /^\d+$/.test(last)) return undefined; // an IPv4 address
  if (last === 'localhost') return undefined;
  return h;
}
