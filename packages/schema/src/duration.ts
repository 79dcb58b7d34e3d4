/** Go-style durations (`30s`, `5m`, `1h30m`, `250ms`, `2h`), as used by `reconcile.*` settings. */

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }
const PART = /(\d+)(ms|s|m|h)/gy

/** Milliseconds, or undefined when the text is not a duration. `0` is accepted (callers decide). */
export function parseDuration(text: string): number | undefined {
  const s = text.trim()
  if (s === '0') return 0
  if (s === '') return undefined
  PART.lastIndex = 0
  let total = 0
  let consumed = 0
  for (;;) {
    const m = PART.exec(s)
    if (!m) break
    total += Number(m[1]) * UNIT_MS[m[2]!]!
    consumed = PART.lastIndex
  }
  return consumed === s.length && Number.isSafeInteger(total) ? total : undefined
}

/** Shortest Go-style spelling of milliseconds (`90000` -> `1m30s`). */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s'
  let rest = ms
  let out = ''
  for (const [unit, size] of [
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
    ['ms', 1],
  ] as const) {
    const n = Math.floor(rest / size)
    if (n > 0) {
      out += `${n}${unit}`
      rest -= n * size
    }
  }
  return out
}
