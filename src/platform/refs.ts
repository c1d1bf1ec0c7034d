import { randomInt } from 'node:crypto';

/** A project ref: 20 lowercase letters. */
export function newProjectRef(): string {
  let s = '';
  for (let i = 0; i < 20; i++) s += String.fromCharCode(97 + randomInt(26));
  return s;
}

export function isProjectRef(s: string): boolean {
  return /^[a-z]{20}$/.test(s);
}
