/**
 * Sets a key in a map that may hold at most `max` entries. The key moves to the newest place; when
 * the map is full, the oldest entry goes. Maps keep insertion order, so that is all an LRU needs.
 */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  if (map.size >= max) {
    const oldest = map.keys().next();
    if (oldest.done !== true) map.delete(oldest.value);
  }
  map.set(key, value);
}
