/**
 * QueryVectors' metadata filter, upstream's grammar: `{field: value}` (equality), `{field: {$op:
 * value}}` with $eq, $ne, $gt, $gte, $lt, $lte (numbers), $in, $nin (non-empty arrays), $exists
 * (boolean), several fields or operators meaning all of them, and `{$and: [...]}` / `{$or: [...]}`
 * (alone in their object). A field of the index's nonFilterableMetadataKeys is refused. The result
 * is the checked tree src/storage/database/vectors.ts turns into SQL.
 */
import type { FilterScalar, VectorFilter } from '../database/vectors.js';
import { vectorErrors } from './errors.js';

/** Nesting of $and/$or, and conditions in all, a filter may have. */
export const FILTER_LIMITS = { depth: 10, conditions: 256 } as const;

const invalid = (message: string) => vectorErrors.invalidParameter(message);

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function scalar(value: unknown, field: string, op: string): FilterScalar {
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  throw invalid(`${op} on "${field}" needs a string, number or boolean`);
}

function scalars(value: unknown, field: string, op: string): FilterScalar[] {
  if (!Array.isArray(value) || value.length === 0)
    throw invalid(`${op} requires a non-empty array for "${field}"`);
  return value.map((v) => scalar(v, field, op));
}

class FilterParser {
  private conditions = 0;

  constructor(private readonly nonFilterable: ReadonlySet<string>) {}

  parse(node: unknown, depth: number): VectorFilter {
    if (!isObject(node)) throw invalid('Filter must be an object');
    const keys = Object.keys(node);
    if (keys.length === 0) throw invalid('Filter must contain at least one clause');
    if ('$and' in node || '$or' in node) {
      if (keys.length !== 1) throw invalid(`Logical operator must be the only key, got: ${keys.join(', ')}`);
      if (depth >= FILTER_LIMITS.depth)
        throw invalid(`Filter must not nest $and/$or more than ${FILTER_LIMITS.depth} deep`);
      const op = keys[0] as '$and' | '$or';
      const items = node[op];
      if (!Array.isArray(items) || items.length === 0) throw invalid(`${op} requires a non-empty array`);
      const parsed = items.map((item) => this.parse(item, depth + 1));
      return op === '$and' ? { all: parsed } : { any: parsed };
    }
    const clauses = keys.flatMap((field) => this.field(field, node[field]));
    return clauses.length === 1 ? (clauses[0] as VectorFilter) : { all: clauses };
  }

  private field(field: string, value: unknown): VectorFilter[] {
    if (field.startsWith('$')) throw invalid(`Unexpected operator "${field}" at field position`);
    if (this.nonFilterable.has(field))
      throw invalid(`Metadata key "${field}" is configured as non-filterable`);
    if (!isObject(value)) return [this.count({ field, op: 'in', values: [scalar(value, field, '$eq')] })];
    const ops = Object.entries(value);
    if (ops.length === 0) throw invalid(`Empty operator object for field "${field}"`);
    return ops.map(([op, operand]) => this.count(this.operator(field, op, operand)));
  }

  private operator(field: string, op: string, operand: unknown): VectorFilter {
    switch (op) {
      case '$eq':
        return { field, op: 'in', values: [scalar(operand, field, op)] };
      case '$ne':
        return { field, op: 'ne', value: scalar(operand, field, op) };
      case '$gt':
      case '$gte':
      case '$lt':
      case '$lte':
        if (typeof operand !== 'number' || !Number.isFinite(operand)) {
          throw invalid(`${op} requires a number for "${field}"`);
        }
        return { field, op: op.slice(1) as 'gt' | 'gte' | 'lt' | 'lte', value: operand };
      case '$in':
        return { field, op: 'in', values: scalars(operand, field, op) };
      case '$nin':
        return { field, op: 'nin', values: scalars(operand, field, op) };
      case '$exists':
        if (typeof operand !== 'boolean') throw invalid(`$exists requires a boolean for "${field}"`);
        return { field, op: 'exists', value: operand };
      default:
        throw invalid(`Unsupported field operator: ${op}`);
    }
  }

  private count(filter: VectorFilter): VectorFilter {
    this.conditions += 1;
    if (this.conditions > FILTER_LIMITS.conditions) {
      throw invalid(`Filter must have at most ${FILTER_LIMITS.conditions} conditions`);
    }
    return filter;
  }
}

/** The request's filter, checked, as a tree; a non-filterable key or a malformed part is a 400. */
export function parseFilter(filter: unknown, nonFilterable: ReadonlySet<string>): VectorFilter {
  return new FilterParser(nonFilterable).parse(filter, 0);
}
