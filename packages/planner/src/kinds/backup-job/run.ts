/** Running the backup-job kind's requests: `/cluster/backup` answers at once (no task). */
import type { PveRequest } from '../../plan-types.js'
import { resolveParams } from '../../kit/params.js'
import { ActionFailure, type ActionContext, type Runners } from '../../kit/runners.js'

export const backupJobRunners: Runners = {
  createBackupJob: (request, { ctx }) => runBackupRequest(request, ctx),
  updateBackupJob: (request, { ctx }) => runBackupRequest(request, ctx),
  deleteBackupJob: (request, { ctx }) => runBackupRequest(request, ctx),
}

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
  try {
    await send()
  } catch (e) {
    if (e instanceof ActionFailure) throw e
    throw new ActionFailure(`${what} failed: ${e instanceof Error ? e.message : String(e)}`)
  }
}
