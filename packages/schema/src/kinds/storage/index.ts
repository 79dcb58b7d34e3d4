/** The Storage kind's schema side (kinds/contract.ts). */
import type { SchemaKind } from '../contract.js'
import { finaliseStorage } from './finalise.js'
import { storageIdentity } from './identity.js'
import { storageReferences } from './references.js'
import { storageSpecSchema } from './schema.js'
import type { StorageManifest } from './types.js'

export const storage = {
  name: 'Storage',
  aliases: [],
  root: 'storage',
  description:
    'A PVE storage (`/storage`, one storage.cfg section). PVE storages carry no comment: ProxOps owns a storage it recorded in its ledger (docs/storage.md#ownership).',
  spec: storageSpecSchema,
  guest: false,
  allowEmpty: true,
  finalise: finaliseStorage,
  references: storageReferences,
  identity: storageIdentity,
} as const satisfies SchemaKind<StorageManifest>
