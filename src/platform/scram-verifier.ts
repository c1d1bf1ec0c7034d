/**
 * A PostgreSQL SCRAM-SHA-256 password verifier computed on the platform side (RFC 5802/7677, the
 * format of pg_authid.rolpassword), so that `ALTER ROLE … PASSWORD '<verifier>'` never carries the
 * password itself: nothing a server log or pg_stat_activity could show reveals it.
 *
 * PostgreSQL runs the password through SASLprep first; for ASCII passwords that is the identity.
 * Other passwords return undefined here and the caller lets the server hash them.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';

const ITERATIONS = 4096;

export function scramSha256Verifier(password: string): string | undefined {
  if (!/^[\x20-\x7e]*$/.test(password)) return undefined;
  const salt = randomBytes(16);
  const salted = pbkdf2Sync(Buffer.from(password, 'utf8'), salt, ITERATIONS, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${ITERATIONS}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}
