/**
 * Planning the datacenter options (pure): one `PUT /cluster/options` with the declared keys whose value differs
 * (pve-manager PVE::API2::Cluster set_options). ProxOps owns only the keys a ClusterOptions manifest declares: a key
 * removed from git stops being managed and is never reset; nothing is ever deleted, so there is no prune.
 */
import type { ClusterOptionsManifest } from '@proxops/schema'
import type { FieldDiff } from '../../plan-types.js'
import { emptyPlan, type KindContext, type KindPlan } from '../../kit/kind.js'
import { declaredClusterOptions, liveClusterOption } from './fields.js'

export const CLUSTER_OPTIONS_ADDRESS = 'ClusterOptions/datacenter'
const KIND = 'ClusterOptions' as const

export function planClusterOptions(ctx: KindContext): KindPlan {
  const out = emptyPlan()
  const m = ctx.desired.manifests.find((x): x is ClusterOptionsManifest => x.kind === 'ClusterOptions')
  if (!m) return out
  const live = ctx.live.clusterOptions
  if (live === undefined || 'unreadable' in live) {
    out.skips.push({
      code: 'unknown',
      address: CLUSTER_OPTIONS_ADDRESS,
      kind: KIND,
      node: '',
      message: `the datacenter options could not be read this cycle (${live === undefined ? 'not read' : live.unreadable}); nothing is written`,
    })
    return out
  }
  const diffs: FieldDiff[] = []
  const params: Record<string, string> = {}
  for (const { key, value } of declaredClusterOptions(m)) {
    const before = liveClusterOption(live.known, key)
    if (before === value) continue
    params[key] = value
    diffs.push({ field: `spec.${key}`, key, ...(before !== undefined ? { before } : {}), after: value })
  }
  if (diffs.length === 0) return out
  out.drafts.push({
    resource: `ClusterOptions/${m.metadata.name}`,
    address: CLUSTER_OPTIONS_ADDRESS,
    kind: KIND,
    name: m.metadata.name,
    node: '',
    disruption: 'none',
    tier: 0,
    level: ctx.levelOf(`ClusterOptions/${m.metadata.name}`),
    type: 'update',
    reason: `${CLUSTER_OPTIONS_ADDRESS}: drift (${diffs.map((d) => d.key).join(', ')})`,
    diffs,
    requests: [{ call: 'setClusterOptions', params }],
  })
  return out
}
