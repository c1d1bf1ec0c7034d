/**
 * The change streams' pieces without a database: the retained buffer (bounded by row changes and
 * age; cursors of another epoch, malformed, evicted or from the future refused), node ids written
 * as the engine writes them, and a subscription's bounded queue (a client that falls behind gets
 * its stream ended with the cursor to resume from).
 */
import { describe, expect, it } from 'vitest';
import { nodeIdOfText } from '../../src/graphql/introspect/change-streams.js';
import { ChangeBuffer, decodeCursor, encodeCursor } from '../../src/realtime/change-buffer.js';
import type { Commit } from '../../src/realtime/change-feed.js';
import { ChangeStream } from '../../src/realtime/change-stream.js';

function commit(lsn: bigint, rows: number): Commit {
  return {
    lsn,
    tables: new Set(['["public","note"]']),
    changes: Array.from({ length: rows }, (_, i) => ({
      schema: 'public',
      table: 'note',
      op: 'INSERT' as const,
      new: { id: String(i) },
    })),
  };
}

describe('the retained buffer', () => {
  it('replays after a cursor; refuses evicted, foreign, future and malformed cursors', () => {
    const b = new ChangeBuffer(10, 60_000);
    b.push(commit(100n, 4));
    b.push(commit(200n, 4));
    const at = (lsn: bigint, index: number) => encodeCursor(b.epoch, { lsn, index });
    expect(b.after(at(100n, 1), 200n)?.commits.map((c) => c.lsn)).toEqual([100n, 200n]);
    expect(b.after(at(200n, 3), 200n)?.commits.map((c) => c.lsn)).toEqual([200n]);
    // Not yet processed (upTo), or never written: refused.
    expect(b.after(at(200n, 0), 100n)).toBeUndefined();
    expect(b.after(at(150n, 0), 200n)).toBeUndefined();
    // 4 + 4 + 4 > 10: the first commit goes, and with it its cursors.
    b.push(commit(300n, 4));
    expect(b.after(at(100n, 3), 300n)).toBeUndefined();
    expect(b.after(at(200n, 0), 300n)?.commits.length).toBe(2);
    expect(b.after(encodeCursor('AAAAAAAA', { lsn: 200n, index: 0 }), 300n)).toBeUndefined();
    for (const bad of [
      '',
      'nope',
      '!!!',
      'x'.repeat(5000),
      Buffer.from(`${b.epoch}.zz.1`).toString('base64url'),
    ])
      expect(b.after(bad, 300n)).toBeUndefined();
  });

  it('drops commits older than the retention time', () => {
    const b = new ChangeBuffer(1000, 1000);
    b.push(commit(1n, 1), Date.now() - 1500);
    b.push(commit(2n, 1));
    const c1 = encodeCursor(b.epoch, { lsn: 1n, index: 0 });
    expect(b.after(c1, 2n)).toBeUndefined();
    expect(decodeCursor(c1)).toEqual({ epoch: b.epoch, position: { lsn: 1n, index: 0 } });
  });
});

describe('node ids', () => {
  it('are the engine’s: base64 of the jsonb text of [schema, table, key...]', () => {
    const t = {
      schema: 'public',
      sqlName: 'pair',
      key: [
        { sqlName: 'a', json: 'number' as const },
        { sqlName: 'b', json: 'string' as const },
        { sqlName: 'c', json: 'boolean' as const },
      ],
    };
    const id = nodeIdOfText(t, { a: '12', b: 'say "hi"\n', c: 'true' });
    expect(Buffer.from(id as string, 'base64').toString()).toBe(
      '["public", "pair", 12, "say \\"hi\\"\\n", true]',
    );
    expect(nodeIdOfText(t, { a: '1', b: null, c: 'true' })).toBeUndefined();
    // A numeric that is not a JSON number (NaN) is written as jsonb writes it: a string.
    expect(Buffer.from(nodeIdOfText(t, { a: 'NaN', b: '', c: 'false' }) as string, 'base64').toString()).toBe(
      '["public", "pair", "NaN", "", false]',
    );
  });
});

describe('a subscription’s queue', () => {
  it('delivers every event in order; a batch is taken whole; a subscriber still behind when more come is ended with the cursor to resume from', async () => {
    let closed = 0;
    const s = new ChangeStream(3, () => closed++, 'start');
    const ev = (n: number) => ({ result: { n }, cursor: `c${n}` });
    s.add([ev(1), ev(2)]);
    expect((await s.next()).value).toEqual({ n: 1 });
    expect(s.lastCursor).toBe('c1');
    // One large batch: queued whole (4 waiting now, over the limit of 3).
    s.add([ev(3), ev(4), ev(5)]);
    expect(s.backlog).toBe(4);
    // The next batch finds the client still 3 or more behind: the stream ends, naming c1.
    s.add([ev(6)]);
    await expect(s.next()).rejects.toThrow(/fell behind: 3 or more change events.*after: "c1"/);
    expect(closed).toBe(1);
    expect(s.ended).toBe(true);
  });

  it('end(): the queued events first, then the error', async () => {
    const s = new ChangeStream(10, () => {});
    s.add([{ result: { n: 1 }, cursor: 'c1' }]);
    s.end(new Error('too large'));
    expect((await s.next()).value).toEqual({ n: 1 });
    await expect(s.next()).rejects.toThrow('too large');
    expect((await s.next()).done).toBe(true);
  });
});
