import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two cores: a few files at once, each with its own database.
    maxWorkers: 3,
    minWorkers: 1,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
