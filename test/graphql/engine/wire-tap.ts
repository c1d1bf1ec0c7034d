/** Counts the SQL statements a client sends on the wire (Query and Parse messages), or a pool's round trips. */
import pg from 'pg';
import type { Env } from './harness.js';

/** A pool of two clients on `url` whose every `query` call (one round trip) calls `count`. */
export function countingPool(url: string, count: () => void): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on('connect', (c) => {
    const q = c.query.bind(c) as (...a: unknown[]) => unknown;
    (c as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => {
      count();
      return q(...a);
    };
  });
  return pool;
}

/** A pool of two clients on `url` that records the SQL text of every `query` call (one round trip) in `sent`. */
export function recordingPool(url: string, sent: string[]): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on('connect', (c) => {
    const q = c.query.bind(c) as (...a: unknown[]) => unknown;
    (c as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => {
      const first = a[0] as string | { text: string };
      sent.push(typeof first === 'string' ? first : first.text);
      return q(...a);
    };
  });
  return pool;
}

/** Records the SQL text of every simple-query ('Q') and parse ('P') message written to the socket. */
export function tap(client: Env['client'], sent: string[]) {
  const stream = (client as unknown as { connection: { stream: { write: (...a: unknown[]) => boolean } } })
    .connection.stream;
  const write = stream.write.bind(stream);
  stream.write = (chunk: unknown, ...rest: unknown[]) => {
    if (Buffer.isBuffer(chunk)) {
      let i = 0;
      while (i + 5 <= chunk.length) {
        const type = String.fromCharCode(chunk[i]!);
        const len = chunk.readInt32BE(i + 1);
        const body = chunk.subarray(i + 5, i + 1 + len);
        if (type === 'Q') sent.push(body.toString('utf8').replace(/\0$/, ''));
        if (type === 'P') {
          const nameEnd = body.indexOf(0);
          sent.push(body.subarray(nameEnd + 1, body.indexOf(0, nameEnd + 1)).toString('utf8'));
        }
        i += 1 + len;
      }
    }
    return write(chunk, ...rest);
  };
}

/** Splits a simple-query message into its statements (on semicolons outside quotes). */
export function statementsOf(text: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quote: string | null = null;
  for (const ch of text) {
    if (quote) {
      if (ch === quote) quote = null;
    } else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === ';') {
      out.push(cur.trim());
      cur = '';
      continue;
    }
    cur += ch;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

/** Statements of the request itself (not transaction control, not the per-request version check). */
export const work = (sent: string[]): string[] =>
  sent
    .flatMap(statementsOf)
    .filter(
      (s) =>
        !/^\s*(savepoint|release|begin|commit|rollback)\b/i.test(s) &&
        !s.includes('current_schemas(false)::text as search_path'),
    );
