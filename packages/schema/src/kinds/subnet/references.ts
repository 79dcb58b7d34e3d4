import type { KindReference } from '../contract.js'
import { vnetReference } from '../vnet/references.js'
import type { SubnetManifest } from './types.js'

/** A subnet needs its vnet (SubnetPlugin on_update_hook: it must exist and not be vlan-aware). */
export function subnetReferences(m: SubnetManifest): KindReference<'VNet'>[] {
  return [vnetReference(m.spec.vnet, ['spec', 'vnet'])]
}
