/**
 * MD5 off the event loop: uploads hand their bytes, in batches of about 1 MiB, to a small pool of
 * worker threads that hash them, so the event loop only counts and copies them once. Each job is
 * bound to one worker (order kept by its message queue). A job waits when more than a few batches
 * are still unhashed, so memory stays bounded when the workers fall behind. A worker keeps the
 * process alive only while it has jobs, and is replaced when it dies (its jobs fail). The batch buffers
 * travel to the worker and back (transferred, not copied) and are reused.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/** The worker's code (CommonJS, evaluated): one hash per job id. */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const jobs = new Map();
parentPort.on('message', (m) => {
  let h = jobs.get(m.id);
  if (m.t === 'x') { jobs.delete(m.id); return; }
  if (!h) { h = createHash('md5'); jobs.set(m.id, h); }
  if (m.b) h.update(new Uint8Array(m.b, 0, m.n));
  const back = m.b ? [m.b] : [];
  if (m.t === 'd') { jobs.delete(m.id); parentPort.postMessage({ id: m.id, hex: h.digest('hex'), b: m.b }, back); }
  else parentPort.postMessage({ id: m.id, b: m.b }, back);
});
`;

/** Bytes gathered before they go to the worker as one message. */
const BATCH = 1024 * 1024;
/**
 * Batches a job may have in flight before it waits. The worker hashes far faster than a body
 * arrives, so two suffice; each one more is a MiB more of resident memory per upload.
 */
const MAX_IN_FLIGHT = 2;

interface Waiter {
  /** An acknowledged batch (or, for the digest, the hex). */
  onReply(hex: string | undefined): void;
  onFail(err: Error): void;
}

class HashWorker {
  begin(): void {
    if (this.active++ === 0) this.worker.ref();
  }

  end(): void {
    if (--this.active === 0) this.worker.unref();
  }

  readonly worker: Worker;
  readonly waiters = new Map<number, Waiter>();
  /** Jobs started and not yet digested or discarded: the worker keeps the process alive meanwhile. */
  private active = 0;
  dead?: Error;

  constructor(onDeath: (w: HashWorker) => void) {
    // The worker only hashes: a small heap keeps its share of the server's RSS small.
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 },
    });
    this.worker.on('message', (m: { id: number; hex?: string; b?: ArrayBuffer }) => {
      if (m.b) recycle(m.b);
      this.waiters.get(m.id)?.onReply(m.hex);
    });
    const die = (err: Error) => {
      if (this.dead) return;
      this.dead = err;
      onDeath(this);
      for (const w of this.waiters.values()) w.onFail(err);
      this.waiters.clear();
    };
    this.worker.on('error', die);
    this.worker.on('exit', () => die(new Error('md5 worker exited')));
    // After the listeners (adding a 'message' listener refs the worker's port again).
    this.worker.unref();
  }
}

/**
 * Batch buffers come back from the worker with its answer and are reused: fresh ones would cost a
 * page fault per 4 KiB on first touch, and buffers the worker's heap has not collected yet.
 */
const spare: ArrayBuffer[] = [];
/** Kept for reuse: what one upload cycles through (its in-flight batches and the one being filled). */
const MAX_SPARE = MAX_IN_FLIGHT + 2;

function recycle(b: ArrayBuffer): void {
  if (b.byteLength === BATCH && spare.length < MAX_SPARE) spare.push(b);
}

function batchBuffer(): Buffer {
  const b = spare.pop();
  return b ? Buffer.from(b) : Buffer.allocUnsafeSlow(BATCH);
}

const POOL_SIZE = Math.max(1, Math.min(4, availableParallelism() - 1));
const pool: HashWorker[] = [];
let nextJob = 1;

function workerFor(id: number): HashWorker {
  const slot = id % POOL_SIZE;
  let w = pool[slot];
  if (!w || w.dead) {
    w = new HashWorker((dead) => {
      if (pool[slot] === dead) pool[slot] = undefined as unknown as HashWorker;
    });
    pool[slot] = w;
  }
  return w;
}

/** One running MD5: `update` as bytes arrive (resolves when the caller may go on), `digest` once. */
export class WorkerMd5 {
  private readonly id = nextJob++;
  private readonly w = workerFor(this.id);
  /** The batch being filled (its own ArrayBuffer, so it can move to the worker). */
  private buf = batchBuffer();
  private used = 0;
  private inFlight = 0;
  private resume?: () => void;
  private done?: (hex: string) => void;
  private failure?: Error;
  private fail?: (err: Error) => void;

  private ended = false;

  /** The job is over (digested, failed or discarded): its worker may idle. */
  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.w.waiters.delete(this.id);
    this.w.end();
  }

  constructor() {
    this.w.begin();
    this.w.waiters.set(this.id, {
      onReply: (hex) => {
        if (hex !== undefined) {
          this.finish();
          this.done?.(hex);
          return;
        }
        this.inFlight--;
        const r = this.resume;
        this.resume = undefined;
        r?.();
      },
      onFail: (err) => {
        this.finish();
        this.failure = err;
        this.fail?.(err);
        const r = this.resume;
        this.resume = undefined;
        r?.();
      },
    });
  }

  private post(kind: 'u' | 'd'): void {
    const b = this.used > 0 ? (this.buf.buffer as ArrayBuffer) : undefined;
    if (!b) recycle(this.buf.buffer as ArrayBuffer);
    this.w.worker.postMessage({ id: this.id, t: kind, b, n: this.used }, b ? [b] : []);
    this.buf = kind === 'u' ? batchBuffer() : Buffer.alloc(0);
    this.used = 0;
  }

  /**
   * Adds bytes (copied into the batch: the caller still writes the chunk elsewhere). Returns a
   * promise only when the caller should wait for the worker to catch up.
   */
  update(chunk: Buffer): Promise<void> | undefined {
    if (this.failure) throw this.failure;
    for (let off = 0; off < chunk.length; ) {
      const n = chunk.copy(this.buf, this.used, off);
      this.used += n;
      off += n;
      if (this.used === BATCH) {
        this.inFlight++;
        this.post('u');
      }
    }
    if (this.inFlight <= MAX_IN_FLIGHT) return undefined;
    return new Promise((resolve) => {
      this.resume = resolve;
    });
  }

  /** The hex digest of everything added; call once. */
  digest(): Promise<string> {
    return new Promise((resolve, reject) => {
      if (this.failure) {
        this.finish();
        reject(this.failure);
        return;
      }
      this.done = resolve;
      this.fail = reject;
      this.post('d');
    });
  }

  /** Drops the job (the upload failed). */
  discard(): void {
    if (this.buf.length === BATCH) recycle(this.buf.buffer as ArrayBuffer);
    this.buf = Buffer.alloc(0);
    this.finish();
    if (!this.w.dead) this.w.worker.postMessage({ id: this.id, t: 'x' });
  }
}
