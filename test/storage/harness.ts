/** Moved to test/support/storage.ts (the test kit); this re-export goes once no file imports it. */
export * from '../support/storage.js';
