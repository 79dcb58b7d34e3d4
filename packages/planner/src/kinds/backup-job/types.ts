/**
 * BackupJob, the planner's live side: a `vzdump` job of `/cluster/backup` as observe() reads it (values in PVE's
 * string form). The desired side is the schema's BackupJobManifest.
 */

export type { LiveBackupJob } from '../../inventory.js'
