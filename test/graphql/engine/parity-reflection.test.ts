/**
 * pg_graphql parity: which entities are reflected (views without a key, partitions), name
 * precedence on a node type, domains and enum labels that are not GraphQL names.
 * Derived from pg_graphql 1.6's rules (sql_types.rs, graphql.rs, load_sql_context.sql).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupEnv, type Env } from './harness.js';

const SCHEMA = `
comment on schema public is '@graphql({"inflect_names": true, "introspection": true})';
create table author (id int primary key, name text not null, code text unique);
create table book (id int primary key, author_id int references author(id), title text);
insert into author values (1, 'ann', 'A1'), (2, 'bob', 'B2');
insert into book values (10, 1, 'one'), (11, 1, 'two'), (12, 2, 'three');

-- a view and a materialized view without a key, and one with primary_key_columns
create view author_nokey as select id, name from author;
create materialized view author_mat as select id, name from author;
create view author_keyed as select id, name from author;
comment on view author_keyed is '@graphql({"primary_key_columns": ["id"]})';
-- a key named by a column whose GraphQL name is invalid (pg_graphql omit_weird_names): the
-- column is left out of every type, the entity keeps its key
create view odd_key as select id as "1st", name from author;
comment on view odd_key is '@graphql({"primary_key_columns": ["1st"]})';
create table xyz ("! q" int primary key);
insert into xyz values (7);
-- foreign keys over such columns: a relationship when its field name is a GraphQL name
create table review (id int primary key, "! author" int references author(id), body text);
insert into review values (1, 2, 'fine');
create table memo (id int primary key, "x!_id" int references author(id));

-- a table without a key that a keyed table references through a unique column
create table tag (code text unique, label text);
create table tagged (id int primary key, tag_code text references tag(code));
insert into tag values ('x', 'X'); insert into tagged values (1, 'x');

-- functions over the view without a key: a root field is left out (one row or a set); a computed
-- field returning one row of it stays
create function first_nokey() returns author_nokey stable language sql as $$ select * from author_nokey order by id limit 1 $$;
create function writer(b book) returns author_nokey stable language sql as $$ select * from author_nokey where id = b.author_id $$;
create function all_nokey() returns setof author_nokey stable language sql as $$ select * from author_nokey $$;
create function all_keyed() returns setof author_keyed stable language sql as $$ select * from author_keyed $$;

-- partitioned table with keys declared on the parent (cloned to each partition)
create table payment (id int, author_id int references author(id), amount int, paid date, primary key (id, paid))
  partition by range (paid);
create table payment_2024 partition of payment for values from ('2024-01-01') to ('2025-01-01');
create table payment_2025 partition of payment for values from ('2025-01-01') to ('2026-01-01');
insert into payment values (1, 1, 5, '2024-03-01'), (2, 1, 7, '2025-03-01');

-- name precedence: column "label", relationship and computed field all wanting "label"/"owner"
create table pet (id int primary key, owner_id int references author(id), label text, owner text);
insert into pet values (1, 1, 'rex', 'ann-as-text');
create function _label(p pet) returns text stable language sql as $$ select upper(p.label) $$;

-- a two-column key whose first column alone is unique: one-to-one, as pg_graphql decides
create table shelf (a int, b int, primary key (a, b));
create table label (id int primary key, a int unique, b int, foreign key (a, b) references shelf(a, b));
insert into shelf values (1, 1); insert into label values (1, 1, 1);

-- domains
create domain posint as int check (value > 0);
create domain posint2 as posint;
create domain tags as text[];
create domain big as bigint;
create type mood as enum ('happy', 'sad');
create domain mood_d as mood;
-- a domain over an array of a domain no column uses, and a domain over that one
create domain dom_int as int;
create domain dom_int_array as dom_int[];
create domain dom_int_array2 as dom_int_array;
create table dom (id posint2 primary key, n posint, t tags, b big, m mood_d, ia dom_int_array, ia2 dom_int_array2);
insert into dom values (1, 5, '{a,b}', 9007199254740993, 'happy', '{3,4}', '{5}');
create function _twice(d dom) returns posint stable language sql as $$ select (d.n * 2)::posint $$;
create function halve(n posint) returns posint stable language sql as $$ select (n / 2)::posint $$;

-- enum labels that are not GraphQL names
create type rating as enum ('G', 'PG-13', 'NC 17');
create table film (id int primary key, rating rating);
insert into film values (1, 'PG-13'), (2, 'G');

-- serial columns: never in an insert or update input; a table of nothing else keeps its mutations
create table counter (id serial primary key);
create table ticket (id serial primary key, seat text);
-- serial as pg_get_serial_sequence decides: an owned sequence (identity of either kind, OWNED BY),
-- not a nextval default on a sequence the column does not own
create table job (id bigint generated by default as identity primary key, title text);
create table shift (id int generated always as identity primary key, title text);
create sequence free_seq;
create table ledger (id int primary key default nextval('free_seq'), note text);
create table stamp (id int primary key, note text);
create sequence stamp_seq owned by stamp.id;
`;

let env: Env;
beforeAll(async () => {
  env = await setupEnv(SCHEMA);
});
afterAll(() => env.close());

const typeNames = async () => {
  const r = (await env.gql('{ __schema { types { name } } }')) as {
    data: { __schema: { types: { name: string }[] } };
  };
  return r.data.__schema.types.map((t) => t.name);
};
const queryFields = async () => {
  const r = (await env.gql('{ __type(name: "Query") { fields { name } } }')) as {
    data: { __type: { fields: { name: string }[] } };
  };
  return r.data.__type.fields.map((f) => f.name);
};
const fieldsOf = async (type: string) => {
  const r = (await env.gql(
    `{ __type(name: "${type}") { fields { name type { name kind ofType { name kind } } } } }`,
  )) as {
    data: {
      __type: {
        fields: {
          name: string;
          type: { name: string | null; kind: string; ofType: { name: string } | null };
        }[];
      } | null;
    };
  };
  return r.data.__type?.fields ?? null;
};

describe('entities without a primary key', () => {
  it('views, materialized views without a key are not collections; primary_key_columns makes one', async () => {
    const q = await queryFields();
    expect(q).not.toContain('authorNokeyCollection');
    expect(q).not.toContain('authorMatCollection');
    expect(q).toContain('authorKeyedCollection');
    expect(await env.gql('{ authorNokeyCollection { edges { node { id } } } }')).toMatchObject({
      data: null,
    });
  });

  it('an entity whose key column has no GraphQL name keeps its key; the column has no field', async () => {
    // graphql.rs graphql_table_select_types_are_valid: a valid type name, a primary key (sql_types.rs
    // primary_key: real or primary_key_columns, by SQL name) and any column selectable.
    const q = await queryFields();
    expect(q).toContain('oddKeyCollection');
    expect(q).toContain('xyzCollection');
    // <T>ByPk needs an argument per key column, named as its field: none here.
    expect(q).not.toContain('oddKeyByPk');
    expect((await fieldsOf('Xyz'))?.map((f) => f.name)).toEqual(['nodeId']);
    expect((await fieldsOf('OddKey'))?.map((f) => f.name)).toEqual(['nodeId', 'name']);
    const page = (await env.gql(
      '{ oddKeyCollection(first: 1) { edges { cursor node { nodeId name } } } }',
    )) as {
      data: { oddKeyCollection: { edges: { cursor: string; node: { nodeId: string; name: string } }[] } };
    };
    const [edge] = page.data.oddKeyCollection.edges;
    expect(edge?.node.name).toBe('ann');
    const nodeId = edge?.node.nodeId as string;
    expect(JSON.parse(Buffer.from(nodeId, 'base64').toString())).toEqual(['public', 'odd_key', 1]);
    expect(await env.gql(`{ node(nodeId: "${nodeId}") { ... on OddKey { name } } }`)).toEqual({
      data: { node: { name: 'ann' } },
    });
    const next = await env.gql(
      `{ oddKeyCollection(first: 1, after: "${edge?.cursor}") { edges { node { name } } } }`,
    );
    expect(next).toEqual({ data: { oddKeyCollection: { edges: [{ node: { name: 'bob' } }] } } });
    // Its mutations exist (the role may insert and update a column) with input types of no fields.
    const m = (await env.gql('{ __type(name: "Mutation") { fields { name } } }')) as {
      data: { __type: { fields: { name: string }[] } };
    };
    expect(m.data.__type.fields.map((f) => f.name)).toContain('insertIntoXyzCollection');
    expect(
      await env.gql('mutation { insertIntoXyzCollection(objects: [{}]) { affectedCount } }'),
    ).toMatchObject({
      data: null,
      errors: [{ message: expect.stringContaining('null value in column "! q"') }],
    });
    expect(await env.gql('{ xyzCollection { edges { node { nodeId } } } }')).toEqual({
      data: {
        xyzCollection: {
          edges: [{ node: { nodeId: Buffer.from('["public", "xyz", 7]').toString('base64') } }],
        },
      },
    });
  });

  it('a foreign key over columns without GraphQL names is a relationship, when its own name is one', async () => {
    // sql_types.rs fkey_is_selectable: the key's columns by SQL name, selectable; the field is named
    // from the column ("! author" → author); "x!_id" would give "x!", which Strata leaves out.
    expect((await fieldsOf('Review'))?.map((f) => f.name)).toEqual(['nodeId', 'id', 'body', 'author']);
    expect((await fieldsOf('Memo'))?.map((f) => f.name)).toEqual(['nodeId', 'id']);
    expect(
      await env.gql(
        '{ reviewCollection { edges { node { body author { name reviewCollection { edges { node { id } } } } } } } }',
      ),
    ).toEqual({
      data: {
        reviewCollection: {
          edges: [
            {
              node: {
                body: 'fine',
                author: { name: 'bob', reviewCollection: { edges: [{ node: { id: 1 } }] } },
              },
            },
          ],
        },
      },
    });
    const author = (await fieldsOf('Author'))?.map((f) => f.name);
    expect(author).toContain('memoCollection');
  });

  it('relationships never lead to an entity without a key', async () => {
    const tagged = (await fieldsOf('Tagged'))?.map((f) => f.name);
    expect(tagged).toEqual(['nodeId', 'id', 'tagCode']);
    expect(await queryFields()).not.toContain('tagCollection');
  });

  it('a Query field returning it is left out, one row or a set; a computed field returning one row stays', async () => {
    const q = await queryFields();
    expect(q).not.toContain('firstNokey');
    expect(q).not.toContain('allNokey');
    expect(q).toContain('allKeyed');
    expect(await env.gql('{ firstNokey { id name } }')).toEqual({
      data: null,
      errors: [{ message: 'Unknown field "firstNokey" on type Query' }],
    });
    expect(
      await env.gql('{ bookCollection(filter: {id: {eq: 12}}) { edges { node { writer { id name } } } } }'),
    ).toEqual({
      data: { bookCollection: { edges: [{ node: { writer: { id: 2, name: 'bob' } } }] } },
    });
  });
});

describe('partitioned tables', () => {
  it('partitions are collections with the keys declared on the parent; the parent is not', async () => {
    const q = await queryFields();
    expect(q).toContain('payment2024Collection');
    expect(q).toContain('payment2025Collection');
    expect(q).not.toContain('paymentCollection');
    expect(await typeNames()).not.toContain('Payment');
    const res = await env.gql(
      '{ payment2025Collection { edges { node { id amount author { name } } } } authorByPk: authorCollection(filter: {id: {eq: 1}}) { edges { node { payment2024Collection { edges { node { amount } } } } } } }',
    );
    expect(res).toEqual({
      data: {
        payment2025Collection: { edges: [{ node: { id: 2, amount: 7, author: { name: 'ann' } } }] },
        authorByPk: { edges: [{ node: { payment2024Collection: { edges: [{ node: { amount: 5 } }] } } }] },
      },
    });
  });
});

describe('name precedence on a node type', () => {
  it('a computed field beats a column, a relationship beats a column', async () => {
    const fields = (await fieldsOf('Pet')) ?? [];
    const names = fields.map((f) => f.name);
    expect(names.filter((n) => n === 'label')).toHaveLength(1);
    expect(names.filter((n) => n === 'owner')).toHaveLength(1);
    expect(fields.find((f) => f.name === 'owner')?.type).toMatchObject({ name: 'Author', kind: 'OBJECT' });
    expect(await env.gql('{ petCollection { edges { node { label owner { name } ownerId } } } }')).toEqual({
      data: { petCollection: { edges: [{ node: { label: 'REX', owner: { name: 'ann' }, ownerId: 1 } }] } },
    });
  });
});

describe('one-to-one relationships', () => {
  it('a unique index inside the referencing columns makes the reverse side a single object', async () => {
    const shelf = (await fieldsOf('Shelf')) ?? [];
    expect(shelf.find((f) => f.name === 'label')?.type).toMatchObject({ kind: 'OBJECT', name: 'Label' });
    expect(await env.gql('{ shelfCollection { edges { node { label { id } } } } }')).toEqual({
      data: { shelfCollection: { edges: [{ node: { label: { id: 1 } } }] } },
    });
  });
});

describe('domains', () => {
  it('map to their base type, through domains of domains, arrays and enums', async () => {
    const fields = (await fieldsOf('Dom')) ?? [];
    const t = (n: string) => fields.find((f) => f.name === n)?.type;
    expect(t('id')).toMatchObject({ kind: 'NON_NULL', ofType: { name: 'Int' } });
    expect(t('n')).toMatchObject({ kind: 'SCALAR', name: 'Int' });
    expect(t('t')).toMatchObject({ kind: 'LIST', ofType: { name: 'String' } });
    expect(t('b')).toMatchObject({ kind: 'SCALAR', name: 'BigInt' });
    expect(t('m')).toMatchObject({ kind: 'ENUM', name: 'Mood' });
    expect(t('ia')).toMatchObject({ kind: 'LIST', ofType: { kind: 'SCALAR', name: 'Int' } });
    expect(t('ia2')).toMatchObject({ kind: 'LIST', ofType: { kind: 'SCALAR', name: 'Int' } });
    expect(
      await env.gql(
        '{ domCollection(filter: {n: {gt: 1}, b: {eq: "9007199254740993"}, ia: {contains: [3]}}) { edges { node { id n t b m ia ia2 } } } }',
      ),
    ).toEqual({
      data: {
        domCollection: {
          edges: [
            { node: { id: 1, n: 5, t: ['a', 'b'], b: '9007199254740993', m: 'happy', ia: [3, 4], ia2: [5] } },
          ],
        },
      },
    });
  });

  it('function results and arguments of a domain type are its base type; the domain check applies', async () => {
    const fields = (await fieldsOf('Dom')) ?? [];
    expect(fields.find((f) => f.name === 'twice')?.type).toMatchObject({ kind: 'SCALAR', name: 'Int' });
    expect(await env.gql('{ domCollection { edges { node { twice } } } halve(n: 8) }')).toEqual({
      data: { domCollection: { edges: [{ node: { twice: 10 } }] }, halve: 4 },
    });
    const bad = (await env.gql('{ halve(n: -8) }')) as { data: unknown; errors?: { message: string }[] };
    expect(bad.data).toBeNull();
    expect(bad.errors?.[0]?.message).toMatch(/posint/);
  });

  it('a domain check still applies to an insert', async () => {
    const res = (await env.gql(
      'mutation { insertIntoDomCollection(objects: [{id: 2, n: -1}]) { affectedCount } }',
    )) as {
      errors?: { message: string }[];
    };
    expect(res.errors?.[0]?.message).toMatch(/posint/);
  });
});

describe('enum labels that are not GraphQL names', () => {
  it('never break introspection: the labels are listed as they are, as pg_graphql lists them', async () => {
    const res = await env.gql('{ __type(name: "Rating") { kind enumValues { name } } }');
    expect(res).toEqual({
      data: { __type: { kind: 'ENUM', enumValues: [{ name: 'G' }, { name: 'PG-13' }, { name: 'NC 17' }] } },
    });
    expect(await typeNames()).toContain('Film');
  });

  it('values read and filter (through a variable) as their labels', async () => {
    expect(await env.gql('{ filmCollection { edges { node { id rating } } } }')).toEqual({
      data: {
        filmCollection: { edges: [{ node: { id: 1, rating: 'PG-13' } }, { node: { id: 2, rating: 'G' } }] },
      },
    });
    expect(
      await env.gql(
        'query($r: Rating) { filmCollection(filter: {rating: {eq: $r}}) { edges { node { id } } } }',
        {
          r: 'PG-13',
        },
      ),
    ).toEqual({ data: { filmCollection: { edges: [{ node: { id: 1 } }] } } });
  });
});

describe('serial columns in mutation inputs', () => {
  const inputFields = async (type: string) => {
    const r = (await env.gql(`{ __type(name: "${type}") { inputFields { name } } }`)) as {
      data: { __type: { inputFields: { name: string }[] } | null };
    };
    return r.data.__type?.inputFields.map((f) => f.name) ?? null;
  };

  it('are in neither InsertInput nor UpdateInput; a key that is not serial is in both', async () => {
    expect(await inputFields('TicketInsertInput')).toEqual(['seat']);
    expect(await inputFields('TicketUpdateInput')).toEqual(['seat']);
    expect(await inputFields('BookInsertInput')).toEqual(['id', 'authorId', 'title']);
    expect(await inputFields('BookUpdateInput')).toEqual(['id', 'authorId', 'title']);
    expect(await env.gql('mutation { updateTicketCollection(set: {id: 5}) { affectedCount } }')).toEqual({
      data: null,
      errors: [{ message: 'Input for type TicketUpdateInput contains extra keys ["id"]' }],
    });
  });

  it('serial means owning a sequence: identity columns of both kinds and OWNED BY are left out, a nextval default on a free sequence is not', async () => {
    expect(await inputFields('JobInsertInput')).toEqual(['title']);
    expect(await inputFields('JobUpdateInput')).toEqual(['title']);
    expect(await inputFields('ShiftInsertInput')).toEqual(['title']);
    expect(await inputFields('StampInsertInput')).toEqual(['note']);
    expect(await inputFields('StampUpdateInput')).toEqual(['note']);
    expect(await inputFields('LedgerInsertInput')).toEqual(['id', 'note']);
    expect(await inputFields('LedgerUpdateInput')).toEqual(['id', 'note']);
    expect(
      await env.gql('mutation { insertIntoJobCollection(objects: [{title: "a"}]) { records { id title } } }'),
    ).toEqual({ data: { insertIntoJobCollection: { records: [{ id: '1', title: 'a' }] } } });
    expect(
      await env.gql(
        'mutation { insertIntoJobCollection(objects: [{id: "7", title: "b"}]) { affectedCount } }',
      ),
    ).toEqual({
      data: null,
      errors: [{ message: 'Input for type JobInsertInput contains extra keys ["id"]' }],
    });
  });

  it('a table whose only column is serial keeps its insert and update mutations, with inputs of no fields', async () => {
    const r = (await env.gql('{ __type(name: "Mutation") { fields { name } } }')) as {
      data: { __type: { fields: { name: string }[] } };
    };
    const names = r.data.__type.fields.map((f) => f.name);
    expect(names).toContain('insertIntoCounterCollection');
    expect(names).toContain('updateCounterCollection');
    expect(await inputFields('CounterInsertInput')).toEqual([]);
    expect(await inputFields('CounterUpdateInput')).toEqual([]);
    expect(
      await env.gql(
        'mutation { insertIntoCounterCollection(objects: [{}, {}]) { affectedCount records { id } } }',
      ),
    ).toEqual({
      data: { insertIntoCounterCollection: { affectedCount: 2, records: [{ id: 1 }, { id: 2 }] } },
    });
    expect(await env.gql('mutation { updateCounterCollection(set: {}) { affectedCount } }')).toEqual({
      data: null,
      errors: [{ message: 'At least one mapping must be provided to set argument' }],
    });
  });
});
