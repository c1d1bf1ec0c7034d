// @ts-nocheck -- PostGraphile lives in this folder's own node_modules, installed on first benchmark run.
// PostGraphile's entry points, resolved from this folder's own node_modules (see package.json).
export { postgraphile } from 'postgraphile';
export { PostGraphileAmberPreset } from 'postgraphile/presets/amber';
export { makePgService } from 'postgraphile/adaptors/pg';
export { grafserv } from 'postgraphile/grafserv/node';
