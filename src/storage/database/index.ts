/**
 * The storage SQL adapter: every SQL statement of the Storage service, as named functions that
 * run on the connection (or pool) they are given. Which role a statement runs as is the caller's
 * choice: inTx (tx.ts) opens a transaction as a Caller with the operation's settings; the service
 * code decides, per call, whether that is the request's caller (RLS) or the service role.
 */
export * from './buckets.js';
export * from './multipart.js';
export * from './object-lists.js';
export * from './object-writes.js';
export * from './objects.js';
export * from './reconcile.js';
export * from './s3-credentials.js';
export * from './tus-locks.js';
export * from './tx.js';
