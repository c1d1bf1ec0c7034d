/** The pooler's connection strings (no imports: `strata start`'s banner uses it before the server loads). */

/**
 * The connection string of `user` (a project login) through the pooler at `address`, as
 * `GET /config/database/pooler` and the banner give it (the password left as the CLI's placeholder).
 */
export function poolerUrl(address: { host: string; port: number }, user: string, db = 'postgres'): string {
  const host = address.host.includes(':') ? `[${address.host}]` : address.host;
  return `postgresql://${encodeURIComponent(user)}:[YOUR-PASSWORD]@${host}:${address.port}/${encodeURIComponent(db)}?sslmode=disable`;
}
