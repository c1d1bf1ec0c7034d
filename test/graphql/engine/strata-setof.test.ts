/**
 * Strata `setof_scalars` (opt-in per schema): functions returning `setof` a scalar or array as list
 * fields, paged with `first` / `offset` under the schema's `max_rows` as a connection is.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Env } from './harness.js';
import { strataSuite } from './strata-suite.js';
import { work } from './wire-tap.js';

const suite = strataSuite(`
    comment on schema public is '@graphql({"inflect_names": true, "introspection": true, "max_rows": 4, "strata": {"setof_scalars": true}})';
    create schema plain;
    comment on schema plain is '@graphql({"inflect_names": true, "introspection": true})';
    create function plain.plain_numbers() returns setof int stable language sql as $$ select 1 $$;
    create table tag (id serial primary key, name text not null, owner text not null);
    insert into tag (name, owner) values ('b', 'alice'), ('a', 'alice'), ('c', 'bob');
    alter table tag enable row level security;
    create policy own on tag for select to authenticated
      using (owner = current_setting('request.jwt.claims', true)::jsonb ->> 'sub');
    create policy everything on tag for select to service_role using (true);
    create function tag_names() returns setof text stable language sql as $$ select name from tag order by name $$;
    create function countdown(n int) returns setof int immutable language sql as $$ select generate_series(n, 1, -1) $$;
    create function pairs() returns setof int[] immutable language sql as $$ values (array[1, 2]), (null), (array[3]) $$;
    create function _letters(t tag) returns setof text stable language sql as $$ select regexp_split_to_table(t.name || 'x', '') $$;
    create function firsts(first int) returns setof int immutable language sql as $$ select first $$;
    create function stamp(v text) returns setof text volatile language sql as $$ select v union all select v || '!' $$;
    grant usage on schema plain to anon, authenticated, service_role;
    grant select on tag to anon, authenticated, service_role;
  `);
const { sent, as } = suite;
let env: Env;
beforeAll(() => {
  env = suite.env();
});

describe('setof scalar functions', () => {
  it('schema: list fields on Query, Mutation and the table type; not in a schema without the switch', async () => {
    await as('service_role');
    const res = (await env.gql(
      `{ q: __type(name: "Query") { fields { name type { kind ofType { name kind } } } } m: __type(name: "Mutation") { fields { name } } }`,
    )) as {
      data: {
        q: { fields: { name: string; type: { kind: string; ofType: { name: string } } }[] };
        m: { fields: { name: string }[] };
      };
    };
    const q = Object.fromEntries(res.data.q.fields.map((f) => [f.name, f.type]));
    expect(q.tagNames).toEqual({ kind: 'LIST', ofType: { name: 'String', kind: 'SCALAR' } });
    expect(q.countdown?.kind).toBe('LIST');
    expect(q.plainNumbers).toBeUndefined();
    expect(res.data.m.fields.map((f) => f.name)).toContain('stamp');
    // An argument named as a paging argument leaves the function out, as for a connection.
    expect(q.firsts).toBeUndefined();
  });
  it('schema: list fields take first and offset', async () => {
    await as('anon');
    const res = (await env.gql(
      `{ q: __type(name: "Query") { fields { name args { name type { name } } } } t: __type(name: "Tag") { fields { name args { name } } } }`,
    )) as {
      data: {
        q: { fields: { name: string; args: { name: string; type: { name: string } }[] }[] };
        t: { fields: { name: string; args: { name: string }[] }[] };
      };
    };
    const args = (fields: { name: string; args: { name: string }[] }[], name: string) =>
      fields.find((f) => f.name === name)?.args;
    expect(args(res.data.q.fields, 'countdown')).toEqual([
      { name: 'n', type: { name: null } }, // Int!
      { name: 'first', type: { name: 'Int' } },
      { name: 'offset', type: { name: 'Int' } },
    ]);
    expect(args(res.data.t.fields, 'letters')?.map((a) => a.name)).toEqual(['first', 'offset']);
  });
  it('values in order, arrays and nulls kept, computed fields; one statement', async () => {
    await as('service_role');
    sent.length = 0;
    expect(await env.gql('{ countdown(n: 3) pairs }')).toEqual({
      data: { countdown: [3, 2, 1], pairs: [[1, 2], null, [3]] },
    });
    expect(work(sent)).toHaveLength(2);
    expect(await env.gql('{ countdown(n: 0) }')).toEqual({ data: { countdown: [] } });
    expect(await env.gql('{ tagCollection(first: 1) { edges { node { letters } } } }')).toEqual({
      data: { tagCollection: { edges: [{ node: { letters: ['b', 'x'] } }] } },
    });
    expect(await env.gql('mutation { stamp(v: "k") }')).toEqual({ data: { stamp: ['k', 'k!'] } });
  });
  it('paging: first and offset in the function order, max_rows as the most; one statement', async () => {
    await as('service_role');
    sent.length = 0;
    expect(await env.gql('{ countdown(n: 9, first: 2, offset: 3) }')).toEqual({
      data: { countdown: [6, 5] },
    });
    expect(work(sent)).toHaveLength(1);
    expect(
      await env.gql('{ a: countdown(n: 9) b: countdown(n: 9, first: 50) c: countdown(n: 9, offset: 7) }'),
    ).toEqual({
      data: { a: [9, 8, 7, 6], b: [9, 8, 7, 6], c: [2, 1] },
    });
    expect(
      await env.gql('query Q($f: Int, $o: Int) { countdown(n: 3, first: $f, offset: $o) }', { f: 0, o: 1 }),
    ).toEqual({ data: { countdown: [] } });
    expect(await env.gql('{ tagCollection(first: 1) { edges { node { letters(offset: 1) } } } }')).toEqual({
      data: { tagCollection: { edges: [{ node: { letters: ['x'] } }] } },
    });
    expect(await env.gql('mutation { stamp(v: "k", first: 1) }')).toEqual({ data: { stamp: ['k'] } });
  });
  it('paging under RLS: service_role, authenticated, anon', async () => {
    await as('service_role');
    sent.length = 0;
    expect(await env.gql('{ tagNames(offset: 1, first: 1) }')).toEqual({ data: { tagNames: ['b'] } });
    expect(work(sent)).toHaveLength(1);
    await env.client.query('rollback');
    await as('authenticated', 'alice');
    expect(await env.gql('{ tagNames(offset: 1) }')).toEqual({ data: { tagNames: ['b'] } });
    await env.client.query('rollback');
    await as('anon');
    expect(await env.gql('{ tagNames(first: 2) }')).toEqual({ data: { tagNames: [] } });
  });
  it('RLS decides what the function reads: service_role, authenticated, anon', async () => {
    await as('service_role');
    expect(await env.gql('{ tagNames }')).toEqual({ data: { tagNames: ['a', 'b', 'c'] } });
    await env.client.query('rollback');
    await as('authenticated', 'bob');
    expect(await env.gql('{ tagNames }')).toEqual({ data: { tagNames: ['c'] } });
    await env.client.query('rollback');
    await as('anon');
    expect(await env.gql('{ tagNames }')).toEqual({ data: { tagNames: [] } });
  });
  it('bad input is a GraphQL error', async () => {
    await as('anon');
    expect(await env.gql('{ countdown(n: "x") }')).toEqual({
      data: null,
      errors: [{ message: 'Invalid input for Int type' }],
    });
    expect(await env.gql('{ countdown(n: 3, first: -1) }')).toEqual({
      data: null,
      errors: [{ message: '`first` must be an unsigned integer' }],
    });
    expect(await env.gql('{ countdown(n: 3, offset: 1.5) }')).toEqual({
      data: null,
      errors: [{ message: 'Invalid input for Int type' }],
    });
    expect(await env.gql('{ countdown(n: 3, last: 1) }')).toEqual({
      data: null,
      errors: [{ message: 'Input contains extra keys ["last"]' }],
    });
    expect(await env.gql('{ tagCollection { edges { node { letters(after: "x") } } } }')).toEqual({
      data: null,
      errors: [{ message: 'Input contains extra keys ["after"]' }],
    });
  });
});
