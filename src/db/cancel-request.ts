/**
 * PostgreSQL's CancelRequest (protocol "Canceling Requests in Progress"): a new connection to the
 * server that sent the client its BackendKeyData, carrying the backend's pid and secret key. No
 * login is needed and nothing is answered; the server signals the backend, some time later. That
 * delay is why a client whose statement was cancelled must not be reused: the signal could reach
 * the next statement run on it.
 */
import { connect, type Socket } from 'node:net';
import type pg from 'pg';

/**
 * What cancellation needs of a signal: an AbortSignal is one, and so is the cheaper object of
 * `abandonedWhenClosed` (an AbortSignal costs several microseconds to create, on every request).
 */
export interface CancelSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

const CANCEL_REQUEST_CODE = 80877102;
const CANCEL_TIMEOUT_MS = 5_000;

interface KeyedClient {
  host?: string;
  port?: number;
  processID?: number | null;
  secretKey?: number | null;
}

/** Asks the server to cancel what `client` is running. Resolves once sent (or failed); never rejects. */
export function sendCancelRequest(client: pg.ClientBase): Promise<void> {
  const { host, port, processID, secretKey } = client as unknown as KeyedClient;
  if (!processID || secretKey === null || secretKey === undefined || !port) return Promise.resolve();
  const message = Buffer.alloc(16);
  message.writeInt32BE(16, 0);
  message.writeInt32BE(CANCEL_REQUEST_CODE, 4);
  message.writeInt32BE(processID, 8);
  message.writeInt32BE(secretKey, 12);
  return new Promise((resolve) => {
    let socket: Socket;
    try {
      socket =
        host?.startsWith('/') === true
          ? connect(`${host}/.s.PGSQL.${port}`)
          : connect({ host: host || 'localhost', port });
    } catch {
      resolve();
      return;
    }
    socket.setTimeout(CANCEL_TIMEOUT_MS, () => socket.destroy());
    socket.once('connect', () => socket.end(message));
    socket.once('error', () => socket.destroy());
    socket.once('close', () => resolve());
  });
}
