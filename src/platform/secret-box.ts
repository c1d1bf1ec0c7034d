/**
 * Encryption at rest with the platform key (LocalState.platformKey, 32 bytes hex): AES-256-GCM,
 * a fresh 12-byte IV per value, and associated data binding the ciphertext to where it is stored
 * (so a value copied to another project or name does not decrypt).
 * Layout: version byte 1 | iv (12) | tag (16) | ciphertext.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 1;

function keyOf(platformKeyHex: string): Buffer {
  const key = Buffer.from(platformKeyHex, 'hex');
  if (key.length !== 32) throw new Error('the platform key must be 32 bytes, hex-encoded');
  return key;
}

export function sealSecret(platformKeyHex: string, plaintext: string, associatedData: string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(platformKeyHex), iv);
  cipher.setAAD(Buffer.from(associatedData, 'utf8'));
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), ct]);
}

export function openSecret(platformKeyHex: string, sealed: Buffer, associatedData: string): string {
  if (sealed.length < 29 || sealed[0] !== VERSION) throw new Error('unknown sealed secret format');
  const iv = sealed.subarray(1, 13);
  const tag = sealed.subarray(13, 29);
  const decipher = createDecipheriv('aes-256-gcm', keyOf(platformKeyHex), iv);
  decipher.setAAD(Buffer.from(associatedData, 'utf8'));
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(sealed.subarray(29)), decipher.final()]).toString('utf8');
}
