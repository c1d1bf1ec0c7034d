/** Eviction for the engine's bounded caches: plain Maps, which iterate in insertion order. */

/** Deletes the first-inserted key of `map` (nothing when it is empty). */
export function deleteOldest<K>(map: Map<K, unknown>): void {
  const oldest = map.keys().next();
  if (!oldest.done) map.delete(oldest.value);
}
