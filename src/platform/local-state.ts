/**
 * Secrets the platform itself needs across restarts, kept in <dataDir>/state.json (mode 0600):
 * database passwords, the platform encryption key, and the default user's access token (so a
 * second `npm start` prints the same token, as a CLI keeps its login).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync, renameSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

export interface LocalState {
  superuserPassword: string;
  authenticatorPassword: string;
  /** 32-byte hex key encrypting secrets at rest in the platform database. */
  platformKey: string;
  defaultAccessToken?: string;
}

export function newAccessToken(): string {
  return 'sbp_' + randomBytes(20).toString('hex');
}

export function loadLocalState(dataDir: string): LocalState {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, 'state.json');
  let state: Partial<LocalState> = {};
  if (existsSync(file)) state = JSON.parse(readFileSync(file, 'utf8')) as Partial<LocalState>;
  const full: LocalState = {
    superuserPassword: state.superuserPassword ?? randomBytes(18).toString('base64url'),
    authenticatorPassword: state.authenticatorPassword ?? randomBytes(18).toString('base64url'),
    platformKey: state.platformKey ?? randomBytes(32).toString('hex'),
    defaultAccessToken: state.defaultAccessToken,
  };
  if (JSON.stringify(full) !== JSON.stringify(state)) saveLocalState(dataDir, full);
  return full;
}

export function saveLocalState(dataDir: string, state: LocalState): void {
  const file = join(dataDir, 'state.json');
  writeFileSync(file + '.tmp', JSON.stringify(state, null, 2) + '\n', { mode: 0o600 });
  renameSync(file + '.tmp', file);
}
