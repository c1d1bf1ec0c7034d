/**
 * Realtime: GraphQL subscriptions as live queries (docs/realtime.md). A schema opts in with
 * `@graphql({"strata": {"subscriptions": true}})`; each Subscription field runs as the Query field
 * of the same name, as the subscriber (RLS applies), multiplexed per (query, role, the claims its
 * policies read) with variable sets refreshed together, over graphql-ws (WebSocket) and
 * graphql-sse (event streams) on {project}/graphql/v1.
 */
import type { FastifyInstance } from 'fastify';
import type { NetworkBans } from '../platform/network-bans.js';
import type { Platform } from '../platform/platform.js';
import type { LiveQueryStats } from './live-queries.js';
import { LiveService } from './live-service.js';
import { sseSubscriptions } from './sse-route.js';
import { SseReservations } from './sse-single.js';
import { GRAPHQL_PATH } from '../graphql/http/options.js';
import { startWebSocketServer } from './ws-server.js';

export { JWT_EXPIRED_MESSAGE } from './live-service.js';
export type { LiveQueryStats } from './live-queries.js';

export interface RealtimeServer {
  /** Live queries on this node, summed over projects (tests read `executions`). */
  stats(): LiveQueryStats;
  /** Change-stream subscriptions open on this node. */
  changeStreams(): number;
  close(): Promise<void>;
}

/**
 * Serves subscriptions on `app` (call before the GraphQL routes are registered: the event-stream
 * transport is a preHandler of theirs); closed with the app, before its server. `bans`: the
 * platform's network bans, checked and counted on WebSocket connections.
 */
export function startRealtime(app: FastifyInstance, platform: Platform, bans: NetworkBans): RealtimeServer {
  const { config } = platform;
  const live = new LiveService(config.realtime, {
    maxDepth: config.graphqlMaxDepth,
    maxSelections: config.graphqlMaxSelections,
  });
  const ws = startWebSocketServer(app.server, platform, live, bans);
  const reservations = new SseReservations(live);
  app.addHook('preHandler', sseSubscriptions(live, reservations));
  // graphql-sse's single connection mode: PUT reserves a stream, DELETE stops one of its operations.
  app.route({
    method: ['PUT', 'DELETE'],
    url: GRAPHQL_PATH,
    handler: async (req, reply) => {
      const project = req.project;
      if (!project) return reply.code(404).send({ message: 'Project not found' });
      if (req.method === 'PUT') return reservations.put(req, reply, project);
      const token = SseReservations.tokenOf(req);
      if (!token) return reply.code(404).send({ errors: [{ message: 'Stream not found' }] });
      return reservations.delete(req, reply, project, token);
    },
  });
  let closing: Promise<void> | undefined;
  const realtime: RealtimeServer = {
    stats: () => live.stats(),
    changeStreams: () => live.changeStreamCount(),
    close() {
      closing ??= (async () => {
        await ws.close();
        reservations.close();
        await live.close();
      })();
      return closing;
    },
  };
  app.addHook('preClose', async () => realtime.close());
  return realtime;
}
