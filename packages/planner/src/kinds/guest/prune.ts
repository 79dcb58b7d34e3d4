/**
 * Prunes: only guests this cluster entry owns (ownership.ts) on allowlisted nodes that no manifest claims,
 * never artifacts, never more than the budget, nothing at all for a kind whose desired set is empty (unless
 * allowed) or that would lose more than the ratio limit of its owned objects. Prunes run last (tier 9).
 */
import type { LiveGuest } from '../../inventory.js'
import type { Anomaly, GuestKind, Policy, PveRequest, Skip } from '../../plan-types.js'
import type { Draft } from '../../plan/order.js'
import { ownerOf } from '../../plan/ownership.js'

export const liveKind = (g: Pick<LiveGuest, 'type' | 'template'>): GuestKind =>
  g.type === 'qemu' ? (g.template ? 'TemplateVM' : 'VM') : g.template ? 'TemplateCT' : 'LXC'

const address = (g: LiveGuest): string => `${liveKind(g)}/${g.node}/${g.vmid}${g.name ? `(${g.name})` : ''}`

export interface PruneResult {
  drafts: Draft[]
  anomalies: Anomaly[]
  skips: Skip[]
}

/**
 * @param guests the readable live guests on allowlisted nodes, sorted by vmid
 * @param matched vmids claimed by a desired guest (by vmid) or unknown this cycle
 * @param desiredCounts desired objects per guest kind
 */
export function prunes(
  guests: readonly LiveGuest[],
  matched: ReadonlySet<number>,
  desiredCounts: ReadonlyMap<GuestKind, number>,
  policy: Policy,
  offlineNodes: ReadonlySet<string> = new Set(),
): PruneResult {
  const drafts: Draft[] = []
  const anomalies: Anomaly[] = []
  const skips: Skip[] = []
  const tag = policy.ownershipTag
  const owned = new Map<GuestKind, number>()
  const candidates: LiveGuest[] = []

  for (const g of guests) {
    const kind = liveKind(g)
    const owner = ownerOf(g.tags, policy)
    if (owner.kind === 'self') owned.set(kind, (owned.get(kind) ?? 0) + 1)
    if (matched.has(g.vmid)) continue
    const skip = (code: Skip['code'], message: string) =>
      skips.push({ code, address: address(g), kind, node: g.node, vmid: g.vmid, message })
    if (owner.kind === 'none') {
      skip('untagged', `live object without ${tag} tag; never touched`)
      continue
    }
    if (owner.kind === 'other') {
      skip('owned-elsewhere', `owned by cluster entry ${owner.entries.join(', ')}; never touched by this entry`)
      continue
    }
    if (owner.kind === 'unmarked') {
      skip(
        'unmarked',
        `tagged ${tag} without a cluster-entry marker and absent in git; not pruned (it may be another entry's): add the tag ${tag}.${policy.clusterEntry ?? ''} to let this entry prune it, or delete it by hand`,
      )
      continue
    }
    if (offlineNodes.has(g.node)) {
      skip('node-offline', `node ${g.node} is offline; prune not planned this cycle`)
      continue
    }
    if (g.lock !== undefined && g.lock !== '') {
      skip('locked', `locked: ${g.lock}; prune not planned this cycle`)
      continue
    }
    if (g.config.protection === '1') {
      anomalies.push({
        code: 'protected',
        address: address(g),
        kind,
        field: 'protection',
        message: `${address(g)} is tagged ${tag} and absent in git but PVE protection is on; proxops will not delete it (turn protection off to allow the prune)`,
      })
      continue
    }
    const clones = g.template ? linkedClones(g, guests) : []
    if (clones.length > 0) {
      anomalies.push({
        code: 'template-linked-clones',
        address: address(g),
        kind,
        message: `${address(g)} is tagged ${tag} and absent in git but linked clones still use its base volumes (${clones.map((c) => `${c.type} ${c.vmid}`).join(', ')}); PVE refuses to destroy it, so proxops will not try (destroy or fully clone them first)`,
      })
      continue
    }
    candidates.push(g)
  }

  // guards per kind: the empty-desired guard, then (after the budget) the ratio guard
  const guarded = new Set<GuestKind>()
  const byKind = (k: GuestKind) => candidates.filter((g) => liveKind(g) === k)
  for (const kind of ['VM', 'TemplateVM', 'LXC', 'TemplateCT'] as const) {
    const n = byKind(kind).length
    if (n === 0 || policy.allowEmpty.includes(kind)) continue
    if ((desiredCounts.get(kind) ?? 0) === 0) {
      guarded.add(kind)
      anomalies.push({
        code: 'empty-desired',
        kind,
        message: `0 desired ${kind} but ${n} ${tag}-tagged live object(s) would be pruned: probable bad push; no ${kind} is pruned this cycle (pass --allow-empty ${kind} to accept)`,
      })
    }
  }
  const ordered = candidates
    .filter((g) => !guarded.has(liveKind(g)))
    .sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : a.vmid - b.vmid))
  const budget = policy.pruneBudget === 'unlimited' ? Number.POSITIVE_INFINITY : policy.pruneBudget
  const selected = ordered.slice(0, budget)
  const overBudget = ordered.slice(selected.length)
  for (const kind of ['VM', 'TemplateVM', 'LXC', 'TemplateCT'] as const) {
    if (policy.allowEmpty.includes(kind) || guarded.has(kind)) continue
    const n = selected.filter((g) => liveKind(g) === kind).length
    const total = owned.get(kind) ?? 0
    if (n > 0 && n > policy.pruneRatioLimit * total) {
      guarded.add(kind)
      anomalies.push({
        code: 'prune-ratio',
        kind,
        message: `this cycle would prune ${n} of ${total} ${tag}-tagged ${kind} (more than ${Math.round(policy.pruneRatioLimit * 100)}%): probable bad push; no ${kind} is pruned this cycle`,
      })
    }
  }

  for (const g of candidates) {
    const kind = liveKind(g)
    const skip = (code: Skip['code'], message: string) =>
      skips.push({ code, address: address(g), kind, node: g.node, vmid: g.vmid, message })
    if (guarded.has(kind)) skip('prune-guard', 'prune deferred (empty-desired or ratio guard)')
  }
  for (const g of overBudget) {
    skips.push({
      code: 'prune-budget',
      address: address(g),
      kind: liveKind(g),
      node: g.node,
      vmid: g.vmid,
      message: `prune deferred (budget ${String(policy.pruneBudget)} per cycle)`,
    })
  }
  for (const g of selected) {
    const kind = liveKind(g)
    if (guarded.has(kind)) continue
    const running = g.status === 'running'
    const requests: PveRequest[] = []
    if (running)
      requests.push({
        call: 'shutdown',
        node: g.node,
        guest: g.type,
        vmid: g.vmid,
        timeoutSeconds: policy.shutdownTimeoutSeconds,
        forceStop: policy.forceStopAfterTimeout,
      })
    requests.push({ call: 'deleteGuest', node: g.node, guest: g.type, vmid: g.vmid })
    drafts.push({
      id: `${address(g)}#delete`,
      address: address(g),
      kind,
      ...(g.name ? { name: g.name } : {}),
      node: g.node,
      vmid: g.vmid,
      type: 'delete',
      reason: `present on PVE (${tag}-tagged) but absent in git${running ? '; graceful shutdown first' : ''}`,
      diffs: [],
      disruption: running ? 'stop' : 'none',
      tier: 9,
      level: 0,
      digest: g.digest,
      requests,
    })
  }
  return { drafts, anomalies, skips }
}

/** the volume id of a config value: the leading token, or `file=`/`volume=` (`ceph:base-9000-disk-0,size=8G`) */
function volumeOf(value: string): string | undefined {
  for (const token of value.split(',')) {
    const [k, v] = token.includes('=') ? token.split('=', 2) : [undefined, token]
    if ((k === undefined || k === 'file' || k === 'volume') && v !== undefined && v.includes(':')) return v
  }
  return undefined
}

/**
 * Guests whose disks are linked clones of a template's base volumes. Storages that record the base in the
 * clone's volume id show it (`ceph:base-9000-disk-0/vm-101-disk-0`, `nas:9000/base-9000-disk-0.qcow2/101/...`),
 * as pve-storage `volume_is_base_and_used` sees it; lvmthin clones do not, and there PVE destroys the template.
 */
function linkedClones(template: LiveGuest, guests: readonly LiveGuest[]): LiveGuest[] {
  const bases = Object.values(template.config)
    .map(volumeOf)
    .filter((v): v is string => v !== undefined && /(^|[:/])base(vol)?-\d+-/.test(v))
  if (bases.length === 0) return []
  return guests.filter(
    (g) =>
      g.vmid !== template.vmid &&
      Object.values(g.config).some((value) => {
        const v = volumeOf(value)
        return v !== undefined && bases.some((b) => v.startsWith(`${b}/`))
      }),
  )
}
