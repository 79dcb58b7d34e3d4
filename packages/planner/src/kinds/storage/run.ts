/**
 * Running the storage kind's requests: `/storage` writes are synchronous (storage.cfg under its lock). Secret
 * references are resolved here, at execute time; after a successful write the ledger records that this entry
 * owns the storage and the fingerprint of each credential sent (never the value).
 */
import type { PveRequest } from '../../plan-types.js'
import { isSecretParam, resolveParams } from '../../kit/params.js'
import { write, type ActionContext, type Runners } from '../../kit/runners.js'

export const storageRunners = {
  createStorage: (request, { ctx }) => runStorageRequest(request, ctx),
  updateStorage: (request, { ctx }) => runStorageRequest(request, ctx),
  deleteStorage: (request, { ctx }) => runStorageRequest(request, ctx),
} satisfies Runners

async function runStorageRequest(
  request: Extract<PveRequest, { call: 'createStorage' | 'updateStorage' | 'deleteStorage' }>,
  ctx: ActionContext,
): Promise<void> {
  const { writer, ledger } = ctx
  if (request.call === 'deleteStorage') {
    await write('delete', ctx, () => writer.deleteStorage(request.storage))
    ledger?.forget(request.storage)
    return
  }
  const { params } = await resolveParams(request.params, ctx.secrets)
  const storage = request.call === 'createStorage' ? String(request.params.storage) : request.storage
  if (request.call === 'createStorage') await write('create', ctx, () => writer.createStorage(params))
  else await write('update', ctx, () => writer.updateStorage(storage, params))
  if (!ledger) return
  const fingerprints: Record<string, string> = {}
  for (const [key, value] of Object.entries(request.params))
    if (isSecretParam(value)) fingerprints[key] = ledger.digest(String(params[key]))
  ledger.record(storage, fingerprints)
}
