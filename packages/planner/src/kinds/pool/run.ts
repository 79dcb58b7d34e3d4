/** Running the pool kind's requests: `/pools` writes are synchronous (user.cfg under its lock). */
import type { PveRequest } from '../../plan-types.js'
import { write, type ActionContext, type Runners } from '../../kit/runners.js'

export const poolRunners = {
  createPool: (request, { ctx }) => poolWrite(request, ctx),
  updatePool: (request, { ctx }) => poolWrite(request, ctx),
  deletePool: (request, { ctx }) => poolWrite(request, ctx),
} satisfies Runners

/** One `/pools` write (synchronous, user.cfg under its lock) */
function poolWrite(
  request: Extract<PveRequest, { call: 'createPool' | 'updatePool' | 'deletePool' }>,
  ctx: ActionContext,
): Promise<void> {
  const w = ctx.writer
  const params: Record<string, string | number> = {}
  if (request.call !== 'deletePool')
    for (const [k, v] of Object.entries(request.params)) if (typeof v !== 'object') params[k] = v
  const send =
    request.call === 'createPool'
      ? () => w.createPool(params)
      : request.call === 'updatePool'
        ? () => w.updatePool(params)
        : () => w.deletePool(request.poolid)
  const id = request.call === 'deletePool' ? request.poolid : String(request.params.poolid)
  return write(`${request.call.replace('Pool', '')} pool ${id}`, ctx, send)
}
