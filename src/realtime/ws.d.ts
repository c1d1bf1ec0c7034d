/**
 * The part of `ws` (a dependency: the WebSocket server graphql-ws runs on) that Strata uses; the
 * package ships no types of its own and @types/ws is not installed.
 */
declare module 'ws' {
  import { EventEmitter } from 'node:events';
  import type { IncomingMessage } from 'node:http';
  import type { Duplex } from 'node:stream';

  export default class WebSocket extends EventEmitter {
    constructor(
      url: string,
      protocols?: string | string[],
      options?: { localAddress?: string; headers?: Record<string, string> },
    );
    readonly OPEN: number;
    readonly readyState: number;
    readonly protocol: string;
    close(code?: number, reason?: string): void;
    terminate(): void;
    send(data: string, cb?: (err?: Error) => void): void;
    send(
      data: string | Buffer,
      options: { fin?: boolean; binary?: boolean },
      cb?: (err?: Error) => void,
    ): void;
  }

  export class WebSocketServer extends EventEmitter {
    constructor(options: { noServer: true; maxPayload?: number });
    readonly clients: Set<WebSocket>;
    options: Record<string, unknown>;
    handleUpgrade(
      req: IncomingMessage,
      socket: Duplex,
      head: Buffer,
      done: (ws: WebSocket, req: IncomingMessage) => void,
    ): void;
    close(cb?: (err?: Error) => void): void;
  }
}
