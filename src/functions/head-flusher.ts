/**
 * Heads of function answers waiting for their first body chunk. A head normally leaves with that
 * chunk (one write); one whose body is slow to come is sent on its own 20–40 ms after it was
 * written (so the client sees the status now). One interval timer serves all of them, running only
 * while some head waits: a timer made and cleared per invocation cost more than this bookkeeping.
 */
import type { ServerResponse } from 'node:http';

export class HeadFlusher {
  /** Heads written since the last tick, and those written before it (sent at the next tick). */
  private current = new Set<ServerResponse>();
  private previous = new Set<ServerResponse>();
  private timer?: NodeJS.Timeout;

  constructor(private readonly periodMs = 20) {}

  /** The head of `res` is written (not sent): send it on its own if no body chunk comes soon. */
  wait(res: ServerResponse): void {
    this.current.add(res);
    if (!this.timer) {
      this.timer = setInterval(() => this.tick(), this.periodMs);
      this.timer.unref();
    }
  }

  /** The first body chunk (or the end) came, or the answer is over: nothing to send. */
  done(res: ServerResponse): void {
    this.current.delete(res);
    this.previous.delete(res);
  }

  private tick(): void {
    for (const res of this.previous) if (!res.writableEnded && !res.destroyed) res.flushHeaders();
    this.previous.clear();
    const emptied = this.previous;
    this.previous = this.current;
    this.current = emptied;
    if (this.previous.size === 0) this.close();
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
