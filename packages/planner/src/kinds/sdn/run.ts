/**
 * Running the SDN kinds' requests: config-file edits are synchronous (`lock_sdn_config`); the apply is
 * `PUT /cluster/sdn`, whose `reloadnetworkall` task only starts each node's reload and ends: ProxOps then waits
 * until every online node reports each of its zones `available` (PVE::Network::SDN::Zones::status: `pending`
 * while the node's generated config is older than the running version).
 */
import { resolveParams } from '../../kit/params.js'
import { ActionFailure, call, write, type ActionContext, type Runners } from '../../kit/runners.js'

export const sdnRunners = {
  sdnWrite: async (request, { ctx }) => {
    const { params } = await resolveParams(request.params, undefined)
    const verb = request.method === 'POST' ? 'create' : request.method === 'PUT' ? 'update' : 'delete'
    await write(`${verb} sdn ${request.path}`, ctx, () => ctx.writer.sdnWrite(request.method, request.path, params))
  },
  applySdn: async (_request, { ctx, tasks }) => {
    await call('apply sdn', ctx, tasks, () => ctx.writer.applySdn())
    await waitForNodes(ctx)
  },
} satisfies Runners

/** every online node's zones `available`, within the confirm budget */
async function waitForNodes(ctx: ActionContext): Promise<void> {
  const nodes = (await ctx.reader.clusterResources('node')).filter((n) => n.status === 'online' && n.node !== undefined)
  let waiting: string[] = []
  for (let attempt = 0; attempt <= ctx.confirmAttempts * 4; attempt++) {
    waiting = []
    for (const n of nodes) {
      const zones = await ctx.reader.sdnZoneStatus(n.node as string)
      const pending = zones.filter((z) => z.status !== 'available').map((z) => `${z.zone} ${z.status}`)
      if (pending.length) waiting.push(`${String(n.node)}: ${pending.join(', ')}`)
    }
    if (waiting.length === 0) return
    await ctx.sleep(ctx.confirmDelayMs)
  }
  throw new ActionFailure(`apply sdn: the nodes did not reload the SDN config: ${waiting.join('; ')}`)
}
