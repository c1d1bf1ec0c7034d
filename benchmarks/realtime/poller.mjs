// Child process of run.mjs: the naive baseline. The same live queries (documents, variables, users)
// as plain queries, each polled on its own with its user's JWT over HTTP POST {project}/graphql/v1
// every `intervalMs` (1 s, Hasura's default refetch interval), staggered evenly over the interval;
// nothing is multiplexed and nothing is pushed. `concurrency` requests at a time over keep-alive
// connections (undici Pool). When a round of polls takes longer than the interval, it polls as fast
// as it can: the achieved poll rate is reported. Results are recorded as the live-query clients'
// are (deliveries.mjs: a poll that first shows a write "delivers" it).
// IPC: {cmd:'setup', url, anonKey, tokens, plan, intervalMs, concurrency} → {type:'ready'};
// {cmd:'start'} → {type:'started'}; {cmd:'status'} → {type:'status', polls, …};
// {cmd:'pending', log}, {cmd:'finish', log} as subscribers.mjs; {cmd:'stop'} ends.
import { Pool } from 'undici';
import { Tracker } from './deliveries.mjs';
import { queryText, stampsOfText, userOrg } from './workload.mjs';

/** @type {Tracker} */
let tracker;
let setupMsg;
let pool;
let running = false;
let polls = 0;
let failed = 0;
let workers = [];

function setup(m) {
  setupMsg = m;
  tracker = new Tracker(m.plan);
  const u = new URL(m.url);
  pool = new Pool(u.origin, { connections: m.concurrency, pipelining: 1 });
  // Each live query's request, built once: the same bytes every poll.
  setupMsg.requests = m.plan.map((s) => ({
    path: u.pathname,
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      apikey: m.anonKey,
      authorization: `Bearer ${m.tokens[s.user]}`,
    },
    body: JSON.stringify({ query: queryText(s.doc), variables: s.vars }),
  }));
}

async function poll(i) {
  const s = setupMsg.plan[i];
  const res = await pool.request(setupMsg.requests[i]);
  const text = await res.body.text();
  const t = Date.now();
  polls++;
  if (res.statusCode !== 200 || text.startsWith('{"errors"') || text.includes('"errors":[')) {
    failed++;
    tracker.error(`${res.statusCode} ${text.slice(0, 200)}`);
  }
  tracker.record(i, stampsOfText(text, userOrg(s.user)), t);
}

function start() {
  running = true;
  const n = setupMsg.plan.length;
  const every = setupMsg.intervalMs;
  const t0 = Date.now();
  let cursor = 0;
  const worker = async () => {
    while (running) {
      const k = cursor++;
      const i = k % n;
      // Poll k is due at its round's start plus its live query's offset within the interval.
      const due = t0 + Math.floor(k / n) * every + (i * every) / n;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (!running) break;
      await poll(i).catch((err) => {
        failed++;
        tracker.error(err.message);
      });
    }
  };
  workers = Array.from({ length: setupMsg.concurrency }, worker);
}

process.on('message', async (/** @type {any} */ m) => {
  try {
    if (m.cmd === 'setup') {
      setup(m);
      process.send?.({ type: 'ready', subscribed: m.plan.length });
    } else if (m.cmd === 'start') {
      start();
      process.send?.({ type: 'started' });
    } else if (m.cmd === 'status') process.send?.({ type: 'status', polls, failed, ...tracker.summary() });
    else if (m.cmd === 'pending')
      process.send?.({ type: 'pending', pending: tracker.pending(m.log), ...tracker.summary() });
    else if (m.cmd === 'finish') {
      running = false;
      await Promise.all(workers);
      process.send?.({ type: 'finished', ...tracker.latencies(m.log), polls, failed, ...tracker.summary() });
    } else if (m.cmd === 'stop') {
      running = false;
      await pool?.close().catch(() => {});
      process.exit(0);
    }
  } catch (err) {
    console.error(`poller: ${err.stack ?? err}`);
    process.exit(1);
  }
});
process.on('disconnect', () => process.exit(0));
