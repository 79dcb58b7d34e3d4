/** The Zone kind's schema side (kinds/contract.ts). */
import type { SchemaKind } from '../contract.js'
import { finaliseZone } from './finalise.js'
import { zoneIdentity } from './identity.js'
import { zoneReferences } from './references.js'
import { zoneSpecSchema } from './schema.js'
import type { ZoneManifest } from './types.js'

export const zone = {
  name: 'Zone',
  aliases: ['SdnZone'],
  root: 'zone',
  description: 'A PVE SDN zone (`/cluster/sdn/zones`); PVE keeps no comment on it, so ProxOps never deletes one.',
  spec: zoneSpecSchema,
  guest: false,
  allowEmpty: false,
  finalise: finaliseZone,
  references: zoneReferences,
  identity: zoneIdentity,
} as const satisfies SchemaKind<ZoneManifest>
