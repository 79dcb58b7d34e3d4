/** Bounded parallelism for the loader's file-system work. */

/**
 * Calls `fn` on every item with at most `limit` calls pending at once and returns the results in input
 * order. Rejects with the first failure (calls already started still finish; no new ones start).
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length)
  let next = 0
  let failed = false
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const i = next++
      try {
        out[i] = await fn(items[i]!, i)
      } catch (err) {
        failed = true
        throw err
      }
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker))
  return out
}
