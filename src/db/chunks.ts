/** Statements take at most this many items (SQLite's limit on bound values stays far away). */
export const CHUNK = 500;

/** `work` for each CHUNK of `items` in turn; the sum of what each returned (rows changed). */
export async function inChunks<T>(
  items: readonly T[],
  work: (chunk: T[]) => Promise<number>,
): Promise<number> {
  let total = 0;
  for (let start = 0; start < items.length; start += CHUNK)
    total += await work(items.slice(start, start + CHUNK));
  return total;
}
