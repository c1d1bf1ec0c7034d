/**
 * Kept probe answers (realtime/probe-answers.ts): what each kind of commit drops, that an answer
 * asked before a drop is not kept, and the bound on how many are kept.
 */
import { describe, expect, it } from 'vitest';
import { tableKey, type Commit } from '../../src/realtime/change-feed.js';
import { MAX_KEPT, MAX_KEPT_CHARS, ProbeAnswers, valuesKey } from '../../src/realtime/probe-answers.js';
import type { RowChange } from '../../src/realtime/test-decoding.js';

const MESSAGE = tableKey('public', 'message');
const ROOM = tableKey('public', 'room');
const target = { columns: ['room_id'], dependsOn: new Set([ROOM]) };

function commit(changes: RowChange[] | undefined, tables?: string[]): Commit {
  const c: Commit = {
    lsn: 1n,
    tables: new Set(tables ?? (changes ?? []).map((ch) => tableKey(ch.schema, ch.table))),
  };
  if (changes) c.changes = changes;
  return c;
}
const row = (table: string, op: RowChange['op'], values: { new?: object; old?: object } = {}): RowChange => ({
  schema: 'public',
  table,
  op,
  ...(values as { new?: Record<string, string>; old?: Record<string, string> }),
});

function withAnswer(): ProbeAnswers {
  const a = new ProbeAnswers();
  a.keep(MESSAGE, target, 'k7', false, a.generation);
  return a;
}

describe('kept probe answers', () => {
  it('a key needs every policy column logged', () => {
    expect(valuesKey({ room_id: '7', body: 'x' }, ['room_id'])).toBe('["7"]');
    expect(valuesKey({ room_id: null }, ['room_id'])).toBe('[null]');
    expect(valuesKey({ body: 'x' }, ['room_id'])).toBeUndefined();
  });

  it('INSERTs into the table and UPDATEs that keep its policy columns keep the answers', () => {
    const a = withAnswer();
    a.forget(commit([row('message', 'INSERT', { new: { room_id: '8' } })]));
    a.forget(
      commit([
        row('message', 'UPDATE', { old: { room_id: '7', body: 'a' }, new: { room_id: '7', body: 'b' } }),
      ]),
    );
    a.forget(commit([row('topic', 'DELETE', { old: { id: '1' } })]));
    expect(a.get(MESSAGE, 'k7')).toBe(false);
  });

  it('a change to a table the policies read, a DELETE, an UPDATE of a policy column or without its old row drops them', () => {
    const drops: Commit[] = [
      commit([row('room', 'UPDATE', { new: { id: '7' } })]),
      commit([row('message', 'DELETE', { old: { id: '1' } })]),
      commit([row('message', 'UPDATE', { old: { room_id: '7' }, new: { room_id: '8' } })]),
      commit([row('message', 'UPDATE', { new: { room_id: '7' } })]),
      commit([row('message', 'TRUNCATE')]),
      commit(undefined, [MESSAGE]),
      commit(undefined, [ROOM]),
      { ...commit([]), anyTable: true },
    ];
    for (const c of drops) {
      const a = withAnswer();
      const before = a.generation;
      a.forget(c);
      expect(a.get(MESSAGE, 'k7')).toBeUndefined();
      expect(a.generation).toBeGreaterThan(before);
    }
  });

  it('an answer asked before a drop is not kept', () => {
    const a = new ProbeAnswers();
    const askedAt = a.generation;
    a.keep(MESSAGE, target, 'k1', true, askedAt);
    a.forget(commit([row('room', 'INSERT', { new: { id: '9' } })]));
    a.keep(MESSAGE, target, 'k2', true, askedAt);
    expect(a.get(MESSAGE, 'k2')).toBeUndefined();
    a.keep(MESSAGE, target, 'k2', true, a.generation);
    expect(a.get(MESSAGE, 'k2')).toBe(true);
  });

  it('a table being probed is watched: a change to what its policies read before the answer comes stops it being kept', () => {
    const a = new ProbeAnswers();
    const askedAt = a.watch(MESSAGE, target);
    a.forget(commit([row('room', 'UPDATE', { new: { id: '7' } })]));
    a.keep(MESSAGE, target, 'k7', false, askedAt);
    expect(a.get(MESSAGE, 'k7')).toBeUndefined();
  });

  it(`at most ${MAX_KEPT} answers: past it they are all dropped`, () => {
    const a = new ProbeAnswers();
    for (let i = 0; i < MAX_KEPT; i++) a.keep(MESSAGE, target, `k${i}`, false, a.generation);
    expect(a.get(MESSAGE, 'k0')).toBe(false);
    a.keep(MESSAGE, target, 'one more', true, a.generation);
    expect(a.get(MESSAGE, 'k0')).toBeUndefined();
    expect(a.get(MESSAGE, 'one more')).toBe(true);
  });

  it('at most MAX_KEPT_CHARS of keys: long keys (claims a user made long) drop the others sooner', () => {
    const a = new ProbeAnswers();
    const long = 'x'.repeat(1024 * 1024);
    for (let i = 0; i < 7; i++) a.keep(MESSAGE, target, `${i}${long}`, false, a.generation);
    expect(a.get(MESSAGE, `0${long}`)).toBe(false);
    expect(MAX_KEPT_CHARS).toBeLessThan(8 * (long.length + 1));
    a.keep(MESSAGE, target, `7${long}`, false, a.generation);
    expect(a.get(MESSAGE, `0${long}`)).toBeUndefined();
    expect(a.get(MESSAGE, `7${long}`)).toBe(false);
  });
});
