/**
 * Guest prunes: only guests this cluster entry owns (kit/ownership.ts) on allowlisted nodes that no manifest
 * claims; the budget and the guards are the prune stage's (plan/prune.ts). Prunes run last (tier 9).
 */
import type { LiveGuest } from '../../inventory.js'
import type { Anomaly, GuestKind, Policy, PveRequest, Skip } from '../../plan-types.js'
import type { Draft } from '../../kit/draft.js'
import type { PruneCandidate, PruneGroup } from '../../kit/kind.js'
import { ownerOf } from '../../kit/ownership.js'
import type { DestroyEffects } from './destroy-effects.js'

export const liveKind = (g: Pick<LiveGuest, 'type' | 'template'>): GuestKind =>
  g.type === 'qemu' ? (g.template ? 'TemplateVM' : 'VM') : g.template ? 'TemplateCT' : 'LXC'

const address = (g: LiveGuest): string => `${liveKind(g)}/${g.node}/${g.vmid}${g.name ? `(${g.name})` : ''}`

/**
 * The guests this entry would prune, for the one prune stage (plan/prune.ts), in its deferral order: by node,
 * then vmid. Unowned, foreign, unmarked, offline, locked, protected and linked-clone templates are reported on
 * the way and never become candidates.
 * @param guests the readable live guests on allowlisted nodes, sorted by vmid
 * @param matched vmids claimed by a desired guest (by vmid) or unknown this cycle
 * @param desiredCounts desired objects per guest kind
 */
export function guestPrunes(
  guests: readonly LiveGuest[],
  matched: ReadonlySet<number>,
  desiredCounts: ReadonlyMap<GuestKind, number>,
  policy: Policy,
  offlineNodes: ReadonlySet<string>,
  effectsOf: (g: LiveGuest) => DestroyEffects,
): PruneGroup {
  const tag = policy.ownershipTag
  const owned = new Map<string, number>()
  for (const g of guests)
    if (ownerOf(g.tags, policy).kind === 'self') owned.set(liveKind(g), (owned.get(liveKind(g)) ?? 0) + 1)
  return {
    guarded: true,
    owner: `${tag}-tagged`,
    noun: 'live object(s)',
    owned,
    desired: desiredCounts,
    candidates: (chosen) => candidates(guests, matched, policy, offlineNodes, effectsOf, chosen),
  }
}

function candidates(
  guests: readonly LiveGuest[],
  matched: ReadonlySet<number>,
  policy: Policy,
  offlineNodes: ReadonlySet<string>,
  effectsOf: (g: LiveGuest) => DestroyEffects,
  chosen: readonly Draft[],
): { candidates: PruneCandidate[]; skips: Skip[]; anomalies: Anomaly[] } {
  const deleting = new Set(chosen.map((d) => d.id))
  const effects = new Map<number, DestroyEffects>()
  const anomalies: Anomaly[] = []
  const skips: Skip[] = []
  const tag = policy.ownershipTag
  const found: LiveGuest[] = []
  for (const g of guests) {
    const kind = liveKind(g)
    const owner = ownerOf(g.tags, policy)
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
    // what PVE's purge takes with it: never an object this entry does not own, and an owned job it would
    // delete is deleted by its own prune first (within the budget), so the destroy finds nothing left to fail on
    const fx = effectsOf(g)
    if (fx.refusals.length > 0) {
      anomalies.push({
        code: 'purge-effect',
        address: address(g),
        kind,
        message: `${address(g)} is tagged ${tag} and absent in git, but ${fx.refusals.join('; ')}; not pruned`,
      })
      continue
    }
    const waiting = fx.ownedJobDeletes.filter((id) => !deleting.has(id))
    if (waiting.length > 0) {
      skip(
        'prune-budget',
        `prune deferred: its destroy (purge) would delete ${waiting.map((id) => id.replace(/#delete$/, '')).join(', ')}, whose own prune is deferred this cycle`,
      )
      continue
    }
    effects.set(g.vmid, fx)
    found.push(g)
  }
  found.sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : a.vmid - b.vmid))
  return {
    candidates: found.map((g) => ({ kind: liveKind(g), draft: deleteDraft(g, policy, effects.get(g.vmid)) })),
    skips,
    anomalies,
  }
}

/** a graceful shutdown first when it runs, then DELETE with purge (docs/safety.md) */
function deleteDraft(g: LiveGuest, policy: Policy, fx: DestroyEffects | undefined): Draft {
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
  return {
    id: `${address(g)}#delete`,
    address: address(g),
    kind: liveKind(g),
    ...(g.name ? { name: g.name } : {}),
    node: g.node,
    vmid: g.vmid,
    type: 'delete',
    reason: `present on PVE (${policy.ownershipTag}-tagged) but absent in git${running ? '; graceful shutdown first' : ''}${fx && fx.notes.length > 0 ? `; PVE's destroy also ${sentence(fx.notes)}` : ''}`,
    diffs: [],
    disruption: running ? 'stop' : 'none',
    tier: 9,
    level: 0,
    digest: g.digest,
    requests,
    ...(fx && fx.ownedJobDeletes.length > 0 ? { after: [...fx.ownedJobDeletes].sort() } : {}),
  }
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
 * The base name follows the storage (`:`) or a directory (`/`): a storage named `base-1-...` makes no base.
 */
function linkedClones(template: LiveGuest, guests: readonly LiveGuest[]): LiveGuest[] {
  const bases = Object.values(template.config)
    .map(volumeOf)
    .filter((v): v is string => v !== undefined && /[:/]base(vol)?-\d+-/.test(v))
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

/** `a`, `a and b`, `a, b and c` */
const sentence = (parts: readonly string[]): string =>
  parts.length <= 1 ? (parts[0] ?? '') : `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`
