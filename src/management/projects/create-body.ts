/**
 * The body of POST /v1/projects (V1CreateProjectBody, additionalProperties: false): its schema, and the checks that
 * span fields (an organization named one way or the other, one region choice, a parseable URL).
 */
import { type Static, Type } from '@sinclair/typebox';
import { badRequest } from '../http/errors.js';
import { ORGANIZATION_SLUG_PATTERN } from '../http/project-access.js';
import { conditional, Name, Optional, Strict, StringEnum } from '../http/schemas.js';

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

export interface CreateProjectInput {
  name: string;
  organizationSlug: string;
  region: string;
  /** Password of the project's database login `postgres.<ref>`. */
  dbPass: string;
}

/** A database password: `minLength` to 1024 characters, no control characters (PostgreSQL cannot take NUL). */
export function DbPassword(minLength: number) {
  return Type.String({
    minLength,
    maxLength: 1024,
    pattern: '^[^\\u0000-\\u001f\\u007f]*$',
    messages: { pattern: '{field} must not contain control characters' },
  });
}

const RegionSelectionFields = Strict({
  type: StringEnum(['specific', 'smartGroup']),
  code: Type.String(),
});

/** `{type, code}`: a region code, or a smart group that stands for one. */
const RegionSelection = Type.Unsafe<Static<typeof RegionSelectionFields>>({
  ...RegionSelectionFields,
  ...conditional(
    { properties: { type: { const: 'specific' } } },
    { properties: { code: { enum: [...REGIONS] } } },
    { properties: { code: { enum: Object.keys(SMART_GROUPS) } } },
  ),
});

/**
 * Every field the spec defines, in the order they are checked. `plan`, `kps_enabled`,
 * `desired_instance_size`, `release_channel`, `postgres_engine` and `template_url` are checked
 * and otherwise ignored.
 */
export const CreateProjectBody = Strict({
  db_pass: DbPassword(1),
  name: Name,
  organization_slug: Optional(Type.String({ pattern: ORGANIZATION_SLUG_PATTERN.source })),
  organization_id: Optional(Type.String({ minLength: 1 })),
  plan: Optional(StringEnum(['free', 'pro'])),
  kps_enabled: Optional(Type.Boolean()),
  desired_instance_size: Optional(StringEnum(INSTANCE_SIZES)),
  release_channel: Optional(Type.String()),
  postgres_engine: Optional(Type.String()),
  template_url: Optional(Type.String()),
  region: Optional(StringEnum(REGIONS)),
  region_selection: Optional(RegionSelection),
});

/**
 * The project to create. `organization_slug` and the older `organization_id` are both accepted
 * (the slug wins); `db_pass` becomes the password of the project's login `postgres.<ref>`.
 */
export function createProjectInput(body: Static<typeof CreateProjectBody>): CreateProjectInput {
  const organizationSlug = body.organization_slug ?? body.organization_id;
  if (organizationSlug == null) throw badRequest('organization_slug is required');
  if (body.template_url != null && !URL.canParse(body.template_url))
    throw badRequest('template_url must be a URL address');
  const selection = body.region_selection;
  if (body.region != null && selection != null)
    throw badRequest('Only one of region or region_selection can be specified');
  const region = selection
    ? selection.type === 'specific'
      ? selection.code
      : SMART_GROUPS[selection.code]
    : body.region;
  return { name: body.name, organizationSlug, region: region ?? DEFAULT_REGION, dbPass: body.db_pass };
}
