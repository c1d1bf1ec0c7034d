/** A subscription's stream (src/realtime/subscriber.ts): a slow client gets the latest result, never a queue. */
import { describe, expect, it } from 'vitest';
import { Subscriber } from '../../src/realtime/subscriber.js';

describe('Subscriber', () => {
  it('coalesces results a slow client has not taken yet to the latest one', async () => {
    const s = new Subscriber(() => {});
    for (let i = 0; i < 10_000; i++) s.push({ data: { n: i } }, `h${i}`);
    expect(await s.next()).toEqual({ done: false, value: { data: { n: 9_999 } } });
    // Nothing else is held: the next result is the next one pushed.
    const next = s.next();
    s.push({ data: { n: 10_000 } }, 'h10000');
    expect(await next).toEqual({ done: false, value: { data: { n: 10_000 } } });
  });

  it('does not push a result whose hash is the last one pushed', async () => {
    const s = new Subscriber(() => {});
    s.push({ data: 1 }, 'a');
    expect((await s.next()).value).toEqual({ data: 1 });
    s.push({ data: 1 }, 'a');
    const pending = s.next();
    s.push({ data: 2 }, 'b');
    expect((await pending).value).toEqual({ data: 2 });
  });

  it('return() ends a stream that is waiting, once, and fail() throws before any held result', async () => {
    let ended = 0;
    const s = new Subscriber(() => ended++);
    const waiting = s.next();
    await s.return();
    await s.return();
    expect(await waiting).toEqual({ done: true, value: undefined });
    expect(ended).toBe(1);
    const f = new Subscriber(() => ended++);
    f.push({ data: 1 }, 'a');
    f.fail(new Error('JWT expired'));
    await expect(f.next()).rejects.toThrow('JWT expired');
    expect(await f.next()).toEqual({ done: true, value: undefined });
    expect(ended).toBe(2);
  });
});
