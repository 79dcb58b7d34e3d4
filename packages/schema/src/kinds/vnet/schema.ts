/**
 * SDN vnets: the `VNet` kind (pve-network PVE::API2::Network::SDN::Vnets, VnetPlugin). A guest NIC whose
 * `bridge` is the vnet's id plugs into it. docs/network.md
 */
import * as v from 'valibot'
import { issueMessage as m } from '../../errors.js'
import { bool, int, obj, str } from '../../manifest/fields.js'

export const vnetSpecSchema = obj(
  {
    id: v.optional(
      str(
        'PVE vnet id (the bridge name guests use); default `metadata.name`. 2 to 8 letters and digits, starting with a letter.',
      ),
    ),
    zone: str('The zone id (a Zone, or a zone made by hand).'),
    tag: v.optional(
      int('VLAN tag (vlan, qinq zones: 1-4096) or VXLAN VNI (vxlan, evpn zones); none in a simple zone.', 1, 16777215),
    ),
    alias: v.optional(
      v.pipe(
        str('Alias; ProxOps writes its ownership marker in front of it (`managed-by=proxops <alias>`).'),
        v.regex(/^[^\n\r]*$/, m('field-invalid', 'must be a single line')),
        v.maxLength(
          230,
          m('field-invalid', 'must be at most 230 characters (PVE keeps 256, the marker takes the rest)'),
        ),
      ),
    ),
    vlanaware: v.optional(bool('Let VLAN-tagged traffic through (not in evpn zones; no subnets then).')),
    'isolate-ports': v.optional(bool('Isolate the bridge ports from each other.')),
  },
  'VNet spec: its zone, tag and flags, as PVE names them.',
)
