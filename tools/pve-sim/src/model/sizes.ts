/** Disk size grammar: binary units, K = 1024. */

const UNITS: Record<string, number> = { K: 1, M: 2, G: 3, T: 4 }

/** Parses a `disk-size` value (`32G`, `528K`, `4MiB`, `1.5G`, `1073741824`) into bytes, or undefined. */
export function parseDiskSize(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)([KMGT])?(?:iB)?$/.exec(text)
  if (!m || (m[2] === undefined && text.endsWith('iB'))) return undefined
  const n = Number(m[1])
  const unit = m[2] ? 1024 ** (UNITS[m[2]] ?? 0) : 1
  return Math.round(n * unit)
}

/** PVE's format_size: the largest unit that divides the size exactly, raw bytes otherwise. */
export function formatSize(bytes: number): string {
  const units: [string, number][] = [
    ['T', 1024 ** 4],
    ['G', 1024 ** 3],
    ['M', 1024 ** 2],
    ['K', 1024],
  ]
  for (const [u, f] of units) {
    if (bytes >= f && bytes % f === 0) return `${bytes / f}${u}`
  }
  return String(bytes)
}

export const GiB = 1024 ** 3
export const MiB = 1024 ** 2
export const KiB = 1024

/** `STORAGE:SIZE` allocations are in GiB (decimals allowed); PVE allocates whole KiB. */
export function gibToBytes(gib: number): number {
  return Math.floor((gib * GiB) / KiB) * KiB
}

/**
 * The `size` parameter of `/resize`: `\+?\d+(\.\d+)?[KMGT]?`, plain numbers are bytes.
 * Returns the absolute new size, or undefined if unparsable.
 */
export function resizeTarget(current: number, size: string): number | undefined {
  const m = /^(\+)?(\d+(?:\.\d+)?)([KMGT])?$/.exec(size)
  if (!m) return undefined
  const n = Number(m[2]) * (m[3] ? 1024 ** (UNITS[m[3]] ?? 0) : 1)
  const v = Math.floor(n)
  return m[1] ? current + v : v
}
