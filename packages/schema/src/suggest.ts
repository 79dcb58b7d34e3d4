/**
 * "Did you mean": the nearest known name to what was typed, by edit distance (insert, delete, substitute, and
 * swap of two neighbours, so `--clsuter` is one edit from `--cluster`). Far-off words get no suggestion. One
 * rule for every suggestion ProxOps makes: unknown manifest fields (manifest/parse.ts) and the CLI's commands
 * and flags.
 */

/** Optimal string alignment distance (Damerau-Levenshtein without repeated edits of one substring). */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1
  const cols = b.length + 1
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  )
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1)
      d[i]![j] = best
    }
  }
  return d[a.length]![b.length]!
}

/**
 * The known name nearest to `typed`, when it is close enough to be a typo: at most a third of the longer word
 * is edited (at least one edit), or `typed` is a prefix of exactly one name. Ties go to the first name given.
 */
export function nearest(typed: string, known: readonly string[]): string | undefined {
  const word = typed.toLowerCase()
  const prefixed = known.filter((k) => word.length >= 2 && k.startsWith(word))
  if (prefixed.length === 1) return prefixed[0]
  let best: { name: string; distance: number } | undefined
  for (const name of known) {
    const distance = editDistance(word, name.toLowerCase())
    if (distance > Math.max(1, Math.floor(Math.max(word.length, name.length) / 3))) continue
    if (!best || distance < best.distance) best = { name, distance }
  }
  return best?.name
}
