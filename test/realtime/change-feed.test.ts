/**
 * The change feed's row changes (src/realtime/change-feed.ts, test-decoding.ts) as PostgreSQL's
 * test_decoding writes them, read back on the embedded server: names that need quotes, quotes and
 * newlines in values, NULLs, arrays, booleans and bit strings, an UPDATE that changed the key, a
 * DELETE, a TRUNCATE, and an unchanged TOASTed value left out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChangeFeed, tableKey, type ChangeFeed, type Commit } from '../../src/realtime/change-feed.js';
import { parseChangeLine } from '../../src/realtime/test-decoding.js';
import type { ProjectContext } from '../../src/platform/project-context.js';
import type { TestPlatform } from '../support/platform.js';
import { eventually } from '../support/eventually.js';
import { sql, startRealtimePlatform } from './support.js';

let tp: TestPlatform;
let project: ProjectContext;
let feed: ChangeFeed;
const commits: Commit[] = [];

beforeAll(async () => {
  ({ tp, project } = await startRealtimePlatform({ replication: true }));
  await sql(
    project,
    `create table public."Odd Name" ("the key" int primary key, "a""b" text, flags bool[], b bit(4), big text, n numeric);`,
  );
  feed = await startChangeFeed(
    project.superuserUrl,
    (c) => commits.push(c),
    () => {},
  );
});

afterAll(async () => {
  await feed?.close();
  await tp?.close();
});

async function next(count: number): Promise<Commit[]> {
  await eventually(() => commits.length >= count, { timeoutMs: 10_000, intervalMs: 20 });
  return commits.splice(0, count);
}

describe('change feed rows', () => {
  it('reads inserts, updates, deletes and truncates with their values', async () => {
    const long = 'x'.repeat(200_000);
    await sql(
      project,
      `insert into public."Odd Name" values (1, 'it''s a
 line', '{true,false}', B'1010', repeat('x', 200000), null)`,
    );
    const [ins] = await next(1);
    expect(ins?.tables).toEqual(new Set([tableKey('public', 'Odd Name')]));
    expect(ins?.xid).toEqual(expect.any(Number));
    expect(ins?.changes).toEqual([
      {
        schema: 'public',
        table: 'Odd Name',
        op: 'INSERT',
        new: { 'the key': '1', 'a"b': "it's a\n line", flags: '{t,f}', b: '1010', big: long, n: null },
        types: {
          'the key': 'integer',
          'a"b': 'text',
          flags: 'boolean[]',
          b: 'bit',
          big: 'text',
          n: 'numeric',
        },
      },
    ]);
    await sql(project, `update public."Odd Name" set n = 1.50 where "the key" = 1`);
    const [upd] = await next(1);
    // The TOASTed value did not change: it is left out of the new row.
    expect(upd?.changes?.[0]?.new).toEqual({
      'the key': '1',
      'a"b': "it's a\n line",
      flags: '{t,f}',
      b: '1010',
      n: '1.50',
    });
    expect(upd?.changes?.[0]?.old).toBeUndefined();
    await sql(project, `update public."Odd Name" set "the key" = 2 where "the key" = 1`);
    const [moved] = await next(1);
    expect(moved?.changes?.[0]).toMatchObject({
      op: 'UPDATE',
      old: { 'the key': '1' },
      new: { 'the key': '2' },
    });
    await sql(project, `delete from public."Odd Name" where "the key" = 2`);
    const [del] = await next(1);
    expect(del?.changes).toEqual([
      {
        schema: 'public',
        table: 'Odd Name',
        op: 'DELETE',
        old: { 'the key': '2' },
        types: { 'the key': 'integer' },
      },
    ]);
    await sql(project, `truncate public."Odd Name", public.note`);
    const [tr] = await next(1);
    expect(tr?.tables).toEqual(new Set([tableKey('public', 'Odd Name'), tableKey('public', 'note')]));
    expect(tr?.changes?.map((c) => c.op)).toEqual(['TRUNCATE', 'TRUNCATE']);
    expect(tr && del && tr.lsn > del.lsn).toBe(true);
  });

  it('reports a table without a key as changed, with no row data for a delete', () => {
    expect(parseChangeLine('table public.t: DELETE: (no-tuple-data)')).toEqual([
      { schema: 'public', table: 't', op: 'DELETE' },
    ]);
    expect(parseChangeLine('BEGIN')).toBeNull();
  });
});
