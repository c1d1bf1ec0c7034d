/**
 * The requirements of a table commit (Iceberg REST `TableRequirement`), checked against the
 * table's current metadata under its row lock. A failed one is 409 CommitFailedException (the
 * client refreshes and retries); a malformed or unknown one is 400.
 */
import { iceErrors } from './errors.js';
import { type Json, idKey, isObject } from './json.js';
import { asInt, type TableMetadata } from './metadata.js';

const failed = (what: string) => iceErrors.commitFailed(`Requirement failed: ${what}`);

function expectInt(req: Record<string, Json>, field: string, actual: number, what: string): void {
  const expected = asInt(req[field], field);
  if (expected !== actual) throw failed(`${what} changed: expected id ${expected} != ${actual}`);
}

/** `current` is undefined when the table does not exist (only assert-create can then hold). */
export function checkRequirements(current: TableMetadata | undefined, requirements: Json[]): void {
  for (const r of requirements) {
    if (!isObject(r) || typeof r.type !== 'string') throw iceErrors.badRequest('A requirement needs a type');
    if (r.type === 'assert-create') {
      if (current) throw failed('table already exists');
      continue;
    }
    if (!current) throw iceErrors.noSuchTable();
    switch (r.type) {
      case 'assert-table-uuid':
        if (typeof r.uuid !== 'string') throw iceErrors.badRequest('assert-table-uuid needs a uuid');
        if (r.uuid.toLowerCase() !== current['table-uuid'].toLowerCase())
          throw failed(`UUID does not match: expected ${r.uuid} != ${current['table-uuid']}`);
        break;
      case 'assert-ref-snapshot-id': {
        if (typeof r.ref !== 'string') throw iceErrors.badRequest('assert-ref-snapshot-id needs a ref');
        const expected = r['snapshot-id'];
        const ref = current.refs[r.ref];
        if (expected === null || expected === undefined) {
          if (ref) throw failed(`${r.ref} was created concurrently`);
          break;
        }
        const want = idKey(expected);
        if (want === undefined) throw iceErrors.badRequest('snapshot-id must be an integer');
        if (!ref) throw failed(`${r.ref} was removed: expected ${want}`);
        const have = idKey(ref['snapshot-id']);
        if (have !== want) throw failed(`${r.ref} has changed: expected id ${want} != ${have}`);
        break;
      }
      case 'assert-last-assigned-field-id':
        expectInt(r, 'last-assigned-field-id', current['last-column-id'], 'last assigned field id');
        break;
      case 'assert-current-schema-id':
        expectInt(r, 'current-schema-id', current['current-schema-id'], 'current schema');
        break;
      case 'assert-last-assigned-partition-id':
        expectInt(
          r,
          'last-assigned-partition-id',
          current['last-partition-id'],
          'last assigned partition id',
        );
        break;
      case 'assert-default-spec-id':
        expectInt(r, 'default-spec-id', current['default-spec-id'], 'default partition spec');
        break;
      case 'assert-default-sort-order-id':
        expectInt(r, 'default-sort-order-id', current['default-sort-order-id'], 'default sort order');
        break;
      default:
        throw iceErrors.badRequest(`Unknown requirement type: ${r.type}`);
    }
  }
}
