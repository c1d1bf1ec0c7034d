/** The signed-in personal access token, remembered in the browser (localStorage). */
const KEY = 'strata.console.accessToken';

export function storedToken(): string | undefined {
  return localStorage.getItem(KEY) ?? undefined;
}

export function rememberToken(token: string): void {
  localStorage.setItem(KEY, token);
}

export function forgetToken(): void {
  localStorage.removeItem(KEY);
}

/** Trades the one-time token of a printed console link (`#login=…`) for the access token. */
export async function redeemLoginToken(oneTime: string): Promise<string> {
  const res = await fetch('/console/login', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token: oneTime }),
  });
  const body = (await res.json().catch(() => ({}))) as { access_token?: string; message?: string };
  if (!res.ok || !body.access_token) throw new Error(body.message ?? `Login failed (HTTP ${res.status})`);
  return body.access_token;
}
