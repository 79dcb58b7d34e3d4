/** The Pool kind's schema side (kinds/contract.ts). */
import type { SchemaKind } from '../contract.js'
import { finalisePool } from './finalise.js'
import { poolIdentity } from './identity.js'
import { poolReferences } from './references.js'
import { poolSpecSchema } from './schema.js'
import type { PoolManifest } from './types.js'

export const pool = {
  name: 'Pool',
  aliases: [],
  root: 'pool',
  description: 'A PVE resource pool (`/pools`), owned through a marker in its comment.',
  spec: poolSpecSchema,
  guest: false,
  allowEmpty: true,
  finalise: finalisePool,
  references: poolReferences,
  identity: poolIdentity,
} as const satisfies SchemaKind<PoolManifest>
