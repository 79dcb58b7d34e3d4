/**
 * BackupJob, the planner's side: the desired manifest (structurally the schema's BackupJobManifest) and a live
 * `vzdump` job of `/cluster/backup` as observe() reads it (values in PVE's string form).
 */
/** the metadata plan() reads */
interface DesiredMetadata {
  name: string
  annotations?: Readonly<Record<string, string>>
}

export type BackupSelection =
  { vmids: readonly number[] } | { pool: string } | { all: true; exclude: readonly number[] }

export interface BackupJobSpec {
  id: string
  schedule: string
  storage: string
  selection: BackupSelection
  mode?: string
  compress?: string
  'prune-backups'?: Readonly<Partial<Record<string, number>>>
  'notes-template'?: string
  enabled: boolean
  node?: string
  comment?: string
}

export interface BackupJobManifest {
  kind: 'BackupJob'
  metadata: DesiredMetadata
  spec: BackupJobSpec
}

/** One job of `GET /cluster/backup`: every option as a string (property strings printed, keys sorted). */
export interface LiveBackupJob {
  id: string
  values: Readonly<Record<string, string>>
}
