/** The BackupJob kind's schema side (kinds/contract.ts). */
import type { SchemaKind } from '../contract.js'
import { finaliseBackupJob } from './finalise.js'
import { backupJobIdentity } from './identity.js'
import { backupJobReferences } from './references.js'
import { backupJobSpecSchema } from './schema.js'
import type { BackupJobManifest } from './types.js'

export const backupJob = {
  name: 'BackupJob',
  aliases: [],
  root: 'backupjob',
  description: 'A PVE backup job (`/cluster/backup`), owned through a marker in its comment.',
  spec: backupJobSpecSchema,
  guest: false,
  allowEmpty: true,
  finalise: finaliseBackupJob,
  references: backupJobReferences,
  identity: backupJobIdentity,
} as const satisfies SchemaKind<BackupJobManifest>
