/** Validation of M2's body (V1CreateProjectBody, additionalProperties: false). */
import { badRequest } from '../http/errors.js';
import {
  booleanField,
  isObject,
  objectBody,
  rejectUnknownKeys,
  stringField,
  type JsonObject,
} from '../http/validate.js';
import { ORGANIZATION_SLUG_PATTERN } from '../http/project-access.js';

export const REGIONS = [
  'us-east-1',
  'us-east-2',
  'us-west-1',
  'us-west-2',
  'ap-east-1',
  'ap-southeast-1',
  'ap-northeast-1',
  'ap-northeast-2',
  'ap-southeast-2',
  'eu-west-1',
  'eu-west-2',
  'eu-west-3',
  'eu-north-1',
  'eu-central-1',
  'eu-central-2',
  'ca-central-1',
  'ap-south-1',
  'sa-east-1',
] as const;

export const SMART_GROUPS: Record<string, string> = {
  americas: 'us-east-1',
  emea: 'eu-central-1',
  apac: 'ap-southeast-1',
};

export const INSTANCE_SIZES = [
  'nano',
  'micro',
  'small',
  'medium',
  'large',
  'xlarge',
  '2xlarge',
  '4xlarge',
  '8xlarge',
  '12xlarge',
  '16xlarge',
  '24xlarge',
  '24xlarge_optimized_memory',
  '24xlarge_optimized_cpu',
  '24xlarge_high_memory',
  '48xlarge',
  '48xlarge_optimized_memory',
  '48xlarge_optimized_cpu',
  '48xlarge_high_memory',
] as const;

/** Region of a project created without region or region_selection. */
export const DEFAULT_REGION = 'local';

const KEYS = [
  'db_pass',
  'name',
  'organization_id',
  'organization_slug',
  'plan',
  'region',
  'region_selection',
  'kps_enabled',
  'desired_instance_size',
  'template_url',
  'release_channel',
  'postgres_engine',
];

export interface CreateProjectInput {
  name: string;
  organizationSlug: string;
  region: string;
  /** Password of the project's database login `postgres.<ref>`. */
  dbPass: string;
}

/** A database password: 1–1024 characters, no control characters (PostgreSQL cannot take NUL). */
export function checkDbPassword(value: string, field: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (/[\u0000-\u001f\u007f]/.test(value)) throw badRequest(`${field} must not contain control characters`);
  if (value.length > 1024) throw badRequest(`${field} must be shorter than or equal to 1024 characters`);
  return value;
}

function regionSelection(v: unknown): string {
  if (!isObject(v)) throw badRequest('region_selection must be an object');
  rejectUnknownKeys(v, ['type', 'code'], 'region_selection.');
  const type = stringField(v, 'type', { required: true, enum: ['specific', 'smartGroup'] });
  if (type === 'specific') return stringField(v, 'code', { required: true, enum: REGIONS });
  const code = stringField(v, 'code', { required: true, enum: Object.keys(SMART_GROUPS) });
  const region = SMART_GROUPS[code];
  if (region === undefined) throw new Error(`smart group '${code}' passed validation but has no region`);
  return region;
}

function validateTemplateUrl(body: JsonObject): void {
  const url = stringField(body, 'template_url');
  if (url === undefined) return;
  try {
    new URL(url);
  } catch {
    throw badRequest('template_url must be a URL address');
  }
}

/**
 * Checks every field the spec defines and refuses the others. `organization_slug` and the older
 * `organization_id` are both accepted (the slug wins); `db_pass` becomes the password of the
 * project's login `postgres.<ref>`; `plan`, `kps_enabled`, `desired_instance_size` and
 * `template_url` are validated and otherwise ignored.
 */
export function parseCreateProjectBody(raw: unknown): CreateProjectInput {
  const body = objectBody(raw);
  rejectUnknownKeys(body, KEYS);
  const dbPass = checkDbPassword(stringField(body, 'db_pass', { required: true, minLength: 1 }), 'db_pass');
  const name = stringField(body, 'name', { required: true, maxLength: 256 });
  if (name.trim() === '') throw badRequest('name should not be empty');
  const slug = stringField(body, 'organization_slug', { pattern: ORGANIZATION_SLUG_PATTERN });
  const legacyId = stringField(body, 'organization_id', { minLength: 1 });
  const organizationSlug = slug ?? legacyId;
  if (organizationSlug === undefined) throw badRequest('organization_slug is required');
  stringField(body, 'plan', { enum: ['free', 'pro'] });
  booleanField(body, 'kps_enabled');
  stringField(body, 'desired_instance_size', { enum: INSTANCE_SIZES });
  stringField(body, 'release_channel');
  stringField(body, 'postgres_engine');
  validateTemplateUrl(body);
  const region = stringField(body, 'region', { enum: REGIONS });
  const hasSelection = body.region_selection !== undefined && body.region_selection !== null;
  if (region !== undefined && hasSelection)
    throw badRequest('Only one of region or region_selection can be specified');
  return {
    name,
    organizationSlug,
    region: hasSelection ? regionSelection(body.region_selection) : (region ?? DEFAULT_REGION),
    dbPass,
  };
}
