import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Each worker process runs many files: modules are imported once per worker, not once per
    // file (a third of the run's CPU was collecting). Test files share no module state (services
    // are passed in, not kept in modules); each file starts what it uses and closes it.
    isolate: false,
    // Two cores: a few files at once, each with its own database. As many workers at least as at
    // most: tinypool removes a worker idle above the minimum twice over, and the second removal's
    // teardown, cut short by the first, is an unhandled rejection that fails the run.
    maxWorkers: 3,
    minWorkers: 3,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
