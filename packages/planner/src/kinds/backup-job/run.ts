/** Running the backup-job kind's requests: `/cluster/backup` writes are synchronous (jobs.cfg under its lock). */
import type { PveRequest } from '../../plan-types.js'
import { resolveParams } from '../../kit/params.js'
import { write, type ActionContext, type Runners } from '../../kit/runners.js'

export const backupJobRunners = {
  createBackupJob: (request, { ctx }) => runBackupRequest(request, ctx),
  updateBackupJob: (request, { ctx }) => runBackupRequest(request, ctx),
  deleteBackupJob: (request, { ctx }) => runBackupRequest(request, ctx),
} satisfies Runners

async function runBackupRequest(
  request: Extract<PveRequest, { call: 'createBackupJob' | 'updateBackupJob' | 'deleteBackupJob' }>,
  ctx: ActionContext,
): Promise<void> {
  const { writer } = ctx
  const { params } = 'params' in request ? await resolveParams(request.params, undefined) : { params: {} }
  const send = (): Promise<unknown> =>
    request.call === 'createBackupJob'
      ? writer.createBackupJob(params)
      : request.call === 'updateBackupJob'
        ? writer.updateBackupJob(request.id, params)
        : writer.deleteBackupJob(request.id)
  const what = request.call === 'createBackupJob' ? 'create' : request.call === 'updateBackupJob' ? 'update' : 'delete'
  await write(what, ctx, send)
}
