/**
 * GraphQL over SSE, graphql-sse's "single connection" mode, on {project}/graphql/v1:
 * - `PUT` reserves a stream: 201 with its token (text);
 * - `GET` (or `POST` without a body) with `Accept: text/event-stream` and the token
 *   (`X-GraphQL-Event-Stream-Token` header or `?token=`) opens it, once;
 * - `POST` with the token and `{query, variables, operationName, extensions: {operationId}}`
 *   starts a subscription whose results arrive on that stream as `next` events
 *   `{id, payload}`, ended by `complete` `{id}`: 202;
 * - `DELETE ?operationId=` with the token stops one: 200.
 * Every request carries the credentials of the PUT (`apikey`, `Authorization`): a token is used
 * only with the credentials it was reserved with. A reservation whose stream is not opened within
 * RESERVATION_TTL_MS is dropped, and closing the stream ends its subscriptions.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { print as printEvent } from 'graphql-sse';
import { apiKeyOf, bearerOf } from '../auth/request-credentials.js';
import type { Principal } from '../db/with-role.js';
import type { ProjectContext } from '../platform/project-context.js';
import type { SubscribePayload } from './live-request.js';
import { AuthError, JWT_EXPIRED_MESSAGE, type LiveService } from './live-service.js';
import { eventData } from './raw-result.js';

export const TOKEN_HEADER = 'x-graphql-event-stream-token';
const RESERVATION_TTL_MS = 30_000;
const KEEP_ALIVE_MS = 12_000;

interface Operation {
  stop(): void;
}

interface Reservation {
  token: string;
  project: ProjectContext;
  principal: Principal;
  credentials: string;
  res?: ServerResponse;
  opened: Promise<void>;
  open: () => void;
  ops: Map<string, Operation>;
  timer?: NodeJS.Timeout;
  cancelExpiry: () => void;
}

type Json = Record<string, unknown>;
const errors = (message: string): Json => ({ errors: [{ message }] });

export class SseReservations {
  private readonly reservations = new Map<string, Reservation>();

  constructor(private readonly live: LiveService) {}

  /** The token of a request, header first. */
  static tokenOf(req: FastifyRequest): string | undefined {
    const header = req.headers[TOKEN_HEADER];
    if (typeof header === 'string' && header) return header;
    const q = (req.query ?? {}) as Record<string, unknown>;
    return typeof q.token === 'string' && q.token ? q.token : undefined;
  }

  /** The caller's principal and credentials, or the 401 already sent. */
  private async caller(
    req: FastifyRequest,
    reply: FastifyReply,
    project: ProjectContext,
  ): Promise<{ principal: Principal; credentials: string } | undefined> {
    // Browsers on other origins read the answers (no cookies: credentials are headers).
    reply.header('access-control-allow-origin', '*');
    const apikey = apiKeyOf(req.headers);
    const bearer = bearerOf(req.headers);
    try {
      const principal = await this.live.principal(project, apikey, bearer);
      return { principal, credentials: `${apikey ?? ''}\n${bearer ?? ''}` };
    } catch (e) {
      if (!(e instanceof AuthError)) throw e;
      await reply.code(401).send({ message: e.message });
      return undefined;
    }
  }

  /** The reservation a request names, checked against its credentials; else the answer sent. */
  private async reservationOf(
    req: FastifyRequest,
    reply: FastifyReply,
    project: ProjectContext,
    token: string,
  ): Promise<Reservation | undefined> {
    const who = await this.caller(req, reply, project);
    if (!who) return undefined;
    const r = this.reservations.get(token);
    if (!r || r.project !== project || r.credentials !== who.credentials) {
      await reply.code(404).send(errors('Stream not found'));
      return undefined;
    }
    return r;
  }

  async put(req: FastifyRequest, reply: FastifyReply, project: ProjectContext): Promise<void> {
    const who = await this.caller(req, reply, project);
    if (!who) return;
    let held = 0;
    for (const r of this.reservations.values()) if (r.project === project) held++;
    if (held >= this.live.config.maxPerProject)
      return void (await reply.code(503).send(errors('Too many event streams on this project')));
    let open = () => {};
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    const r: Reservation = {
      token: randomUUID(),
      project,
      ...who,
      opened,
      open,
      ops: new Map(),
      cancelExpiry: () => {},
    };
    r.timer = setTimeout(() => this.drop(r), RESERVATION_TTL_MS);
    r.timer.unref();
    // The token's JWT expiring ends every subscription of the stream.
    r.cancelExpiry = this.live.onExpiry(who.principal, () => this.drop(r, JWT_EXPIRED_MESSAGE));
    this.reservations.set(r.token, r);
    await reply.code(201).type('text/plain; charset=utf-8').send(r.token);
  }

  async delete(req: FastifyRequest, reply: FastifyReply, project: ProjectContext, token: string) {
    const r = await this.reservationOf(req, reply, project, token);
    if (!r) return;
    const id = (req.query as Record<string, unknown>).operationId;
    if (typeof id !== 'string' || !id)
      return void (await reply.code(400).send(errors('Operation ID is missing')));
    r.ops.get(id)?.stop();
    r.ops.delete(id);
    await reply.code(200).send();
  }

  /** GET/POST with the token: the event stream when it accepts one, else an operation. */
  async request(req: FastifyRequest, reply: FastifyReply, project: ProjectContext, token: string) {
    const r = await this.reservationOf(req, reply, project, token);
    if (!r) return;
    if (String(req.headers.accept ?? '').includes('text/event-stream')) return this.stream(req, reply, r);
    if (req.method !== 'POST')
      return void (await reply.code(405).header('allow', 'PUT, POST, DELETE').send());
    let payload: SubscribePayload & { extensions?: { operationId?: unknown } };
    try {
      payload = JSON.parse(Buffer.isBuffer(req.body) ? req.body.toString('utf8') : String(req.body ?? ''));
    } catch {
      return void (await reply.code(400).send(errors('The body is not JSON')));
    }
    const id = payload?.extensions?.operationId;
    if (typeof id !== 'string' || !id)
      return void (await reply.code(400).send(errors('Operation ID is missing')));
    if (r.ops.has(id)) return void (await reply.code(409).send(errors('Operation with ID already exists')));
    if (r.ops.size >= this.live.config.maxPerConnection)
      return void (await reply
        .code(400)
        .send(
          errors(`Too many subscriptions on this stream (the limit is ${this.live.config.maxPerConnection})`),
        ));
    const placeholder: Operation = { stop: () => r.ops.delete(id) };
    r.ops.set(id, placeholder);
    const opened = await this.live.open(r.project, r.principal, payload);
    if ('refused' in opened) {
      r.ops.delete(id);
      return void (await reply.code(400).send(errors(opened.refused)));
    }
    const stream = opened.stream;
    // Stopped (DELETE, or the stream closed) while it was being opened.
    if (r.ops.get(id) !== placeholder || !this.reservations.has(r.token)) {
      void stream.return();
      return void (await reply.code(204).send());
    }
    r.ops.set(id, { stop: () => void stream.return() });
    void (async () => {
      await r.opened;
      try {
        try {
          for await (const result of stream)
            await this.writeText(
              r,
              `event: next\ndata: {"id":${JSON.stringify(id)},"payload":${eventData(result)}}\n\n`,
            );
        } catch (e) {
          await this.write(r, { event: 'next', data: { id, payload: errors((e as Error).message) } });
        }
        if (r.ops.get(id)) await this.write(r, { event: 'complete', data: { id } });
      } catch {
        // The stream is gone: drop() ends everything.
      } finally {
        void stream.return();
        r.ops.delete(id);
      }
    })();
    await reply.code(202).send();
  }

  private async stream(req: FastifyRequest, reply: FastifyReply, r: Reservation): Promise<void> {
    if (r.res) return void (await reply.code(409).send(errors('Stream already open')));
    if (r.timer) clearTimeout(r.timer);
    reply.hijack();
    const res = reply.raw;
    r.res = res;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'access-control-allow-origin': String(req.headers.origin ?? '*'),
    });
    res.write(':\n\n');
    const keepAlive = setInterval(() => res.write(':\n\n'), KEEP_ALIVE_MS);
    keepAlive.unref();
    res.once('close', () => {
      clearInterval(keepAlive);
      this.drop(r);
    });
    r.open();
  }

  private async write(r: Reservation, event: Parameters<typeof printEvent>[0]): Promise<void> {
    await this.writeText(r, printEvent(event as never));
  }

  private async writeText(r: Reservation, text: string): Promise<void> {
    const res = r.res;
    if (!res || res.destroyed) throw new Error('the stream is closed');
    if (!res.write(text)) await once(res, 'drain');
  }

  /** Ends a reservation: its subscriptions stop, its stream ends (after `message`, if any). */
  private drop(r: Reservation, message?: string): void {
    if (this.reservations.get(r.token) !== r) return;
    this.reservations.delete(r.token);
    if (r.timer) clearTimeout(r.timer);
    r.cancelExpiry();
    const res = r.res;
    for (const [id, op] of r.ops) {
      op.stop();
      if (message && res && !res.destroyed) {
        res.write(printEvent({ event: 'next', data: { id, payload: errors(message) } } as never));
        res.write(printEvent({ event: 'complete', data: { id } } as never));
      }
    }
    r.ops.clear();
    if (res && !res.destroyed) res.end();
    r.open();
  }

  close(): void {
    for (const r of [...this.reservations.values()]) this.drop(r);
  }
}
