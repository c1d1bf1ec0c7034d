/**
 * Strata `partitioned_tables` (opt-in per schema): a partitioned table is one collection and its
 * partitions are hidden, on a DVD-rental-like schema — `payment` partitioned by month with its
 * foreign keys declared on the partitions only, `rental` with its key declared on the parent.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Env } from './harness.js';
import { strataSuite } from './strata-suite.js';
import { work } from './wire-tap.js';

const SUB = `current_setting('request.jwt.claims', true)::jsonb ->> 'sub'`;
const suite = strataSuite(`
    comment on schema public is '@graphql({"inflect_names": true, "introspection": true, "strata": {"partitioned_tables": true, "related_filters": true, "upsert": true}})';
    create schema plain;
    comment on schema plain is '@graphql({"inflect_names": true, "introspection": true})';
    create table plain.reading (id int, taken date, primary key (id, taken)) partition by range (taken);
    create table plain.reading_2022 partition of plain.reading for values from ('2022-01-01') to ('2023-01-01');
    create table customer (customer_id serial primary key, email text not null);
    create table staff (staff_id serial primary key, name text not null);
    create table payment (
      payment_id serial,
      customer_id int not null,
      staff_id int not null,
      amount numeric(5, 2) not null,
      payment_date timestamptz not null,
      primary key (payment_date, payment_id)
    ) partition by range (payment_date);
    create table payment_p2022_01 partition of payment for values from ('2022-01-01') to ('2022-02-01');
    create table payment_p2022_02 partition of payment for values from ('2022-02-01') to ('2022-03-01');
    alter table payment_p2022_01 add foreign key (customer_id) references customer;
    alter table payment_p2022_02 add foreign key (customer_id) references customer;
    -- on one partition only: not a relationship of payment
    alter table payment_p2022_01 add foreign key (staff_id) references staff;
    create table rental (
      rental_id int not null,
      rental_date date not null,
      customer_id int not null references customer,
      primary key (rental_id, rental_date)
    ) partition by range (rental_date);
    create table rental_2022 partition of rental for values from ('2022-01-01') to ('2023-01-01');
    create table rental_note (
      id serial primary key, rental_id int not null, rental_date date not null, body text,
      foreign key (rental_id, rental_date) references rental
    );
    create table event (id int, at date, kind text, primary key (id, at, kind)) partition by range (at);
    create table event_2022 partition of event for values from ('2022-01-01') to ('2023-01-01') partition by list (kind);
    create table event_2022_a partition of event_2022 for values in ('a');
    create function big_payments(at_least numeric) returns setof payment stable language sql
      as $$ select * from payment where amount >= at_least $$;
    insert into customer (email) values ('alice'), ('bob');
    insert into staff (name) values ('Mike');
    insert into payment (customer_id, staff_id, amount, payment_date) values
      (1, 1, 1.99, '2022-01-05'), (2, 1, 2.99, '2022-01-20'), (1, 1, 3.99, '2022-02-03'), (2, 1, 4.99, '2022-02-14');
    insert into rental (rental_id, rental_date, customer_id) values (1, '2022-03-01', 1);
    insert into rental_note (rental_id, rental_date, body) values (1, '2022-03-01', 'late');
    alter table payment enable row level security;
    create policy own on payment for all to authenticated
      using (customer_id in (select customer_id from customer where email = ${SUB}))
      with check (customer_id in (select customer_id from customer where email = ${SUB}));
    create policy everything on payment for all to service_role, anon using (true) with check (true);
    grant usage on schema plain to anon, authenticated, service_role;
    grant select on all tables in schema plain to anon, authenticated, service_role;
    revoke all on all tables in schema public from anon;
    grant select on all tables in schema public to anon;
    grant all on all tables in schema public to authenticated, service_role;
    grant usage on all sequences in schema public to authenticated, service_role;
  `);
const { sent, as } = suite;
let env: Env;
beforeAll(() => {
  env = suite.env();
});

type Fields = { data: { __type: { fields: { name: string }[] } | null } };
const fieldsOf = async (type: string) =>
  ((await env.gql(`{ __type(name: "${type}") { fields { name } } }`)) as Fields).data.__type?.fields.map(
    (f) => f.name,
  );
const PAGE = `query P($after: Cursor) { paymentCollection(first: 3, after: $after) {
  edges { cursor node { amount customer { email } } } pageInfo { hasNextPage endCursor } } }`;
type Page = {
  data: {
    paymentCollection: {
      edges: { cursor: string; node: { amount: string; customer: { email: string } } }[];
      pageInfo: { hasNextPage: boolean; endCursor: string };
    };
  };
};
const amounts = (p: Page) => p.data.paymentCollection.edges.map((e) => e.node.amount);
const INSERT = (objects: string) =>
  `mutation { insertIntoPaymentCollection(objects: ${objects}) { affectedCount records { paymentId amount } } }`;
const partitionsOf = async () =>
  (
    await env.client.query(
      'select tableoid::regclass::text as p, amount from payment where current_user = current_user order by amount',
    )
  ).rows.map((r) => `${r.p}:${r.amount}`);

describe('schema', () => {
  it('the parent is one collection with the keys of every partition (or its own); partitions hidden', async () => {
    await as('service_role');
    const query = await fieldsOf('Query');
    expect(query).toEqual(expect.arrayContaining(['paymentCollection', 'rentalCollection']));
    expect(query?.filter((f) => /2022Collection|P2022/.test(f))).toEqual(['reading2022Collection']);
    // Sub-partitions too: only the root is a collection.
    expect(query).toContain('eventCollection');
    expect(await fieldsOf('PaymentP202201')).toBeUndefined();
    // customer_id's key is on both partitions, staff_id's on one only.
    expect(await fieldsOf('Payment')).toEqual([
      'nodeId',
      'paymentId',
      'customerId',
      'staffId',
      'amount',
      'paymentDate',
      'customer',
    ]);
    expect(await fieldsOf('Customer')).toEqual([
      'nodeId',
      'customerId',
      'email',
      'paymentCollection',
      'rentalCollection',
    ]);
    expect(await fieldsOf('Staff')).toEqual(['nodeId', 'staffId', 'name']);
    // A key declared on the parent, and one referencing the parent.
    expect(await fieldsOf('Rental')).toEqual([
      'nodeId',
      'rentalId',
      'rentalDate',
      'customerId',
      'customer',
      'rentalNoteCollection',
    ]);
    expect(await fieldsOf('RentalNote')).toContain('rental');
  });
  it('a schema without the switch keeps pg_graphql: partitions are collections, the parent is not', async () => {
    await as('anon');
    const query = await fieldsOf('Query');
    expect(query).toContain('reading2022Collection');
    expect(query).not.toContain('readingCollection');
  });
});

describe('reads', () => {
  it('service_role pages across partitions by the parent primary key; stable cursors; one statement', async () => {
    await as('service_role');
    sent.length = 0;
    const first = (await env.gql(PAGE)) as Page;
    expect(work(sent)).toHaveLength(1);
    expect(amounts(first)).toEqual(['1.99', '2.99', '3.99']);
    expect(first.data.paymentCollection.edges.map((e) => e.node.customer.email)).toEqual([
      'alice',
      'bob',
      'alice',
    ]);
    expect(first.data.paymentCollection.pageInfo.hasNextPage).toBe(true);
    const next = (await env.gql(PAGE, { after: first.data.paymentCollection.pageInfo.endCursor })) as Page;
    expect(amounts(next)).toEqual(['4.99']);
    // The same row has the same cursor whichever page or partition it is read from.
    const third = first.data.paymentCollection.edges[2];
    const second = (await env.gql(PAGE, {
      after: first.data.paymentCollection.edges[1]?.cursor,
    })) as Page;
    expect(second.data.paymentCollection.edges[0]?.cursor).toBe(third?.cursor);
    // The to-many side and nodeId reach the same rows through the parent.
    const nested = (await env.gql(
      '{ customerCollection(filter: {email: {eq: "bob"}}) { edges { node { paymentCollection { edges { node { nodeId amount } } } } } } }',
    )) as {
      data: {
        customerCollection: {
          edges: { node: { paymentCollection: { edges: { node: { nodeId: string; amount: string } }[] } } }[];
        };
      };
    };
    const bobs = nested.data.customerCollection.edges[0]?.node.paymentCollection.edges ?? [];
    expect(bobs.map((e) => e.node.amount)).toEqual(['2.99', '4.99']);
    const byId = await env.gql(`{ node(nodeId: "${bobs[1]?.node.nodeId}") { ... on Payment { amount } } }`);
    expect(byId).toEqual({ data: { node: { amount: '4.99' } } });
  });
  it('authenticated: the parent RLS policy applies to every partition', async () => {
    await as('authenticated', 'bob');
    expect(amounts((await env.gql(PAGE)) as Page)).toEqual(['2.99', '4.99']);
  });
  it('anon reads every partition through the parent; no mutation without INSERT', async () => {
    await as('anon');
    expect(amounts((await env.gql(PAGE)) as Page)).toEqual(['1.99', '2.99', '3.99']);
    expect(
      await env.gql(INSERT('[{customerId: 1, staffId: 1, amount: "1", paymentDate: "2022-01-02"}]')),
    ).toEqual({
      data: null,
      errors: [{ message: 'Unknown type Mutation' }],
    });
  });
});

describe('with the other switches', () => {
  it('a set-returning function of the parent is a connection; related filters see the parent RLS', async () => {
    await as('service_role');
    sent.length = 0;
    expect(await env.gql('{ bigPayments(atLeast: "3") { edges { node { amount } } } }')).toEqual({
      data: { bigPayments: { edges: [{ node: { amount: '3.99' } }, { node: { amount: '4.99' } }] } },
    });
    expect(work(sent)).toHaveLength(1);
    const q =
      '{ customerCollection(filter: {paymentCollection: {some: {amount: {gt: "4"}}}}) { edges { node { email } } } }';
    expect(await env.gql(q)).toEqual({
      data: { customerCollection: { edges: [{ node: { email: 'bob' } }] } },
    });
    await env.client.query('rollback');
    // Bob's payments are hidden from alice: they do not count.
    await as('authenticated', 'alice');
    expect(await env.gql(q)).toEqual({ data: { customerCollection: { edges: [] } } });
  });
  it('upsert on the parent primary key updates the row in its partition; one statement', async () => {
    await as('service_role');
    sent.length = 0;
    const res = await env.gql(
      `mutation { insertIntoRentalCollection(
        objects: [{rentalId: 1, rentalDate: "2022-03-01", customerId: 2}, {rentalId: 2, rentalDate: "2022-04-01", customerId: 1}],
        onConflict: {constraint: rental_pkey, updateColumns: [customerId]}) { affectedCount records { rentalId customerId } } }`,
    );
    expect(work(sent)).toHaveLength(1);
    expect(res).toEqual({
      data: {
        insertIntoRentalCollection: {
          affectedCount: 2,
          records: [
            { rentalId: 1, customerId: 2 },
            { rentalId: 2, customerId: 1 },
          ],
        },
      },
    });
    const rows = await env.client.query(
      'select tableoid::regclass::text as p, rental_id, customer_id from rental order by rental_id',
    );
    expect(rows.rows.map((r) => `${r.p}:${r.rental_id}:${r.customer_id}`)).toEqual([
      'rental_2022:1:2',
      'rental_2022:2:1',
    ]);
  });
});

describe('inserts', () => {
  it('service_role: rows route to their partitions; one statement', async () => {
    await as('service_role');
    sent.length = 0;
    const res = (await env.gql(
      INSERT(
        '[{customerId: 1, staffId: 1, amount: "5.5", paymentDate: "2022-01-31T10:00:00Z"}, {customerId: 2, staffId: 1, amount: "6.5", paymentDate: "2022-02-01T10:00:00Z"}]',
      ),
    )) as { data: { insertIntoPaymentCollection: { affectedCount: number } } };
    expect(work(sent)).toHaveLength(1);
    expect(res.data.insertIntoPaymentCollection.affectedCount).toBe(2);
    expect(await partitionsOf()).toEqual([
      'payment_p2022_01:1.99',
      'payment_p2022_01:2.99',
      'payment_p2022_02:3.99',
      'payment_p2022_02:4.99',
      'payment_p2022_01:5.50',
      'payment_p2022_02:6.50',
    ]);
  });
  it('authenticated with RLS: her own payment is written; another customer’s is refused and nothing written', async () => {
    await as('authenticated', 'alice');
    const ok = await env.gql(INSERT('[{customerId: 1, staffId: 1, amount: "7", paymentDate: "2022-02-20"}]'));
    expect(ok).toMatchObject({ data: { insertIntoPaymentCollection: { affectedCount: 1 } } });
    await env.client.query('savepoint s');
    const denied = (await env.gql(
      INSERT(
        '[{customerId: 1, staffId: 1, amount: "8", paymentDate: "2022-02-21"}, {customerId: 2, staffId: 1, amount: "9", paymentDate: "2022-01-21"}]',
      ),
    )) as { data: unknown; errors: { message: string }[] };
    expect(denied.data).toBeNull();
    expect(denied.errors[0]?.message).toMatch(/row-level security/);
    await env.client.query('rollback to savepoint s');
    await env.client.query('reset role');
    expect((await partitionsOf()).filter((r) => /:[789]\./.test(r))).toEqual(['payment_p2022_02:7.00']);
  });
  it('bad input: a row no partition accepts is a GraphQL error and nothing is written', async () => {
    await as('service_role');
    await env.client.query('savepoint s');
    const res = await env.gql(
      INSERT(
        '[{customerId: 1, staffId: 1, amount: "1", paymentDate: "2022-01-09"}, {customerId: 1, staffId: 1, amount: "1", paymentDate: "2030-01-01"}]',
      ),
    );
    expect(res).toEqual({
      data: null,
      errors: [{ message: expect.stringMatching(/^no partition of relation "payment" found for row/) }],
    });
    await env.client.query('rollback to savepoint s');
    expect(await partitionsOf()).toHaveLength(4);
  });
});
