/**
 * The EVPN controller an EVPN zone needs: the `SdnController` kind (pve-network
 * PVE::API2::Network::SDN::Controllers, Controllers::EvpnPlugin). docs/network.md
 */
import * as v from 'valibot'
import { issueMessage as m } from '../../errors.js'
import { int, list, obj, oneOf, str } from '../../manifest/fields.js'

export const controllerSpecSchema = obj(
  {
    id: v.optional(str('PVE controller id; default `metadata.name`.')),
    type: v.optional(oneOf(['evpn'], 'Controller type; only `evpn` is supported.'), 'evpn'),
    asn: int('The BGP AS number.', 0, 4294967295),
    peers: list(
      v.pipe(
        v.string(m('field-type', 'must be a string')),
        v.regex(
          /^(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9a-fA-F:]*:[0-9a-fA-F:.]*)$/,
          m('field-invalid', 'must be an IP address'),
        ),
      ),
      "BGP peers (the nodes' addresses).",
    ),
  },
  "SdnController spec: the EVPN controller's AS number and peers.",
)
