/** Comment directives: `@graphql({...})` inside a comment; the JSON runs to the last `)`. */
import type { StrataFeatures } from './model.js';

export class DirectiveError extends Error {}

export function parseDirective(comment: string | null | undefined): Record<string, unknown> {
  if (!comment) return {};
  const start = comment.indexOf('@graphql(');
  if (start < 0) return {};
  const end = comment.lastIndexOf(')');
  if (end < start) return {};
  const text = comment.slice(start + '@graphql('.length, end);
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function serdeType(v: unknown): string {
  if (typeof v === 'string') return `string ${JSON.stringify(v)}`;
  if (typeof v === 'number')
    return Number.isInteger(v)
      ? v < 0
        ? `integer \`${v}\``
        : `integer \`${v}\``
      : `floating point \`${v}\``;
  if (typeof v === 'boolean') return `boolean \`${v}\``;
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'sequence';
  return 'map';
}

export function expectU64(v: unknown): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0) return v;
  if (typeof v === 'number' && Number.isInteger(v))
    throw new DirectiveError(`invalid value: integer \`${v}\`, expected u64`);
  throw new DirectiveError(`invalid type: ${serdeType(v)}, expected u64`);
}

export function expectStringSeq(v: unknown): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw new DirectiveError(`invalid type: ${serdeType(v)}, expected a sequence`);
  for (const x of v)
    if (typeof x !== 'string') throw new DirectiveError(`invalid type: ${serdeType(x)}, expected a string`);
  return v as string[];
}

export function expectBool(v: unknown): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw new DirectiveError(`invalid type: ${serdeType(v)}, expected a boolean`);
  return v;
}

/** The `strata` key of a schema directive: every feature off unless set to `true`. */
export function strataFeatures(v: unknown): StrataFeatures {
  const off = {
    upsert: false,
    nestedMutations: false,
    relatedFilters: false,
    partitionedTables: false,
    setofScalars: false,
    detailedErrors: false,
    domainBaseTypes: false,
    subscriptions: false,
  };
  if (v === undefined || v === null) return off;
  if (typeof v !== 'object' || Array.isArray(v))
    throw new DirectiveError(`invalid type: ${serdeType(v)}, expected the strata feature map`);
  const o = v as Record<string, unknown>;
  const known: Record<string, keyof StrataFeatures> = {
    upsert: 'upsert',
    nested_mutations: 'nestedMutations',
    related_filters: 'relatedFilters',
    partitioned_tables: 'partitionedTables',
    setof_scalars: 'setofScalars',
    detailed_errors: 'detailedErrors',
    domain_base_types: 'domainBaseTypes',
    subscriptions: 'subscriptions',
  };
  for (const [k, x] of Object.entries(o)) {
    const key = Object.hasOwn(known, k) ? known[k] : undefined;
    if (!key)
      throw new DirectiveError(
        `unknown strata feature \`${k}\`, expected one of ${Object.keys(known).join(', ')}`,
      );
    off[key] = expectBool(x) ?? false;
  }
  return off;
}

export function enabled(v: unknown): boolean {
  return !!v && typeof v === 'object' && (v as { enabled?: unknown }).enabled === true;
}
