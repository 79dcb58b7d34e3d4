/** The normalised BackupJob manifest (docs/schema-reference.md#backupjob): the schema's output, finalised. */
import type { Envelope } from '../contract.js'
import type { Completed, Out } from '../../manifest/infer.js'
import type { backupJobSpecSchema } from './schema.js'

/** what the valibot schema hands over: the selection still in its raw form */
export type RawBackupJobSpec = Out<typeof backupJobSpecSchema>

/** Exactly one selection form (PVE::VZDump::verify_vzdump_parameters). */
export type BackupSelection = { vmids: number[] } | { pool: string } | { all: true; exclude: number[] }

export type PruneBackupsKey = keyof NonNullable<RawBackupJobSpec['prune-backups']>

export type BackupJobSpec = Completed<
  RawBackupJobSpec,
  {
    /** PVE job id (default metadata.name) */
    id: string
    selection: BackupSelection
    /**
     * normalised as pve-storage validate_prune_backups does: only positive keep-N, or `{ 'keep-all': 1 }` when
     * nothing is positive; undefined = not owned (the storage's retention applies)
     */
    'prune-backups'?: Partial<Record<PruneBackupsKey, number>>
  }
>

export type BackupJobManifest = Envelope<'BackupJob', BackupJobSpec>
