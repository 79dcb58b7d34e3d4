import type { Add } from '../contract.js'
import { contains, parseAddr, parseCidr } from './cidr.js'
import type { SubnetManifest } from './types.js'

/**
 * parse_sdn_subnet_id's CIDR and SubnetPlugin on_update_hook: the gateway inside the subnet (a /32 IPv4
 * point-to-point excepted), and validate_dhcp_ranges (start before end, both inside, no overlap).
 */
export function finaliseSubnet(m: SubnetManifest, add: Add): void {
  const cidr = parseCidr(m.spec.cidr)
  if (!cidr) {
    add(
      'field-invalid',
      ['spec', 'cidr'],
      `${JSON.stringify(m.spec.cidr)} is not a CIDR network (address/mask, mask 8 or more)`,
    )
    return
  }
  const gw = m.spec.gateway
  if (gw !== undefined) {
    const a = parseAddr(gw)
    const pointopoint = a?.version === 4 && cidr.mask === 32
    if (!a) add('field-invalid', ['spec', 'gateway'], `${JSON.stringify(gw)} is not an IP address`)
    else if (!contains(cidr, a) && !pointopoint)
      add('field-invalid', ['spec', 'gateway'], `${gw} is not in subnet ${m.spec.cidr}`)
  }
  const seen: [bigint, bigint][] = []
  ;(m.spec['dhcp-range'] ?? []).forEach((r, i) => {
    const at = ['spec', 'dhcp-range', i]
    const s = parseAddr(r['start-address'])
    const e = parseAddr(r['end-address'])
    if (!s || !e) return add('field-invalid', at, 'start-address and end-address must be IP addresses')
    if (s.value > e.value)
      return add(
        'field-invalid',
        at,
        `start-address ${r['start-address']} must be smaller than end-address ${r['end-address']}`,
      )
    if (!contains(cidr, s) || !contains(cidr, e))
      return add(
        'field-invalid',
        at,
        `the range ${r['start-address']}-${r['end-address']} is not in subnet ${m.spec.cidr}`,
      )
    if (seen.some(([a, b]) => s.value <= b && a <= e.value))
      return add('field-invalid', at, 'dhcp ranges must not overlap')
    seen.push([s.value, e.value])
  })
}
