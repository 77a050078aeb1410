/**
 * Work asked for in the same turn merged into one call. A buy sends its orders (one per band) at once:
 * each paper order prices its book from its token's reference price and is then placed on the paper
 * ledger, and without this seven orders were fourteen statements. Every call made before the queued
 * microtask runs is answered by one `load` of all the keys of its group (the answer holds every key
 * of the batch; a caller reads its own). It adds no wait: the load starts as soon as the calls of this
 * turn have been made. Calls of different groups never share a load (e.g. one paper account's orders).
 */
export function coalescedBy<K, V>(load: (group: string, keys: K[]) => Promise<Map<K, V>>): (group: string, keys: K[]) => Promise<Map<K, V>> {
  const gathering = new Map<string, { keys: Set<K>; answer: Promise<Map<K, V>> }>();
  return (group, keys) => {
    let batch = gathering.get(group);
    if (!batch) {
      const started: { keys: Set<K>; answer: Promise<Map<K, V>> } = { keys: new Set(), answer: Promise.resolve(new Map()) };
      started.answer = Promise.resolve().then(() => {
        gathering.delete(group);
        return load(group, [...started.keys]);
      });
      gathering.set(group, (batch = started));
    }
    for (const key of keys) batch.keys.add(key);
    return batch.answer;
  };
}

/** coalescedBy with one group. */
export function coalesced<K, V>(load: (keys: K[]) => Promise<Map<K, V>>): (keys: K[]) => Promise<Map<K, V>> {
  const grouped = coalescedBy<K, V>((_, keys) => load(keys));
  return (keys) => grouped('', keys);
}
