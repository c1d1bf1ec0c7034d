/**
 * One-time console login tokens: `npm start` prints a console link carrying one of these (in the
 * URL's fragment, which browsers never send), never the long-lived personal access token. The
 * console trades it once, within its lifetime, for the access token it stands for.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';

/** How long a printed login link stays usable. */
export const LOGIN_TOKEN_TTL_MS = 60 * 60 * 1000;

interface Pending {
  accessToken: string;
  expiresAt: number;
}

export class ConsoleLoginTokens {
  readonly #pending = new Map<string, Pending>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A fresh one-time token that stands for `accessToken`. */
  issue(accessToken: string): string {
    this.#sweep();
    const token = randomBytes(32).toString('base64url');
    this.#pending.set(token, { accessToken, expiresAt: this.now() + LOGIN_TOKEN_TTL_MS });
    return token;
  }

  /** The access token behind `token`, once: the token is spent whether or not it was still valid. */
  redeem(token: string): string | undefined {
    this.#sweep();
    for (const [candidate, pending] of this.#pending) {
      if (!sameString(candidate, token)) continue;
      this.#pending.delete(candidate);
      return pending.expiresAt > this.now() ? pending.accessToken : undefined;
    }
    return undefined;
  }

  #sweep(): void {
    const now = this.now();
    for (const [t, p] of this.#pending) if (p.expiresAt <= now) this.#pending.delete(t);
  }
}

function sameString(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
