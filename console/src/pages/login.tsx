/** Sign in with a personal access token (checked against the Management API before it is kept). */
import { useState } from 'react';
import { API_ORIGIN, ApiError } from '../api';
import { ErrorText, Field } from '../form';

export function LoginPage({ notice, onSignedIn }: { notice?: string; onSignedIn: (token: string) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    setError(undefined);
    const t = token.trim();
    if (!/^sbp_(oauth_)?[a-f0-9]{40}$/.test(t)) {
      setError('An access token looks like sbp_ followed by 40 hexadecimal characters');
      return;
    }
    setBusy(true);
    try {
      const res = await fetch(`${API_ORIGIN}/v1/organizations`, {
        headers: { authorization: `Bearer ${t}` },
      });
      if (!res.ok)
        throw new ApiError(
          res.status,
          res.status === 401 ? 'Unknown or revoked access token' : `HTTP ${res.status}`,
        );
      onSignedIn(t);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main className="login">
      <h1>Strata console</h1>
      <ErrorText error={notice} />
      <form onSubmit={(e) => void submit(e)}>
        <Field label="Access token" error={error}>
          <input
            name="access-token"
            type="password"
            autoComplete="off"
            placeholder="sbp_…"
            value={token}
            onChange={(e) => setToken(e.target.value)}
          />
        </Field>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      <p className="muted">
        <code>npm start</code> prints a console link that signs you in; <code>strata tokens create</code>{' '}
        makes a token.
      </p>
    </main>
  );
}
