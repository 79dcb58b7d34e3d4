/**
 * Run counts for the fuzz and crash suites. CI runs the bounded default; `PROXOPS_SOAK=<factor>` multiplies
 * every count for a long soak (e.g. PROXOPS_SOAK=20 pnpm --filter @proxops/reliability test).
 */
const factor = Math.max(1, Number(process.env.PROXOPS_SOAK ?? '1') || 1)

export const runs = (n: number): number => Math.round(n * factor)

/** mulberry32: a small seeded generator in [0, 1), so a printed seed replays its run */
export function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
