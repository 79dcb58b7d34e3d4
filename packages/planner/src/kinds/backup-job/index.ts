/** The backup job kind: `vzdump` jobs of `/cluster/backup` (`BackupJob` manifests). */
import { isBackupJob } from '../../desired.js'
import { defineKind } from '../../kit/kind.js'
import { needs, one, str } from '../../kit/privileges.js'
import { sanitiseName } from '../../kit/names.js'
import { adoptBackupJob } from './adopt.js'
import { confirmBackupJob } from './confirm.js'
import { backupAddress } from '../../kit/draft.js'
import { planBackupJobs } from './plan.js'
import { readBackupJobs } from './read.js'
import { backupJobRunners } from './run.js'
import type { PlanParams } from '../../plan-types.js'

/**
 * PVE::API2::Backup: Sys.Modify on /, then (assert_param_permission_create/update) Datastore.Allocate on the
 * target storage and VM.Backup on a selected pool
 */
function write(params: PlanParams) {
  const { out, push } = needs()
  push(undefined, [one('/', 'Sys.Modify')])
  const storage = str(params, 'storage')
  if (storage !== undefined) push('storage', [one(`/storage/${storage}`, 'Datastore.Allocate')])
  const pool = str(params, 'pool')
  if (pool !== undefined) push('pool', [one(`/pool/${pool}`, 'VM.Backup')])
  return out
}

export const backupJob = defineKind({
  name: 'backup-job',
  manifests: ['BackupJob'],
  addresses: (m) => (isBackupJob(m) ? [backupAddress(m.spec.id)] : []),
  read: readBackupJobs,
  plan: planBackupJobs,
  // first: a guest's destroy with purge deletes a job that names only it, so the job's own prune comes first
  pruneOrder: 0,
  run: backupJobRunners,
  privileges: {
    createBackupJob: (r) => write(r.params),
    updateBackupJob: (r) => write(r.params),
    deleteBackupJob: () => [{ need: one('/', 'Sys.Modify') }],
  },
  confirm: confirmBackupJob,
  summary: { create: 'create', update: 'update', delete: 'delete' },
  adopt: {
    order: 5,
    run(live, ctx) {
      if ('unreadable' in live.backupJobs) {
        ctx.collect.warnings.push(`backup jobs not adopted: ${live.backupJobs.unreadable}`)
        return
      }
      for (const job of live.backupJobs.known)
        ctx.files.push(
          adoptBackupJob(
            job,
            ctx.options.cluster,
            ctx.tag,
            ctx.claim('BackupJob', sanitiseName(job.id, 'backup-job'), job.id),
            ctx.collect.gaps,
          ),
        )
    },
  },
})
