import { afterAll, beforeAll } from 'vitest';
import { startStorage, type StorageHarness } from '../support/storage.js';
import { objectSuite } from './objects.suite.js';
import { streamingSuite } from './streaming.suite.js';

let h: StorageHarness;
beforeAll(async () => {
  h = await startStorage('s3');
});
afterAll(async () => h?.close());

objectSuite(() => h);
streamingSuite(() => h);
