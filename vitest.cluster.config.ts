import { defineConfig } from 'vitest/config';

/** `npm run test:cluster`: the cluster test alone (`npm test` runs it with the rest, ~20 s). */
export default defineConfig({
  test: {
    include: ['test/cluster/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    pool: 'forks',
    maxWorkers: 1,
    minWorkers: 1,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
