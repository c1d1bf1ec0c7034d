// Child process of run.mjs: the writes, at a steady rate, one at a time on one connection as the
// project's superuser (behind the subscribers' backs, as another service or a migration would
// write). Each write is one autocommit statement on a random room: an INSERT of a new message,
// or (BENCH_RT_UPDATE_SHARE of them, default 10 %) an UPDATE of the room's newest message's body.
// The body starts `w<seq> o<org> ` (deliveries.mjs reads it); `t` of a write is when its commit
// was acknowledged (Date.now(), ms). Write i is sent at start + i / rate (sooner when behind: as
// fast as it can until it has caught up).
//
// IPC: {cmd:'start', url, rate, users, seqStart, updateShare} → {type:'started'};
// {cmd:'log'} → {type:'log', log, behindMs} (every write so far; `orgTop`: the row is among its
// org's 10 newest messages); {cmd:'stop'} → the same as {type:'stopped'}, then it exits.
import pg from 'pg';
import { ORGS, ROOMS_PER_ORG, orgUsers, rng, roomOrg } from './workload.mjs';

let running = false;
let done;
const log = [];
let behindMs = 0;

async function writeLoop({ url, rate, users, seqStart, updateShare }) {
  const client = new pg.Client({ connectionString: url, application_name: 'bench-writer' });
  await client.connect();
  try {
    // Each room's newest message (id, author) and each org's 10 newest ids: what updates rewrite,
    // and whether a rewritten row is in its org's orgRecent.
    const latest = new Map();
    const orgTop = new Map();
    const { rows } = await client.query(
      `select r.org_id, m.room_id, m.id, m.author,
              row_number() over (partition by m.room_id order by m.id desc) as in_room,
              row_number() over (partition by r.org_id order by m.id desc) as in_org
         from public.message m join public.room r on r.id = m.room_id
        where m.id > (select max(id) - $1 from public.message)`,
      [ORGS * ROOMS_PER_ORG * 30],
    );
    rows.sort((a, b) => Number(a.id) - Number(b.id));
    for (const r of rows) {
      if (Number(r.in_room) === 1) latest.set(r.room_id, { id: r.id, author: r.author });
      if (Number(r.in_org) <= 10) orgTop.set(r.org_id, [...(orgTop.get(r.org_id) ?? []), r.id].slice(-10));
    }
    const rand = rng(seqStart + 7);
    const rooms = ORGS * ROOMS_PER_ORG;
    const start = Date.now();
    process.send?.({ type: 'started' });
    for (let i = 0; running; i++) {
      const due = start + (i * 1000) / rate;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      else behindMs = Math.max(behindMs, -wait);
      if (!running) break;
      const seq = seqStart + i;
      const room = 1 + Math.floor(rand() * rooms);
      const org = roomOrg(room);
      const top = orgTop.get(org) ?? [];
      const newest = latest.get(room);
      if (newest && rand() < updateShare) {
        const body = `w${seq} o${org} edited by ${newest.author} at ${Date.now()}`;
        await client.query({
          name: 'update',
          text: 'update public.message set body = $1 where id = $2',
          values: [body, newest.id],
        });
        log.push({
          seq,
          t: Date.now(),
          kind: 'update',
          room,
          org,
          author: newest.author,
          orgTop: top.includes(newest.id),
        });
      } else {
        const members = orgUsers(org, users);
        const author = `u${members.length ? members[Math.floor(rand() * members.length)] : org - 1}`;
        const body = `w${seq} o${org} message from ${author} at ${Date.now()}`;
        const { rows: ins } = await client.query({
          name: 'insert',
          text: 'insert into public.message (room_id, author, body) values ($1, $2, $3) returning id',
          values: [room, author, body],
        });
        log.push({ seq, t: Date.now(), kind: 'insert', room, org, author, orgTop: true });
        const id = ins[0].id;
        latest.set(room, { id, author });
        orgTop.set(org, [...top, id].slice(-10));
      }
    }
  } finally {
    await client.end().catch(() => {});
  }
}

process.on('message', (/** @type {any} */ m) => {
  if (m.cmd === 'start') {
    running = true;
    done = writeLoop(m).catch((err) => {
      console.error(`writer: ${err.stack ?? err}`);
      process.exit(1);
    });
  } else if (m.cmd === 'log') process.send?.({ type: 'log', log, behindMs });
  else if (m.cmd === 'stop') {
    running = false;
    void Promise.resolve(done).then(() => {
      process.send?.({ type: 'stopped', log, behindMs }, () => process.exit(0));
    });
  }
});
process.on('disconnect', () => process.exit(0));
