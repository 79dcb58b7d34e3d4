/** IPv4 and IPv6 addresses and CIDRs as numbers, for SubnetPlugin's checks (Net::Subnet's subnet_matcher). */

export interface Addr {
  version: 4 | 6
  value: bigint
}

export function parseAddr(s: string): Addr | undefined {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s)
  if (v4) {
    const parts = v4.slice(1).map(Number)
    if (parts.some((p) => p > 255)) return undefined
    return { version: 4, value: parts.reduce((a, p) => (a << 8n) | BigInt(p), 0n) }
  }
  if (!/^[0-9a-fA-F:]+$/.test(s) || !s.includes(':')) return undefined
  const halves = s.split('::')
  if (halves.length > 2) return undefined
  const group = (h: string) => (h === '' ? [] : h.split(':'))
  const head = group(halves[0] ?? '')
  const tail = halves.length === 2 ? group(halves[1] ?? '') : []
  if ([...head, ...tail].some((g) => !/^[0-9a-fA-F]{1,4}$/.test(g))) return undefined
  const fill = 8 - head.length - tail.length
  if ((halves.length === 1 && fill !== 0) || fill < 0) return undefined
  const words = [...head, ...Array<string>(halves.length === 2 ? fill : 0).fill('0'), ...tail]
  return { version: 6, value: words.reduce((a, w) => (a << 16n) | BigInt(parseInt(w, 16)), 0n) }
}

export interface Cidr extends Addr {
  mask: number
}

/** pve_verify_cidrv4 / v6: an address and a mask of 8 bits or more */
export function parseCidr(s: string): Cidr | undefined {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(s)
  const a = m ? parseAddr(m[1] as string) : undefined
  if (!m || !a) return undefined
  const mask = Number(m[2])
  if (mask < 8 || mask > (a.version === 4 ? 32 : 128)) return undefined
  return { ...a, mask }
}

export function contains(c: Cidr, a: Addr): boolean {
  if (a.version !== c.version) return false
  const bits = BigInt((c.version === 4 ? 32 : 128) - c.mask)
  return a.value >> bits === c.value >> bits
}
