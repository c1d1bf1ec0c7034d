/** Moved to test/support/functions.ts (the test kit); this re-export goes once no file imports it. */
export * from '../support/functions.js';
