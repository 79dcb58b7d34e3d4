/**
 * SDN subnets: the `Subnet` kind (pve-network PVE::API2::Network::SDN::Subnets, SubnetPlugin). PVE's id is
 * `<zone>-<network>-<mask>`; a manifest names its vnet and CIDR. docs/network.md
 */
import * as v from 'valibot'
import { issueMessage as m } from '../../errors.js'
import { bool, list, nonEmptyStr, obj, str } from '../../manifest/fields.js'

const ip = (d: string) =>
  v.pipe(
    v.string(m('field-type', 'must be a string')),
    v.description(d),
    v.regex(/^(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9a-fA-F:]*:[0-9a-fA-F:.]*)$/, m('field-invalid', 'must be an IP address')),
  )

export const subnetSpecSchema = obj(
  {
    vnet: str('The vnet id (a VNet, or a vnet made by hand).'),
    cidr: str('The subnet, `10.0.1.0/24` or `fd00::/64` (the network address, as PVE keys it).'),
    gateway: v.optional(ip('Gateway; inside the subnet (a /32 IPv4 subnet may point outside).')),
    snat: v.optional(bool('Source NAT for traffic leaving the subnet.')),
    dnszoneprefix: v.optional(nonEmptyStr('DNS zone prefix (`<prefix>.<dnszone>`).')),
    'dhcp-range': v.optional(
      list(
        obj(
          { 'start-address': ip('First address.'), 'end-address': ip('Last address.') },
          'One DHCP range inside the subnet.',
        ),
        'DHCP ranges, inside the subnet and apart.',
      ),
    ),
    'dhcp-dns-server': v.optional(ip('DNS server handed out by DHCP.')),
  },
  'Subnet spec: its vnet, CIDR and gateway, as PVE names them.',
)
