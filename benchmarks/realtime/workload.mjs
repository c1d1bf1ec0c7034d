// The realtime bench's workload: a chat app's schema and data, its users and their live queries,
// and which writes each live query's result must reflect (the expectation rule the latencies use).
//
// Schema (public, opted in to subscriptions): org(id) 1─n room(id, org_id) 1─n message(id bigserial,
// room_id, author, body, created_at). RLS: an authenticated user reads the rooms of their org and
// the messages of those rooms; the org comes from the JWT claim app_metadata.org_id, read through
// auth.jwt() as Supabase apps do. The writer writes as the superuser (behind the subscribers' backs).
// message has REPLICA IDENTITY FULL (BENCH_RT_REPLICA_FULL=0: the default identity).
//
// Users u0..u(N-1), user i in org (i mod ORGS) + 1; each holds up to 10 live queries over one
// WebSocket (its own JWT): feed × 3 (rooms A, B, C of its org), badge × 3 (the same rooms),
// mine × 2 (rooms A, B, its own name), orgRooms, orgRecent.
import { signJwt } from '../../dist/auth/jwt.js';

export const ORGS = 20;
export const ROOMS_PER_ORG = 10;
export const SEED_PER_ROOM = 100;
export const SUBS_PER_USER = 10;

export const roomOrg = (room) => Math.floor((room - 1) / ROOMS_PER_ORG) + 1;
export const userOrg = (u) => (u % ORGS) + 1;
export const userName = (u) => `u${u}`;
/** The users of an org, given the number of users. */
export const orgUsers = (org, users) => {
  const out = [];
  for (let u = org - 1; u < users; u += ORGS) out.push(u);
  return out;
};

export const SCHEMA = `
comment on schema public is '@graphql({"inflect_names": true, "strata": {"subscriptions": true}})';
create table public.org (id int primary key, name text not null);
create table public.room (id int primary key, org_id int not null references public.org, name text not null);
create table public.message (
  id bigserial primary key,
  room_id int not null references public.room,
  author text not null,
  body text not null,
  created_at timestamptz not null default clock_timestamp()
);
comment on table public.message is '@graphql({"totalCount": {"enabled": true}})';
-- Old rows in the WAL, as Supabase Realtime asks for (docs/realtime.md): an UPDATE then re-runs
-- only the live queries of the room it touched (BENCH_RT_REPLICA_FULL=0 leaves the default).
${process.env.BENCH_RT_REPLICA_FULL === '0' ? '' : 'alter table public.message replica identity full;'}
create index message_room_id on public.message (room_id, id desc);
create index message_room_author_id on public.message (room_id, author, id desc);
create index room_org on public.room (org_id, id);
alter table public.room enable row level security;
alter table public.message enable row level security;
create policy org_rooms on public.room for select to authenticated
  using (org_id = (select (auth.jwt() -> 'app_metadata' ->> 'org_id')::int));
create policy org_messages on public.message for select to authenticated
  using (room_id in (select r.id from public.room r
                      where r.org_id = (select (auth.jwt() -> 'app_metadata' ->> 'org_id')::int)));
grant select on public.org, public.room, public.message to authenticated;
`;

/** The seed data: ORGS orgs, ROOMS_PER_ORG rooms each, SEED_PER_ROOM messages per room by the org's users. */
export function seedSql(users) {
  return `
insert into public.org select g, 'org ' || g from generate_series(1, ${ORGS}) g;
insert into public.room select g, (g - 1) / ${ROOMS_PER_ORG} + 1, 'room ' || g from generate_series(1, ${ORGS * ROOMS_PER_ORG}) g;
insert into public.message (room_id, author, body)
  select r, 'u' || (((r - 1) / ${ROOMS_PER_ORG}) + ${ORGS} * (n % greatest(1, ${users} / ${ORGS}))),
         's' || n || ' o' || ((r - 1) / ${ROOMS_PER_ORG} + 1) || ' seeded message of room ' || r
    from generate_series(1, ${ORGS * ROOMS_PER_ORG}) r, generate_series(1, ${SEED_PER_ROOM}) n
   order by n, r;
analyze;`;
}

const NODE = 'id author body createdAt';

/** The five documents (subscription form; the naive baseline sends the same text as `query`). */
export const DOCUMENTS = {
  // The last 20 messages of a room (a chat window).
  feed: `subscription Feed($room: Int!) {
  messageCollection(filter: {roomId: {eq: $room}}, orderBy: [{id: DescNullsLast}], first: 20) {
    edges { node { ${NODE} } }
  }
}`,
  // A room's message count and latest message (a room list's badge).
  badge: `subscription Badge($room: Int!) {
  messageCollection(filter: {roomId: {eq: $room}}, orderBy: [{id: DescNullsLast}], first: 1) {
    totalCount
    edges { node { ${NODE} } }
  }
}`,
  // My last 10 messages in a room (variables differ per user: few groups share them).
  mine: `subscription Mine($room: Int!, $author: String!) {
  messageCollection(filter: {roomId: {eq: $room}, author: {eq: $author}}, orderBy: [{id: DescNullsLast}], first: 10) {
    edges { node { ${NODE} } }
  }
}`,
  // My org's rooms with each one's latest message (no variables: RLS picks the org).
  orgRooms: `subscription OrgRooms {
  roomCollection(orderBy: [{id: AscNullsLast}], first: ${ROOMS_PER_ORG}) {
    edges { node { id name messageCollection(orderBy: [{id: DescNullsLast}], first: 1) { edges { node { ${NODE} } } } } }
  }
}`,
  // The 10 latest messages anywhere in my org (an activity feed; no variables).
  orgRecent: `subscription OrgRecent {
  messageCollection(orderBy: [{id: DescNullsLast}], first: 10) {
    edges { node { ${NODE} } }
  }
}`,
};

export const queryText = (doc) => DOCUMENTS[doc].replace(/^subscription/, 'query');

/** A small deterministic PRNG (mulberry32), so every run and phase has the same plan. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The live queries: `subs` of them over ceil(subs / 10) users. Each: { user, doc, vars }, in user
 * order (a user's subscriptions are consecutive).
 */
export function planSubscriptions(subs) {
  const users = Math.ceil(subs / SUBS_PER_USER);
  const rand = rng(33);
  const plan = [];
  for (let u = 0; u < users && plan.length < subs; u++) {
    const org = userOrg(u);
    const first = (org - 1) * ROOMS_PER_ORG + 1;
    const picks = [];
    while (picks.length < 3) {
      const r = first + Math.floor(rand() * ROOMS_PER_ORG);
      if (!picks.includes(r)) picks.push(r);
    }
    const mine = [
      { doc: 'feed', vars: { room: picks[0] } },
      { doc: 'feed', vars: { room: picks[1] } },
      { doc: 'feed', vars: { room: picks[2] } },
      { doc: 'badge', vars: { room: picks[0] } },
      { doc: 'badge', vars: { room: picks[1] } },
      { doc: 'badge', vars: { room: picks[2] } },
      { doc: 'mine', vars: { room: picks[0], author: userName(u) } },
      { doc: 'mine', vars: { room: picks[1], author: userName(u) } },
      { doc: 'orgRooms', vars: {} },
      { doc: 'orgRecent', vars: {} },
    ];
    for (const s of mine) if (plan.length < subs) plan.push({ user: u, ...s });
  }
  return { users, plan };
}

/** Each user's JWT: role authenticated, its own sub, its org in app_metadata (valid 2 h). */
export async function userTokens(jwtSecret, users) {
  const out = [];
  for (let u = 0; u < users; u++)
    out.push(
      await signJwt(
        jwtSecret,
        { sub: userName(u), role: 'authenticated', app_metadata: { org_id: userOrg(u) } },
        { expiresInSeconds: 7200 },
      ),
    );
  return out;
}

/**
 * Whether a live query's result must reflect a write (a `log` entry of writer.mjs: `room`, `org`,
 * `author`, `orgTop` = the written row is among its org's 10 latest messages). Inserts add a room's
 * newest message; updates rewrite a room's newest message; so every write is the newest of its
 * room, and shows in that room's feed and badge, in its author's `mine` of that room, in the
 * org's orgRooms, and (when orgTop) in the org's orgRecent.
 */
export function expects(sub, write) {
  switch (sub.doc) {
    case 'feed':
    case 'badge':
      return write.room === sub.vars.room;
    case 'mine':
      return write.room === sub.vars.room && write.author === sub.vars.author;
    case 'orgRooms':
      return write.org === userOrg(sub.user);
    case 'orgRecent':
      return write.org === userOrg(sub.user) && write.orgTop;
    default:
      return false;
  }
}

/**
 * A message body's stamp: writes are `w<seq> o<org> …` (writer.mjs), seeded rows `s<n> o<org> …`.
 * Adds to `acc` ({ max: highest write seq seen, foreign: rows of another org than `acc.org`}).
 */
function readBody(body, acc) {
  const sp = body.indexOf(' ');
  if (body.charCodeAt(sp + 1) === 111 /* o */) {
    const org = Number(body.slice(sp + 2, body.indexOf(' ', sp + 2)));
    if (org !== acc.org) acc.foreign++;
  }
  if (body.charCodeAt(0) === 119 /* w */) {
    const seq = Number(body.slice(1, sp));
    if (seq > acc.max) acc.max = seq;
  }
}

/** The stamps of a parsed result (graphql-ws hands results parsed): every `body` field in it. */
export function stampsOfValue(value, org) {
  const acc = { max: -1, foreign: 0, org };
  const walk = (v) => {
    if (Array.isArray(v)) for (const x of v) walk(x);
    else if (v && typeof v === 'object')
      for (const k in v) {
        const x = v[k];
        if (k === 'body' && typeof x === 'string') readBody(x, acc);
        else if (x && typeof x === 'object') walk(x);
      }
  };
  walk(value);
  return acc;
}

/** The same from a result's JSON text (the naive poller reads the HTTP body without parsing it). */
export function stampsOfText(text, org) {
  const acc = { max: -1, foreign: 0, org };
  const re = /"body"\s*:\s*"([^"]*)"/g;
  for (let m = re.exec(text); m; m = re.exec(text)) readBody(m[1], acc);
  return acc;
}
