/** Running the HA kind's request: a section-config write, then the wait for the power state it requests. */
import type { PveRequest } from '../../plan-types.js'
import { write, type ActionContext, type Runners } from '../../kit/runners.js'
import { awaitHaPower } from './await-power.js'

export const haRunners = {
  haWrite: (request, { ctx }) => haWrite(request, ctx),
} satisfies Runners

/**
 * One HA section-config write (synchronous in PVE, no task), then, for a change of the requested state, the
 * wait until the guest is in it: the CRM acts a cycle or more later (PVE::HA::Manager), so the write is done
 * when the guest runs or stops, bounded by the task timeout, and failed early when HA will not get there
 * (await-power.ts).
 */
async function haWrite(request: Extract<PveRequest, { call: 'haWrite' }>, ctx: ActionContext): Promise<void> {
  const ha = ctx.writer.haWrite.bind(ctx.writer)
  const params: Record<string, string | number> = {}
  for (const [k, v] of Object.entries(request.params)) if (typeof v !== 'object') params[k] = v
  const what = `${request.method === 'POST' ? 'create' : request.method === 'PUT' ? 'update' : 'delete'} HA ${request.object.replace(/s$/, '')} ${request.id}`
  await write(what, ctx, () => ha(request.object, request.method, request.id, params))
  const target = request.guest
  if (!target) return
  // the write itself set the config state: a config that no longer says it means HA will not get there
  await awaitHaPower(
    {
      node: target.node,
      guest: target.guest,
      vmid: target.vmid,
      want: target.power,
      what,
      timeoutMs: ctx.taskTimeoutMs,
      requestedBy: target.power === 'running' ? ['started'] : ['stopped', 'disabled'],
      leavesError: request.params.state === 'disabled',
    },
    ctx,
  )
}
