// Many requests of one kind (assign these leads, read their latest calls) made a few at a time: fast enough for a
// hundred leads, without a burst that meets the rate limit or holds every connection of the browser.

export type Settled<R> = { ok: true; value: R } | { ok: false; error: unknown };

/**
 * Calls `work` for each item, at most `limit` at once, and answers every outcome in the items' order; one failure
 * stops nothing. `progress` hears how many have ended after each one.
 */
export async function eachAtMost<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
  progress?: (done: number) => void,
): Promise<Settled<R>[]> {
  const results: Settled<R>[] = new Array(items.length);
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      try {
        results[index] = { ok: true, value: await work(items[index]!, index) };
      } catch (error) {
        results[index] = { ok: false, error };
      }
      progress?.(++done);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** Every item of a paged list, following the `next` cursor until the last page. */
export async function everyPage<T>(page: (cursor: string | null) => Promise<{ body: { data: T[] }; next: string | null }>): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | null = null;
  do {
    const result = await page(cursor);
    items.push(...result.body.data);
    cursor = result.next;
  } while (cursor);
  return items;
}
