/**
 * GraphQL over WebSocket (the `graphql-transport-ws` protocol, graphql-ws' server) on
 * {project}/graphql/v1: the upgrade is routed to a project as HTTP requests are
 * (platform/routing.ts), `connection_init` carries `apikey` and `Authorization` (the upgrade's
 * headers are read when it does not), and each `subscribe` becomes a live query (live-queries.ts).
 */
import { ServerResponse, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { GraphQLSchema, parse, type ExecutionArgs } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import type WebSocket from 'ws';
import { WebSocketServer } from 'ws';
import { apiKeyOf, bearerOf } from '../auth/request-credentials.js';
import type { Principal } from '../db/with-role.js';
import { GRAPHQL_PATH } from '../graphql/http/options.js';
import { isBannable, normalizeIp, type NetworkBans } from '../platform/network-bans.js';
import type { Platform } from '../platform/platform.js';
import type { ProjectContext } from '../platform/project-context.js';
import { projectForIncoming, rewriteProjectUrl } from '../platform/routing.js';
import type { SubscribePayload } from './live-request.js';
import { AuthError, JWT_EXPIRED_MESSAGE, type LiveService } from './live-service.js';
import { Subscriber } from './subscriber.js';
import { rawSplicer } from './raw-result.js';

/** One connection's state once `connection_init` was accepted. */
interface Connection {
  project: ProjectContext;
  principal: Principal;
  subscribers: Set<Subscriber>;
  expired: boolean;
  cancelExpiry: () => void;
}

/** graphql-ws runs our own subscribe (the live query): it never executes against this schema. */
const NO_SCHEMA = new GraphQLSchema({});

function refuseUpgrade(socket: Duplex, status: number, reason: string, message: string): void {
  const body = JSON.stringify({ message });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

const REFUSED_DOCUMENT = parse('subscription { refused }');

/**
 * A refused subscribe as graphql-ws answers it: an `error` message with `message`. (Its own path
 * for errors returned by onSubscribe tells them by `instanceof GraphQLError`, which a second copy
 * of graphql, as test runners load one, fails; a stream that fails at once works with any.)
 */
function refused(message: string): ExecutionArgs {
  const stream = new Subscriber(() => {});
  stream.fail(new Error(message));
  return { schema: NO_SCHEMA, document: REFUSED_DOCUMENT, contextValue: stream };
}

/** A request Node routed to 'upgrade' handed back to the HTTP server as an ordinary request (no upgrade). */
function servePlain(server: Server, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  if (head.length) socket.unshift(head);
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket as Socket);
  res.once('finish', () => socket.end());
  server.emit('request', req, res);
}

function text(v: unknown): string | undefined {
  return typeof v === 'string' && v ? v : undefined;
}

/** `apikey` and `Authorization` from connection_init's payload (top level or under `headers`), else the upgrade's headers. */
function credentialsOf(params: Record<string, unknown> | undefined, req: IncomingMessage) {
  const nested =
    params?.headers && typeof params.headers === 'object' ? (params.headers as Record<string, unknown>) : {};
  const pick = (...names: string[]) => {
    for (const src of [params ?? {}, nested])
      for (const n of names) {
        const v = text(src[n]);
        if (v) return v;
      }
    return undefined;
  };
  const apikey = pick('apikey', 'apiKey') ?? apiKeyOf(req.headers);
  const authorization = pick('Authorization', 'authorization');
  const bearer = authorization ? bearerOf({ authorization }) : bearerOf(req.headers);
  return { apikey, bearer };
}

/** Serves graphql-transport-ws on the server's upgrades of {project}/graphql/v1; `close()` ends every socket. */
export function startWebSocketServer(
  server: Server,
  platform: Platform,
  live: LiveService,
  bans: NetworkBans,
): { close(): Promise<void> } {
  const wss = new WebSocketServer({ noServer: true, maxPayload: platform.config.bodyLimit });
  const projects = new WeakMap<IncomingMessage, ProjectContext>();
  const connections = new WeakMap<object, Connection>();

  const endConnection = (ctx: object) => connections.get(ctx)?.cancelExpiry();
  // Live results are the engine's JSON text (raw-result.ts): this listener comes before
  // graphql-ws' own, so every socket it serves sends through it. A `next` message goes out as three
  // fragments of one text message, its id and type, the result's bytes (one Buffer shared by every
  // subscriber of that result: ws writes it as it is) and the closing brace. A socket's messages
  // of one turn of the event loop (a refresh pushes several live queries' results to one user)
  // are corked into one write, sent once the turn's I/O callbacks are done (setImmediate).
  const raw = rawSplicer();
  wss.on('connection', (socket: WebSocket) => {
    const send = socket.send.bind(socket);
    const tcp = (socket as unknown as { _socket?: Socket })._socket;
    let corked = false;
    const flush = () => {
      corked = false;
      tcp?.uncork();
    };
    socket.send = ((data: string, cb?: (err?: Error) => void) => {
      if (tcp && !corked) {
        corked = true;
        tcp.cork();
        setImmediate(flush);
      }
      const parts = raw.split(data);
      if (!parts) return send(data, cb);
      send(parts.before, { fin: false, binary: false });
      send(parts.result.bytes, { fin: false, binary: false });
      send(parts.after, { fin: true, binary: false }, cb);
    }) as WebSocket['send'];
  });

  const served = useServer<Record<string, unknown>>(
    {
      onConnect: async (ctx) => {
        const { socket, request } = ctx.extra;
        const project = projects.get(request);
        if (!project) return false;
        const { apikey, bearer } = credentialsOf(ctx.connectionParams, request);
        let principal: Principal;
        try {
          principal = await live.principal(project, apikey, bearer);
        } catch (e) {
          if (!(e instanceof AuthError)) throw e;
          // Counted towards a network ban as the HTTP API's 401s are (platform/network-guard.ts).
          const ip = normalizeIp(request.socket.remoteAddress);
          if (ip && isBannable(ip)) await bans.recordFailure(project.ref, ip).catch(() => false);
          socket.close(4403, `Forbidden: ${e.message}`.slice(0, 120));
          return false;
        }
        const conn: Connection = {
          project,
          principal,
          subscribers: new Set(),
          expired: false,
          cancelExpiry: () => {},
        };
        conn.cancelExpiry = live.onExpiry(principal, () => {
          conn.expired = true;
          for (const s of conn.subscribers) s.fail(new Error(JWT_EXPIRED_MESSAGE));
          conn.subscribers.clear();
        });
        connections.set(ctx, conn);
        return true;
      },
      onSubscribe: async (ctx, _id, payload) => {
        const conn = connections.get(ctx);
        if (!conn) return refused('Unauthorized');
        if (conn.expired) return refused(JWT_EXPIRED_MESSAGE);
        for (const s of conn.subscribers) if (s.ended) conn.subscribers.delete(s);
        if (conn.subscribers.size >= live.config.maxPerConnection)
          return refused(
            `Too many subscriptions on this connection (the limit is ${live.config.maxPerConnection})`,
          );
        const opened = await live.open(conn.project, conn.principal, payload as SubscribePayload);
        if ('refused' in opened) return refused(opened.refused);
        conn.subscribers.add(opened.stream);
        const args: ExecutionArgs = {
          schema: NO_SCHEMA,
          document: opened.request.document,
          operationName: opened.request.operationName,
          variableValues: opened.request.variables,
          contextValue: opened.stream,
        };
        return args;
      },
      subscribe: (args) => args.contextValue as never,
      // The engine's errors are pg_graphql's `{ message }` objects, sent as they are.
      onNext: (_ctx, _id, _payload, _args, result) => result as never,
      jsonMessageReplacer: raw.replacer,
      onClose: (ctx) => endConnection(ctx),
      onDisconnect: (ctx) => endConnection(ctx),
    },
    wss,
  );

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // With an 'upgrade' listener Node hands every request with an Upgrade header here; those
    // that are not WebSockets (curl --http2 on http:// asks for h2c) are served as plain requests.
    // WebSockets elsewhere (a function's own path) are too: the route answers as it did before
    // subscriptions existed.
    if (String(req.headers.upgrade ?? '').toLowerCase() !== 'websocket')
      return servePlain(server, req, socket, head);
    if (rewriteProjectUrl(req).split('?')[0] !== GRAPHQL_PATH) return servePlain(server, req, socket, head);
    void (async () => {
      const { project } = await projectForIncoming(platform, req);
      if (!project) return refuseUpgrade(socket, 404, 'Not Found', 'Project not found');
      const ip = normalizeIp(req.socket.remoteAddress);
      if (ip && isBannable(ip) && (await bans.isBanned(project.ref, ip)))
        return refuseUpgrade(
          socket,
          403,
          'Forbidden',
          'Access denied: this IP address is banned from this project',
        );
      projects.set(req, project);
      wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
    })().catch(() => refuseUpgrade(socket, 503, 'Service Unavailable', 'The database is unavailable'));
  };
  server.on('upgrade', onUpgrade);

  return {
    async close() {
      server.off('upgrade', onUpgrade);
      for (const ws of wss.clients) ws.terminate();
      await Promise.resolve(served.dispose()).catch(() => {});
    },
  };
}
