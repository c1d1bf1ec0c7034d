/**
 * Realtime: GraphQL subscriptions as live queries (docs/realtime.md). A schema opts in with
 * `@graphql({"strata": {"subscriptions": true}})`; each Subscription field runs as the Query field
 * of the same name, as the subscriber (RLS applies), multiplexed per (query, variables, role, claims).
 */
export { startRealtime, JWT_EXPIRED_MESSAGE, type RealtimeServer } from './ws-server.js';
export type { LiveQueryStats } from './live-queries.js';
