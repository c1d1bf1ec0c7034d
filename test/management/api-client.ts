/** Moved to test/support/management.ts (the test kit); this re-export goes once no file imports it. */
export * from '../support/management.js';
