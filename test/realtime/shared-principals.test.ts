/**
 * Which groups of a refresh run as one principal, in one transaction (run-groups.ts
 * sharedPrincipals): a group joins a principal with its role and the values of the claims its key
 * holds; every claim must agree for a group that reads them all.
 */
import { describe, expect, it } from 'vitest';
import type { Principal } from '../../src/db/with-role.js';
import type { Group, VarSet } from '../../src/realtime/live-groups.js';
import type { ClaimsRead } from '../../src/realtime/claims-read.js';
import { sharedPrincipals } from '../../src/realtime/run-groups.js';

const ORG = JSON.stringify(['app_metadata', 'org_id']);
const SUB = JSON.stringify(['sub']);

function run(name: string, principal: Principal, claims: ClaimsRead) {
  const g = { key: name, principal } as unknown as Group;
  const set = { group: g, scope: { claims } } as unknown as VarSet;
  return { g, sets: [set] };
}
const user = (sub: string, org: string, role = 'authenticated'): Principal => ({
  role,
  claims: { sub, role, app_metadata: { org_id: org } },
});

describe('groups sharing a principal', () => {
  it("an org's documents keyed by its claim share the first one's principal; another org, a role or a read of sub do not", () => {
    const a1 = user('a1', 'acme');
    const buckets = sharedPrincipals([
      run('feed acme', a1, new Set([ORG])),
      run('rooms globex', user('g1', 'globex'), new Set([ORG])),
      run('rooms acme', user('a2', 'acme'), new Set([ORG])),
      run('mine a3', user('a3', 'acme'), new Set([ORG, SUB])),
      run('recent acme (service)', user('a4', 'acme', 'service_role'), new Set([ORG])),
      run('no claims', user('a5', 'acme'), new Set()),
    ]);
    expect(buckets.map((b) => b.runs.map((r) => r.g.key))).toEqual([
      ['feed acme', 'rooms acme', 'no claims'],
      ['rooms globex'],
      ['mine a3'],
      ['recent acme (service)'],
    ]);
    expect(buckets[0]?.principal).toBe(a1);
  });

  it('a bucket made after a group of other claim paths still takes the later groups it fits', () => {
    const buckets = sharedPrincipals([
      run('mine a3', user('a3', 'acme'), new Set([ORG, SUB])),
      run('rooms globex', user('g1', 'globex'), new Set([ORG])),
      run('mine g1', user('g1', 'globex'), new Set([ORG, SUB])),
      run('recent acme', user('a9', 'acme'), new Set([ORG])),
    ]);
    expect(buckets.map((b) => b.runs.map((r) => r.g.key))).toEqual([
      ['mine a3', 'recent acme'],
      ['rooms globex', 'mine g1'],
    ]);
  });

  it('a group that reads every claim joins only a principal of the very same claims', () => {
    const a1 = user('a1', 'acme');
    const buckets = sharedPrincipals([
      run('all a1', a1, 'all'),
      run('all a1 again', user('a1', 'acme'), 'all'),
      run('all a2', user('a2', 'acme'), 'all'),
    ]);
    expect(buckets.map((b) => b.runs.map((r) => r.g.key))).toEqual([['all a1', 'all a1 again'], ['all a2']]);
  });
});
