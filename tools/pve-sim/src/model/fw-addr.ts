/**
 * Addresses and ports as pve-firewall checks them (PVE::Firewall parse_address_list, parse_port_name_number_or_range,
 * parse_ip_or_cidr, clean_cidr, pve_verify_ip_or_cidr; Net::IP's notion of a valid prefix). Errors are the `die`
 * texts, thrown as FwError.
 */
import { ICMP_TYPES, ICMPV6_TYPES, SERVICES } from './firewall-data.js'

export class FwError extends Error {}
const die = (msg: string): never => {
  throw new FwError(msg)
}

export interface ParsedIp {
  version: 4 | 6
  value: bigint
}

const V4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/

export function parseIp(s: string): ParsedIp | undefined {
  const m = V4.exec(s)
  if (m) {
    const parts = m.slice(1).map(Number)
    if (parts.some((p) => p > 255)) return undefined
    return { version: 4, value: parts.reduce((acc, p) => (acc << 8n) | BigInt(p), 0n) }
  }
  if (!/^[0-9a-fA-F:.]+$/.test(s) || !s.includes(':')) return undefined
  let text = s
  const lastColon = text.lastIndexOf(':')
  const embedded = text.slice(lastColon + 1)
  if (embedded.includes('.')) {
    // a trailing dotted quad (`::ffff:10.0.0.1`) stands for the last two words
    const v4 = parseIp(embedded)
    if (!v4 || v4.version !== 4) return undefined
    text = `${text.slice(0, lastColon + 1)}${(v4.value >> 16n).toString(16)}:${(v4.value & 0xffffn).toString(16)}`
  }
  const halves = text.split('::')
  if (halves.length > 2) return undefined
  const group = (h: string) => (h === '' ? [] : h.split(':'))
  const head = group(halves[0] as string)
  const rest = halves.length === 2 ? group(halves[1] as string) : []
  const groups = [...head, ...rest]
  if (groups.some((g) => !/^[0-9a-fA-F]{1,4}$/.test(g))) return undefined
  const total = groups.length
  if (halves.length === 1 && total !== 8) return undefined
  if (halves.length === 2 && total > 7) return undefined
  const zeros = 8 - total
  const words = [
    ...head.map((g) => BigInt(parseInt(g, 16))),
    ...Array<bigint>(halves.length === 2 ? zeros : 0).fill(0n),
    ...rest.map((g) => BigInt(parseInt(g, 16))),
  ]
  return { version: 6, value: words.reduce((acc, w) => (acc << 16n) | w, 0n) }
}

const bitsOf = (v: 4 | 6) => (v === 4 ? 32 : 128)

export function formatIp(ip: ParsedIp): string {
  if (ip.version === 4) return [24n, 16n, 8n, 0n].map((s) => String((ip.value >> s) & 0xffn)).join('.')
  const words = Array.from({ length: 8 }, (_, i) => Number((ip.value >> BigInt((7 - i) * 16)) & 0xffffn))
  // the longest run of zero words (at least two) becomes `::`
  let best = -1
  let bestLen = 1
  for (let i = 0; i < 8;) {
    if (words[i] !== 0) {
      i++
      continue
    }
    let j = i
    while (j < 8 && words[j] === 0) j++
    if (j - i > bestLen) {
      best = i
      bestLen = j - i
    }
    i = j
  }
  const hex = words.map((w) => w.toString(16))
  if (best < 0) return hex.join(':')
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`
}

/** Net::IP->new on one element of an address list: an IP, a network-aligned CIDR, or a range `a-b` */
function netIp(elem: string): 4 | 6 {
  const range = /^([^-\s]+)\s*-\s*([^-\s]+)$/.exec(elem)
  if (range) {
    const a = parseIp(range[1] as string)
    const b = parseIp(range[2] as string)
    if (!a || !b) die(`invalid IP address: Invalid IP address ${elem}`)
    if (a!.version !== b!.version) die(`invalid IP address: Begin and end IPs are of different versions`)
    if (a!.value > b!.value) die(`invalid IP address: Begin address is greater than End address ${elem}`)
    return a!.version
  }
  const [addr, len, extra] = elem.split('/')
  if (extra !== undefined) die(`invalid IP address: Invalid IP address ${elem}`)
  const ip = parseIp(addr as string)
  if (!ip) return die(`invalid IP address: Invalid IP address ${addr}`)
  if (len !== undefined) {
    const n = /^\d+$/.test(len) ? Number(len) : NaN
    const bits = bitsOf(ip.version)
    if (!(n >= 0 && n <= bits)) die(`invalid IP address: Invalid prefix length /${len}`)
    const host = (1n << BigInt(bits - n)) - 1n
    if ((ip.value & host) !== 0n) die(`invalid IP address: Invalid prefix ${addr}/${len}`)
  }
  return ip.version
}

const IP_ALIAS = /^(dc\/|guest\/)?[A-Za-z][A-Za-z0-9\-_]+$/

/** parse_address_list: undefined for ipset and alias references, else the list's IP version */
export function parseAddressList(str: string): 4 | 6 | undefined {
  if (/^\+\S+$/.test(str)) {
    if (str.length > 65) die('ipset name too long')
    return undefined
  }
  if (IP_ALIAS.test(str)) {
    if (str.length > 64) die('alias name too long')
    return undefined
  }
  const elements = str.split(',').filter((e) => e !== '')
  if (str !== elements.join(',')) die('extraneous commas in list')
  let version: 4 | 6 | undefined
  let range = false
  for (const elem of elements) {
    const v = netIp(elem)
    if (elem.includes('-')) range = true
    if (version && v !== version) die(`detected mixed ipv4/ipv6 addresses in address list '${str}'`)
    version = v
  }
  if (range && elements.length > 1) die("you can't use a range in a list")
  return version
}

/** parse_port_name_number_or_range; `dport` allows ICMP type names (stored in dport by older versions) */
export function parsePorts(str: string, dport: boolean): void {
  const items = str.split(',').filter((e) => e !== '')
  if (str !== items.join(',')) die('extraneous commas in list')
  let count = 0
  let icmp = false
  for (const item of items) {
    const range = /^([0-9]+):([0-9]+)$/.exec(item)
    if (range) {
      count += 2
      const [a, b] = [Number(range[1]), Number(range[2])]
      if (a > 65535) die(`invalid port '${range[1]}'`)
      if (b > 65535) die(`invalid port '${range[2]}'`)
      if (a > b) die(`backwards range '${a}:${b}' not allowed, did you mean '${b}:${a}'?`)
    } else if (/^[0-9]+$/.test(item)) {
      count += 1
      if (Number(item) > 65535) die(`invalid port '${item}'`)
    } else if (dport && (ICMP_TYPES.has(item) || ICMPV6_TYPES.has(item))) {
      icmp = true
    } else if (!SERVICES.has(item)) {
      die(`invalid port '${item}'`)
    }
  }
  if (icmp && count > 0) die('ICMP ports not allowed in port range')
  if (count > 15) die('too many entries in port list (> 15 numbers)')
}

/** parse_ip_or_cidr: the config parser's form (a /32 or /128 suffix dropped) */
export function parseIpOrCidr(cidr: string): { cidr: string; version: 4 | 6 } {
  const [addr, len, extra] = cidr.split('/')
  const ip = extra === undefined ? parseIp(addr as string) : undefined
  if (!ip || (len !== undefined && !/^\d+$/.test(len))) {
    return die('value does not look like a valid IP address or CIDR network')
  }
  if (ip.version === 4 && len === '32') return { cidr: addr as string, version: 4 }
  if (ip.version === 6 && len === '128') return { cidr: addr as string, version: 6 }
  return { cidr, version: ip.version }
}

/** clean_cidr: host bits cleared (IPv6 written compressed) */
export function cleanCidr(cidr: string): string {
  const [addr, len] = cidr.split('/')
  if (!len) return cidr
  const ip = parseIp(addr as string)
  if (!ip) return cidr
  const bits = bitsOf(ip.version)
  const n = Math.min(Number(len), bits)
  const mask = ((1n << BigInt(bits)) - 1n) ^ ((1n << BigInt(bits - n)) - 1n)
  return `${formatIp({ version: ip.version, value: ip.value & mask })}/${len}`
}

/** the `IPorCIDR` format (pve_verify_ip_or_cidr): host bits are allowed, the prefix must fit */
export function verifyIpOrCidr(cidr: string): void {
  const [addr, len, extra] = cidr.split('/')
  const ip = extra === undefined ? parseIp(addr as string) : undefined
  if (!ip || (len !== undefined && !/^\d+$/.test(len))) {
    die('value does not look like a valid IP address or CIDR network')
  }
  if (len !== undefined && Number(len) > bitsOf(ip!.version)) die(`Invalid prefix length /${len}`)
}

/** the `IPorCIDRorAlias` format */
export function verifyIpOrCidrOrAlias(cidr: string): void {
  if (IP_ALIAS.test(cidr)) return
  verifyIpOrCidr(cidr)
}
