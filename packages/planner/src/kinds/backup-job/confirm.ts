/** Read-back of a backup-job action: the job is listed after a create or update, and gone after a delete. */
import type { Action } from '../../plan-types.js'
import type { LiveReader } from '../../ports.js'

export async function confirmBackupJob(action: Action, reader: LiveReader): Promise<string | undefined> {
  const r = action.requests[0]
  if (!r) return undefined
  const id =
    r.call === 'deleteBackupJob' || r.call === 'updateBackupJob'
      ? r.id
      : r.call === 'createBackupJob'
        ? String(r.params.id)
        : undefined
  if (id === undefined) return undefined
  const listed = (await reader.backupJobs()).some((j) => j.id === id)
  if (r.call === 'deleteBackupJob') return listed ? `backup job ${id} is still listed` : undefined
  return listed ? undefined : `backup job ${id} is not listed`
}
