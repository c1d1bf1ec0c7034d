/**
 * One change-stream subscription's events, as the transports iterate them (the same interface as
 * a live query's Subscriber). Unlike a live query's, every event is delivered, in order: they wait
 * in a queue, and a client still `limit` events behind when more come gets its subscription ended
 * with an error naming the cursor to resume from.
 */
import { Subscriber, type LiveResult } from './subscriber.js';

export class ChangeStream extends Subscriber {
  private readonly queue: { result: LiveResult; cursor: string }[] = [];
  private head = 0;
  private error: Error | undefined;
  private done = false;
  private waiting: (() => void) | undefined;
  /** The cursor of the last event the transport took (initially the subscription's `after`). */
  lastCursor: string | undefined;

  constructor(
    private readonly limit: number,
    private readonly onClose: () => void,
    after?: string,
  ) {
    super(() => {});
    this.lastCursor = after;
  }

  /**
   * Queues one batch's events. A client still `limit` or more events behind when the next batch
   * comes is too slow: its stream ends. (A batch is taken whole, however large, so that one large
   * transaction does not end every stream that sees it: one batch's events are bounded by the
   * feed's rows per commit, a resume's by what is retained.)
   */
  add(events: readonly { result: LiveResult; cursor: string }[]): void {
    if (this.done || this.error || !events.length) return;
    if (this.queue.length - this.head >= this.limit) {
      const resume = this.lastCursor
        ? `subscribe again with after: "${this.lastCursor}"`
        : 'subscribe again (no event was taken yet)';
      this.fail(
        new Error(
          `The subscriber fell behind: ${this.limit} or more change events were waiting to be sent; ${resume}`,
        ),
      );
      return;
    }
    this.queue.push(...events);
    this.wakeUp();
  }

  /** Ends the stream with an error, now (what is queued is dropped). */
  override fail(err: Error): void {
    if (this.done || this.error) return;
    this.queue.length = 0;
    this.head = 0;
    this.error = err;
    this.wakeUp();
  }

  /** Ends the stream with an error once the queued events were taken. */
  end(err: Error): void {
    if (this.done || this.error) return;
    this.error = err;
    this.wakeUp();
  }

  override push(): void {
    // Live results are not a change stream's (see add).
  }

  override get ended(): boolean {
    return this.done;
  }

  /** Events waiting to be taken. */
  get backlog(): number {
    return this.queue.length - this.head;
  }

  override async next(): Promise<IteratorResult<LiveResult>> {
    for (;;) {
      if (this.done) return { done: true, value: undefined };
      if (this.head < this.queue.length) {
        const e = this.queue[this.head++] as { result: LiveResult; cursor: string };
        if (this.head > 256 && this.head * 2 > this.queue.length) {
          this.queue.splice(0, this.head);
          this.head = 0;
        }
        this.lastCursor = e.cursor;
        return { done: false, value: e.result };
      }
      if (this.error) {
        const err = this.error;
        this.close();
        throw err;
      }
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
      });
    }
  }

  override async return(): Promise<IteratorResult<LiveResult>> {
    this.close();
    return { done: true, value: undefined };
  }

  private wakeUp(): void {
    const wake = this.waiting;
    this.waiting = undefined;
    wake?.();
  }

  private close(): void {
    if (this.done) return;
    this.done = true;
    this.queue.length = 0;
    this.head = 0;
    this.wakeUp();
    this.onClose();
  }
}
