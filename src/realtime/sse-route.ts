/**
 * GraphQL over SSE (the graphql-sse protocol, its "distinct connections" mode; the single
 * connection mode is sse-single.ts) on
 * {project}/graphql/v1: a POST (or GET) that accepts `text/event-stream` and carries a
 * subscription is answered as a stream of `next` events (the live results) ended by `complete`.
 * `apikey` and `Authorization` are its headers, as on any GraphQL request. Any other request goes
 * on to the GraphQL route as before.
 */
import { once } from 'node:events';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { parse } from 'graphql';
import { print as printEvent } from 'graphql-sse';
import { apiKeyOf, bearerOf } from '../auth/request-credentials.js';
import type { Principal } from '../db/with-role.js';
import { GRAPHQL_PATH } from '../graphql/http/options.js';
import { operationOf, type SubscribePayload } from './live-request.js';
import { AuthError, JWT_EXPIRED_MESSAGE, type LiveService } from './live-service.js';
import { SseReservations } from './sse-single.js';
import { eventData } from './raw-result.js';

const KEEP_ALIVE_MS = 12_000;

function acceptsEventStream(req: FastifyRequest): boolean {
  return String(req.headers.accept ?? '').includes('text/event-stream');
}

/** The request's payload when it is a subscription asked for as an event stream, else undefined. */
function subscriptionPayload(req: FastifyRequest): SubscribePayload | undefined {
  if (!acceptsEventStream(req)) return undefined;
  if (req.routeOptions.url !== GRAPHQL_PATH) return undefined;
  let payload: SubscribePayload;
  try {
    if (req.method === 'POST' && Buffer.isBuffer(req.body)) payload = JSON.parse(req.body.toString('utf8'));
    else if (req.method === 'GET') {
      const q = req.query as Record<string, string | undefined>;
      payload = {
        query: q.query,
        operationName: q.operationName,
        variables: q.variables ? JSON.parse(q.variables) : undefined,
      };
    } else return undefined;
    if (!payload || typeof payload !== 'object' || typeof payload.query !== 'string') return undefined;
    const doc = parse(payload.query, { noLocation: true });
    const name = typeof payload.operationName === 'string' ? payload.operationName : undefined;
    const op = operationOf(doc, name);
    return op?.operation === 'subscription' ? payload : undefined;
  } catch {
    // Not JSON, not GraphQL: the GraphQL route answers it as it answers any such request.
    return undefined;
  }
}

/**
 * A preHandler (of every route: it checks the route itself) that serves GraphQL subscriptions asked
 * for as event streams, and the GET/POST requests of single-connection streams (sse-single.ts). A
 * callback hook that lets a request with neither `Accept: text/event-stream` nor a stream token go
 * on at once (no promise per request); the others as Fastify runs an async hook (resolved: go on).
 */
export function sseSubscriptions(live: LiveService, reservations: SseReservations) {
  const serve = sseServe(live, reservations);
  return (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void => {
    if (!acceptsEventStream(req) && !SseReservations.tokenOf(req)) done();
    else serve(req, reply).then(() => done(), done);
  };
}

function sseServe(live: LiveService, reservations: SseReservations) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const project = req.project;
    if (project && req.routeOptions.url === GRAPHQL_PATH) {
      const token = SseReservations.tokenOf(req);
      if (token) return reservations.request(req, reply, project, token);
    }
    const payload = subscriptionPayload(req);
    if (!payload || !project) return;
    let principal: Principal;
    try {
      principal = await live.principal(project, apiKeyOf(req.headers), bearerOf(req.headers));
    } catch (e) {
      if (!(e instanceof AuthError)) throw e;
      return reply.code(401).send({ message: e.message });
    }
    const opened = await live.open(project, principal, payload);
    if ('refused' in opened) return reply.code(400).send({ errors: [{ message: opened.refused }] });
    const stream = opened.stream;
    const cancelExpiry = live.onExpiry(principal, () => stream.fail(new Error(JWT_EXPIRED_MESSAGE)));
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'access-control-allow-origin': String(req.headers.origin ?? '*'),
    });
    res.flushHeaders();
    res.once('close', () => void stream.return());
    // A comment line now and then keeps proxies from closing a quiet stream (graphql-sse does the same).
    const keepAlive = setInterval(() => res.write(':\n\n'), KEEP_ALIVE_MS);
    keepAlive.unref();
    const write = async (text: string) => {
      if (!res.write(text)) await once(res, 'drain');
    };
    try {
      try {
        for await (const result of stream) await write(`event: next\ndata: ${eventData(result)}\n\n`);
      } catch (e) {
        // graphql-sse has no error event: the error is the last result.
        await write(
          printEvent({ event: 'next', data: { errors: [{ message: (e as Error).message }] } as never }),
        );
      }
      await write(printEvent({ event: 'complete', data: null }));
    } catch {
      // The client is gone.
    } finally {
      clearInterval(keepAlive);
      cancelExpiry();
      void stream.return();
      res.end();
    }
  };
}
