/** Which variable sets a commit may change (src/realtime/relevance.ts), on hand-made scopes. */
import { describe, expect, it } from 'vitest';
import { tableKey, type Commit } from '../../src/realtime/change-feed.js';
import type { SetScope } from '../../src/realtime/read-set.js';
import { GroupIndex, normalizeValue, parseArrayLiteral } from '../../src/realtime/relevance.js';
import type { RowChange } from '../../src/realtime/test-decoding.js';

const MSG = tableKey('public', 'message');
const ROOM = tableKey('public', 'room');

function set(name: string, scope: Partial<SetScope>) {
  return {
    name,
    scope: { version: 1, any: false, tables: new Set([MSG]), claims: new Set(), ...scope } as SetScope,
  };
}

function inRoom(...rooms: string[]) {
  return set(`room ${rooms.join()}`, {
    insertFilter: { table: MSG, constraints: [{ column: 'room_id', kind: 'int', values: new Set(rooms) }] },
  });
}

function commit(...changes: RowChange[]): Commit {
  return { lsn: 1n, tables: new Set(changes.map((c) => tableKey(c.schema, c.table))), changes };
}

const insert = (row: Record<string, string | null>, table = 'message'): RowChange => ({
  schema: 'public',
  table,
  op: 'INSERT',
  new: row,
});

function hits<S extends { name: string; scope: SetScope }>(sets: S[], c: Commit): string[] {
  const out = new Set<S>();
  new GroupIndex(sets).affected(c, out);
  return [...out].map((s) => s.name).sort();
}

describe('relevance of a commit', () => {
  const r7 = inRoom('7');
  const r8 = inRoom('8');
  const r78 = inRoom('7', '8');
  const all = set('all rooms', {});
  const rooms = set('rooms only', { tables: new Set([ROOM]) });
  const any = set('any', { any: true, tables: new Set() });
  const sets = [r7, r8, r78, all, rooms, any];

  it('an INSERT re-runs the sets whose filter it meets, those without one on that table, and `any`', () => {
    expect(hits(sets, commit(insert({ id: '1', room_id: '7' })))).toEqual([
      'all rooms',
      'any',
      'room 7',
      'room 7,8',
    ]);
    expect(hits(sets, commit(insert({ id: '2', room_id: '9' })))).toEqual(['all rooms', 'any']);
    // NULL meets no equality; a column absent from the row may meet any.
    expect(hits(sets, commit(insert({ id: '3', room_id: null })))).toEqual(['all rooms', 'any']);
    expect(hits(sets, commit(insert({ id: '4' })))).toEqual([
      'all rooms',
      'any',
      'room 7',
      'room 7,8',
      'room 8',
    ]);
    expect(hits(sets, commit(insert({ id: '5' }, 'room')))).toEqual(['any', 'rooms only']);
  });

  it('an UPDATE without its old row, a DELETE of the key only, a TRUNCATE re-run every set reading the table; a commit without rows too', () => {
    const every = ['all rooms', 'any', 'room 7', 'room 7,8', 'room 8'];
    const upd: RowChange = {
      schema: 'public',
      table: 'message',
      op: 'UPDATE',
      new: { id: '1', room_id: '8' },
    };
    expect(hits(sets, commit(upd))).toEqual(every);
    expect(
      hits(sets, commit({ schema: 'public', table: 'message', op: 'DELETE', old: { id: '1' } })),
    ).toEqual(every);
    expect(hits(sets, commit({ schema: 'public', table: 'message', op: 'TRUNCATE' }))).toEqual(every);
    expect(hits(sets, { lsn: 1n, tables: new Set([MSG]) })).toEqual(every);
    expect(hits(sets, { lsn: 1n, tables: new Set(), anyTable: true })).toEqual(
      [...every, 'rooms only'].sort(),
    );
    expect(hits(sets, commit(insert({ id: '1' }, 'other')))).toEqual(['any']);
  });

  it('an UPDATE or DELETE whose old row is logged (REPLICA IDENTITY FULL) re-runs only the sets its old or new row meets', () => {
    const moved: RowChange = {
      schema: 'public',
      table: 'message',
      op: 'UPDATE',
      old: { id: '1', room_id: '7', body: 'a' },
      new: { id: '1', room_id: '9', body: 'a' },
    };
    expect(hits(sets, commit(moved))).toEqual(['all rooms', 'any', 'room 7', 'room 7,8']);
    const edited: RowChange = { ...moved, old: { id: '1', room_id: '8' }, new: { id: '1', room_id: '8' } };
    expect(hits(sets, commit(edited))).toEqual(['all rooms', 'any', 'room 7,8', 'room 8']);
    // The key changed under the default replica identity: the old row has key columns only.
    const rekeyed: RowChange = { ...moved, old: { id: '1' }, new: { id: '2', room_id: '9' } };
    expect(hits(sets, commit(rekeyed))).toEqual(['all rooms', 'any', 'room 7', 'room 7,8', 'room 8']);
    const deleted: RowChange = {
      schema: 'public',
      table: 'message',
      op: 'DELETE',
      old: { id: '1', room_id: '8' },
    };
    expect(hits(sets, commit(deleted))).toEqual(['all rooms', 'any', 'room 7,8', 'room 8']);
  });

  it('several constraints must all be met', () => {
    const both = set('7 and alice', {
      insertFilter: {
        table: MSG,
        constraints: [
          { column: 'room_id', kind: 'int', values: new Set(['7']) },
          { column: 'author', kind: 'text', values: new Set(['alice']) },
        ],
      },
    });
    expect(hits([both], commit(insert({ room_id: '7', author: 'alice' })))).toEqual(['7 and alice']);
    expect(hits([both], commit(insert({ room_id: '7', author: 'Alice' })))).toEqual([]);
    expect(hits([both], commit(insert({ room_id: '8', author: 'alice' })))).toEqual([]);
  });

  it('values compare as their types do', () => {
    expect(normalizeValue('int', ' +007 ')).toBe('7');
    expect(normalizeValue('int', '-0')).toBe('0');
    expect(normalizeValue('int', '7.0')).toBeUndefined();
    expect(normalizeValue('int', '0x7')).toBeUndefined();
    expect(normalizeValue('uuid', '{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11}')).toBe(
      'a0eebc999c0b4ef8bb6d6bb9bd380a11',
    );
    expect(normalizeValue('uuid', 'not-a-uuid')).toBeUndefined();
    expect(normalizeValue('bool', 'TRUE')).toBe('true');
    expect(normalizeValue('bool', 'of')).toBe('false');
    expect(normalizeValue('bool', 'o')).toBeUndefined();
    expect(normalizeValue('text', ' a ')).toBe(' a ');
    expect(parseArrayLiteral('{"7","8",NULL}')).toEqual(['7', '8', null]);
    expect(parseArrayLiteral('{"a\\"b","c\\\\d"}')).toEqual(['a"b', 'c\\d']);
    expect(parseArrayLiteral('{}')).toEqual([]);
    expect(parseArrayLiteral('{7,8}')).toBeUndefined();
    expect(parseArrayLiteral('{"7"')).toBeUndefined();
  });
});
