/**
 * BackupJob, the planner's live side: a `vzdump` job of `/cluster/backup` as observe() reads it (values in PVE's
 * string form). The desired side is the schema's BackupJobManifest.
 */

/** One job of `GET /cluster/backup`: every option as a string (property strings printed, keys sorted). */
export interface LiveBackupJob {
  id: string
  values: Readonly<Record<string, string>>
}
