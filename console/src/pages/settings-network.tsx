/** Settings → network: banned addresses (unban) and the database's allowed CIDRs (apply). */
import { useState } from 'react';
import { management } from '../api';
import { attempt, ErrorText, Field } from '../form';
import { useLoad } from '../use-load';

export function NetworkBans({ projectRef }: { projectRef: string }) {
  const bans = useLoad(
    () =>
      management<{ banned_ipv4_addresses: string[] }>(
        'POST',
        `/projects/${projectRef}/network-bans/retrieve`,
      ),
    [projectRef],
  );
  const [error, setError] = useState<string>();
  const unban = (ip: string) =>
    attempt(async () => {
      await management('DELETE', `/projects/${projectRef}/network-bans`, { ipv4_addresses: [ip] });
      bans.reload();
    }, setError);
  const list = bans.data?.banned_ipv4_addresses ?? [];
  return (
    <section className="card">
      <h2>Network bans</h2>
      <ErrorText error={bans.error ?? error} />
      {bans.data && list.length === 0 && <p className="muted">No banned addresses.</p>}
      <ul>
        {list.map((ip) => (
          <li key={ip}>
            <code>{ip}</code>{' '}
            <button type="button" onClick={() => void unban(ip)}>
              Unban
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

interface Restrictions {
  status?: string;
  detail?: string;
  config?: { dbAllowedCidrs?: string[]; dbAllowedCidrsV6?: string[] };
}

export function NetworkRestrictions({ projectRef }: { projectRef: string }) {
  const current = useLoad(
    () => management<Restrictions>('GET', `/projects/${projectRef}/network-restrictions`),
    [projectRef],
  );
  return (
    <section className="card">
      <h2>Network restrictions</h2>
      <ErrorText error={current.error} />
      {current.data && (
        <RestrictionsForm
          key={JSON.stringify(current.data.config)}
          projectRef={projectRef}
          initial={current.data}
          onApplied={current.reload}
        />
      )}
    </section>
  );
}

function RestrictionsForm({
  projectRef,
  initial,
  onApplied,
}: {
  projectRef: string;
  initial: Restrictions;
  onApplied: () => void;
}) {
  const [v4, setV4] = useState((initial.config?.dbAllowedCidrs ?? []).join(', '));
  const [v6, setV6] = useState((initial.config?.dbAllowedCidrsV6 ?? []).join(', '));
  const [error, setError] = useState<string>();
  const split = (s: string) =>
    s
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean);
  const apply = (e: React.FormEvent) => {
    e.preventDefault();
    void attempt(async () => {
      await management('POST', `/projects/${projectRef}/network-restrictions/apply`, {
        dbAllowedCidrs: split(v4),
        dbAllowedCidrsV6: split(v6),
      });
      onApplied();
    }, setError);
  };
  return (
    <form className="grid-form" onSubmit={apply}>
      <p className="muted">
        Status: {initial.status ?? 'unknown'}
        {initial.detail ? ` (${initial.detail})` : ''}
      </p>
      <Field label="Allowed IPv4 CIDRs">
        <input name="cidrs-v4" value={v4} onChange={(e) => setV4(e.target.value)} />
      </Field>
      <Field label="Allowed IPv6 CIDRs">
        <input name="cidrs-v6" value={v6} onChange={(e) => setV6(e.target.value)} />
      </Field>
      <ErrorText error={error} />
      <button type="submit">Apply restrictions</button>
    </form>
  );
}
