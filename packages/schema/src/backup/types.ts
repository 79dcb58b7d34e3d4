/** The normalised BackupJob manifest (docs/schema-reference.md#backupjob). */

/** Exactly one selection form (PVE::VZDump::verify_vzdump_parameters). */
export type BackupSelection = { vmids: number[] } | { pool: string } | { all: true; exclude: number[] }

export type PruneBackupsKey =
  'keep-all' | 'keep-last' | 'keep-hourly' | 'keep-daily' | 'keep-weekly' | 'keep-monthly' | 'keep-yearly'

export interface BackupJobSpec {
  /** PVE job id (default metadata.name) */
  id: string
  /** a PVE calendar event, checked with PVE's grammar; kept as written (trimmed) */
  schedule: string
  storage: string
  selection: BackupSelection
  mode?: 'snapshot' | 'suspend' | 'stop'
  compress?: string
  /**
   * normalised as pve-storage validate_prune_backups does: only positive keep-N, or `{ 'keep-all': 1 }` when
   * nothing is positive; undefined = not owned (the storage's retention applies)
   */
  'prune-backups'?: Partial<Record<PruneBackupsKey, number>>
  'notes-template'?: string
  enabled: boolean
  node?: string
  comment?: string
}
