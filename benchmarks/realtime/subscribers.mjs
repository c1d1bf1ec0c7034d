// Child process of run.mjs: the live-query clients. One graphql-ws client (its own WebSocket) per
// user, carrying that user's JWT in connection_init, with the user's live queries on it. Records
// when each result arrives (deliveries.mjs) and answers the parent's questions over IPC:
// {cmd:'setup', url, anonKey, tokens, plan, batchUsers} → progress, then {type:'ready', …};
// {cmd:'status'} → {type:'status', cpuMs, …}; {cmd:'pending', log} → {type:'pending', pending, …}; {cmd:'finish', log} → {type:'finished', …};
// {cmd:'stop'} closes every socket and exits.
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { Tracker } from './deliveries.mjs';
import { DOCUMENTS, stampsOfValue, userOrg } from './workload.mjs';

/** @type {Tracker} */
let tracker;
const clients = [];

async function setup({ url, anonKey, tokens, plan, batchUsers }) {
  tracker = new Tracker(plan);
  const t0 = Date.now();
  const byUser = new Map();
  plan.forEach((s, i) => {
    if (!byUser.has(s.user)) byUser.set(s.user, []);
    byUser.get(s.user).push(i);
  });
  const users = [...byUser.keys()];
  let refused = 0;
  let opened = 0;
  for (let b = 0; b < users.length; b += batchUsers) {
    const firsts = [];
    for (const u of users.slice(b, b + batchUsers)) {
      const client = createClient({
        url,
        webSocketImpl: WebSocket,
        connectionParams: { apikey: anonKey, Authorization: `Bearer ${tokens[u]}` },
        lazy: true,
        retryAttempts: 0,
        shouldRetry: () => false,
      });
      clients.push(client);
      const org = userOrg(u);
      for (const i of byUser.get(u)) {
        const sub = plan[i];
        firsts.push(
          new Promise((resolve) => {
            let first = true;
            client.subscribe(
              { query: DOCUMENTS[sub.doc], variables: sub.vars },
              {
                next: (result) => {
                  const t = Date.now();
                  if (result.errors) tracker.error(JSON.stringify(result.errors));
                  tracker.record(i, stampsOfValue(result.data, org), t);
                  if (first) {
                    first = false;
                    resolve(undefined);
                  }
                },
                error: (err) => {
                  refused++;
                  tracker.error(err instanceof Error ? err.message : JSON.stringify(err));
                  resolve(undefined);
                },
                complete: () => resolve(undefined),
              },
            );
          }),
        );
      }
    }
    await Promise.all(firsts);
    opened += firsts.length;
    process.send?.({ type: 'progress', opened });
  }
  return { subscribed: plan.length - refused, refused, rampMs: Date.now() - t0, connections: clients.length };
}

process.on('message', async (/** @type {any} */ m) => {
  try {
    if (m.cmd === 'setup') process.send?.({ type: 'ready', ...(await setup(m)), ...tracker.summary() });
    else if (m.cmd === 'status') process.send?.({ type: 'status', ...tracker.summary() });
    else if (m.cmd === 'pending')
      process.send?.({ type: 'pending', pending: tracker.pending(m.log), ...tracker.summary() });
    else if (m.cmd === 'finish')
      process.send?.({ type: 'finished', ...tracker.latencies(m.log), ...tracker.summary() });
    else if (m.cmd === 'stop') {
      await Promise.all(clients.map((c) => c.dispose()));
      process.exit(0);
    }
  } catch (err) {
    console.error(`subscribers: ${err.stack ?? err}`);
    process.exit(1);
  }
});
process.on('disconnect', () => process.exit(0));
