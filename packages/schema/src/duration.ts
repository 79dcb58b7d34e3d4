/**
 * Durations as written in config (`reconcile.*`): `500ms`, `30s`, `1.5s`, `5m`, `1h30m`, as Go writes them; a bare
 * number means seconds. Milliseconds, rounded.
 */
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }

export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim()
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000)
  if (!/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(trimmed)) return undefined
  let total = 0
  for (const match of trimmed.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) {
    total += Number(match[1]) * (UNIT_MS[match[2] as string] as number)
  }
  return Number.isSafeInteger(Math.round(total)) ? Math.round(total) : undefined
}
