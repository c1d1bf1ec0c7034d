/**
 * One subscription's stream of results, as graphql-ws iterates it. It holds at most one result
 * not yet taken: a client slower than its results gets the latest one (coalesced), never a queue.
 * `end()` and `fail()` finish it; `return()` (the client completed, or its socket closed) runs
 * `onEnd` once, whatever the stream was waiting on.
 */
import type { RawResult } from './raw-result.js';
export type LiveResult = Record<string, unknown> | RawResult;

export class Subscriber implements AsyncIterableIterator<LiveResult> {
  /** Hash of the last result handed to the stream (a result is pushed only when it differs). */
  private lastHash: string | undefined;
  private pending: LiveResult | undefined;
  private failure: Error | undefined;
  private finished = false;
  private wake: (() => void) | undefined;

  constructor(private readonly onEnd: () => void) {}

  /** The result, unless the stream already got this very result (same hash) last. */
  push(result: LiveResult, hash: string): void {
    if (this.finished || hash === this.lastHash) return;
    this.lastHash = hash;
    this.pending = result;
    this.notify();
  }

  /** Ends the stream with an error message to the client (graphql-ws `error`). */
  fail(err: Error): void {
    if (this.finished) return;
    this.failure = err;
    this.notify();
  }

  get ended(): boolean {
    return this.finished;
  }

  async next(): Promise<IteratorResult<LiveResult>> {
    for (;;) {
      if (this.finished) return { done: true, value: undefined };
      if (this.failure) {
        const err = this.failure;
        this.finish();
        throw err;
      }
      if (this.pending) {
        const value = this.pending;
        this.pending = undefined;
        return { done: false, value };
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  async return(): Promise<IteratorResult<LiveResult>> {
    this.finish();
    return { done: true, value: undefined };
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<LiveResult> {
    return this;
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.pending = undefined;
    this.notify();
    this.onEnd();
  }
}
