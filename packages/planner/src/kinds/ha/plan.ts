/**
 * Planning `spec.ha`: a guest's pve-ha-manager resource (`vm:<vmid>` / `ct:<vmid>`) and its node preference,
 * an HA group on PVE 8 (`/cluster/ha/groups`) or a node-affinity rule on PVE 9 (`/cluster/ha/rules`), both
 * named `proxops-<vm|ct>-<vmid>`. Pure: reads the LiveHa observe() produced, returns drafts.
 *
 * Ownership: ProxOps marks what it writes with the comment `<ownership tag>: <Kind>/<name>`
 * (docs/safety.md#ha). Declaring `spec.ha` claims the guest's resource (an unmarked one is taken over and
 * marked); only a marked resource, group or rule is ever removed, and removals count against the prune budget.
 *
 * Power through HA: for an HA-managed guest the requested state of its resource is the power state. While the
 * resource lacks the declared state, the guest's own power actions are not planned (`pinnedPower`): the HA
 * write requests the state and the executor waits until the guest is in it. Once the resource holds it, a
 * guest in the other state gets the ordinary start / shutdown, which PVE turns into `hastart` / `hastop`
 * (qemu-server vm_start/vm_shutdown, pve-container Status.pm) and so also goes through HA.
 */
import type { HaSpec, LxcManifest, Manifest, PowerState, VmManifest } from '@proxops/schema'
import { known, type LiveGuest, type LiveHa, type Observed } from '../../inventory.js'
import type { Anomaly, DisruptionClass, FieldDiff, PlanParamValue, Policy, PveRequest, Skip } from '../../plan-types.js'
import { isTrue, splitList, type GuestType, type HaItem } from '@proxops/pve-client/wire'
import { skipOn, type Draft, type DraftBase } from '../../kit/draft.js'
import { nodeAffinityRefusal } from './feasibility.js'
import { parseNodePriorities } from './nodes.js'

export { parseNodePriorities }
import { emptyPlan, type KindContext, type KindPlan, type PruneCandidate } from '../../kit/kind.js'
import { PRUNE_BUDGET_OVERRIDE } from '../../kit/guard-overrides.js'

type Guest = VmManifest | LxcManifest
type Requested = 'started' | 'stopped' | 'disabled' | 'ignored'

export const haSid = (type: GuestType, vmid: number): string => `${type === 'qemu' ? 'vm' : 'ct'}:${vmid}`
export const haPreferenceId = (type: GuestType, vmid: number): string =>
  `proxops-${type === 'qemu' ? 'vm' : 'ct'}-${vmid}`
export const haMarker = (tag: string, kind: string, name: string): string => `${tag}: ${kind}/${name}`
export const haOwned = (item: HaItem | undefined, tag: string): boolean =>
  item?.comment !== undefined && item.comment.startsWith(`${tag}:`)

/** the resource state the manifest asks for (`spec.ha.state`, else `spec.state`) */
export function requestedState(m: Guest): Requested | undefined {
  const ha = m.spec.ha
  if (!ha) return undefined
  return ha.state ?? (m.spec.state === 'started' ? 'started' : 'stopped')
}

/** PVE::HA::Config::read_and_check_resources_config: no state = started, `enabled` = started */
const liveState = (r: HaItem): string => (r.state === undefined || r.state === 'enabled' ? 'started' : r.state)
const powerOf = (s: Requested): 'running' | 'stopped' | undefined =>
  s === 'started' ? 'running' : s === 'ignored' ? undefined : 'stopped'

const formatNodes = (nodes: Readonly<Record<string, number>>): string =>
  Object.keys(nodes)
    .sort()
    .map((n) => `${n}:${nodes[n]}`)
    .join(',')
const sameNodes = (live: string | undefined, want: Readonly<Record<string, number>>): boolean => {
  const l = parseNodePriorities(live)
  const w = Object.entries(want)
  return l.size === w.length && w.every(([n, p]) => l.get(n) === p)
}
export interface HaEnv {
  ha: Observed<LiveHa>
  ownershipTag: string
  drafts: Draft[]
  anomalies: Anomaly[]
  skips: Skip[]
  /** removals of a resource ProxOps owns, for the prune stage's budget */
  removals: PruneCandidate[]
  /** the prune budget, for the message of a removal it defers */
  budget: Policy['pruneBudget']
}

type Base = DraftBase

const resourceIndex = new WeakMap<LiveHa, Map<string, HaItem>>()
/** the HA resources by sid, indexed once per inventory */
function resourcesOf(ha: LiveHa): Map<string, HaItem> {
  let index = resourceIndex.get(ha)
  if (!index) {
    index = new Map()
    for (const r of ha.resources) if (r.sid !== undefined) index.set(r.sid, r)
    resourceIndex.set(ha, index)
  }
  return index
}

/**
 * The power state the guest planner should plan towards instead of `spec.state` (no power action of its
 * own), or undefined to plan as usual: while the HA resource does not yet request the declared state, the HA
 * write carries the power change. Unknown HA pins to the live power: nothing is started or stopped.
 */
export function pinnedPower(m: Manifest, g: LiveGuest | undefined, ha: Observed<LiveHa>): PowerState | undefined {
  if (!isGuest(m)) return undefined
  const want = requestedState(m)
  if (want === undefined) return undefined
  const live = g === undefined ? 'stopped' : g.status === 'running' ? 'started' : 'stopped'
  if ('unreadable' in ha) return live
  if (want === 'ignored') return undefined
  // a service in error starts or stops nothing until it is disabled: no power action of the guest's own either
  if (g?.haError === true && want !== 'disabled') return live
  const r = resourcesOf(ha.known).get(haSid(m.kind === 'VM' ? 'qemu' : 'lxc', m.spec.vmid))
  return r !== undefined && liveState(r) === want ? undefined : live
}

/**
 * A guest whose HA service is in `error` (pve-ha-manager next_state_error): the manager starts, stops and moves
 * nothing until the resource is requested `disabled`, so no write of this cycle could converge it, and ProxOps
 * does not disable it on its own (that would hide a failure an admin must look at). PVE's ERROR RECOVERY, done
 * from git: fix the cause, set `spec.ha.state: disabled` (with `spec.state: stopped`) and apply (the service goes to `stopped`), then set the
 * state back and apply.
 */
function haErrorAnomaly(m: Guest, sid: string, base: Base): Anomaly {
  return {
    code: 'ha-error',
    address: base.address,
    kind: m.kind,
    field: 'spec.ha.state',
    message: `the HA manager holds ${sid} in state error (a start or stop failed on every node it may use, see the node's task list); HA starts or stops it no more until it is disabled: fix the cause, set spec.ha.state: disabled (with spec.state: stopped) and apply, then set both back (docs/safety.md#ha-error)`,
  }
}

/**
 * The HA kind: every planned VM and LXC's resource and node preference, after the guest's own actions and its
 * firewall (a new guest exists before its resource is created). Removals go to the prune stage.
 */
export function planHa(ctx: KindContext): KindPlan {
  const out = emptyPlan()
  const removals: PruneCandidate[] = []
  const planner = new HaPlanner({
    ha: ctx.live.ha,
    ownershipTag: ctx.policy.ownershipTag,
    ...out,
    removals,
    budget: ctx.policy.pruneBudget,
  })
  const resources = 'known' in ctx.live.ha ? resourcesOf(ctx.live.ha.known) : new Map<string, HaItem>()
  for (const g of ctx.guests) {
    const m = g.m
    if (m.kind !== 'VM' && m.kind !== 'LXC') continue
    // a guest without spec.ha plans HA only to remove a resource it has
    if (m.spec.ha === undefined && !resources.has(haSid(g.type, m.spec.vmid))) continue
    planner.plan(m, g.type, g.live, g.base, ctx.actionsOf(g.base.address))
  }
  removals.sort((a, b) => (a.draft.address < b.draft.address ? -1 : a.draft.address > b.draft.address ? 1 : 0))
  out.prunes = {
    guarded: false,
    owner: 'owned',
    noun: 'HA resource(s)',
    owned: new Map(),
    desired: new Map(),
    candidates: () => ({ candidates: removals, skips: [], anomalies: [] }),
  }
  return out
}

/** Plans every declared guest's HA against one LiveHa. */
class HaPlanner {
  private readonly resources: ReadonlyMap<string, HaItem> = new Map()
  private readonly preferences = new Map<string, HaItem>()

  constructor(private readonly env: HaEnv) {
    const ha = known(env.ha)
    if (ha) {
      this.resources = resourcesOf(ha)
      for (const p of ha.preferences) {
        const id = ha.form === 'groups' ? p.group : p.rule
        if (id !== undefined) this.preferences.set(id, p)
      }
    }
  }

  /**
   * The HA actions of one declared guest. `after`: the guest's own action ids this cycle (the HA write runs
   * after them, so a new guest exists before its resource is created).
   */
  plan(m: Guest, type: GuestType, g: LiveGuest | undefined, base: Base, after: string[]): void {
    const observed = this.env.ha
    const skip = (message: string) => this.env.skips.push(skipOn(base, m.spec.vmid, 'unknown', message))
    if ('unreadable' in observed) {
      if (m.spec.ha) skip(`the HA configuration could not be read this cycle (${observed.unreadable}); HA not planned`)
      return
    }
    const ha = observed.known
    const sid = haSid(type, m.spec.vmid)
    const prefId = haPreferenceId(type, m.spec.vmid)
    const live = this.resources.get(sid)
    const pref = this.preferences.get(prefId)
    const tag = this.env.ownershipTag
    const spec = m.spec.ha
    if (!spec) {
      if (live && haOwned(live, tag)) this.remove(m, type, base, sid, pref, after)
      return
    }
    const want = requestedState(m) as Requested
    if (g?.haError === true && want !== 'disabled') {
      this.env.anomalies.push(haErrorAnomaly(m, sid, base))
      return
    }
    const marker = haMarker(tag, m.kind, m.metadata.name)
    const diffs: FieldDiff[] = []
    const params: Record<string, PlanParamValue> = {}
    const field = (key: string, before: string | undefined, value: string) => {
      if (before === value) return
      params[key] = value
      diffs.push({
        field: `spec.ha.${key === 'comment' ? 'ownership' : key}`,
        key,
        ...(before !== undefined ? { before } : {}),
        after: value,
      })
    }
    field('state', live ? liveState(live) : undefined, want)
    field('max_restart', live ? (live.max_restart ?? '1') : undefined, String(spec.max_restart))
    field('max_relocate', live ? (live.max_relocate ?? '1') : undefined, String(spec.max_relocate))
    field('comment', live?.comment, marker)

    const before: PveRequest[] = []
    const later: PveRequest[] = []
    const deleteKeys: string[] = []
    if (ha.form === 'groups') this.planGroup(spec, prefId, pref, marker, live, params, diffs, deleteKeys, before, later)
    else if (!this.planRule(m, base, spec, sid, prefId, pref, marker, diffs, later)) return

    if (diffs.length === 0) return
    const power = params.state !== undefined ? powerOf(want) : undefined
    const running = g?.status === 'running'
    const haWrite: PveRequest = {
      call: 'haWrite',
      object: 'resources',
      method: live ? 'PUT' : 'POST',
      id: sid,
      params: live
        ? { ...params, ...(deleteKeys.length > 0 ? { delete: deleteKeys.join(',') } : {}) }
        : { sid, ...params },
      // a changed requested state is waited for even when the guest is in it already: HA may be about to move
      // it (a request of the old state not yet carried out), and the write is done when the manager agrees
      ...(power !== undefined ? { guest: { node: m.spec.node, guest: type, vmid: m.spec.vmid, power } } : {}),
    }
    const requests = [...before]
    if (live === undefined || Object.keys(haWrite.params).length > 0) requests.push(haWrite)
    requests.push(...later)
    const stops = power === 'stopped' && running
    this.push(
      base,
      live ? 'update' : 'create',
      this.reason(m, sid, live !== undefined, diffs),
      diffs,
      stops ? 'stop' : 'none',
      requests,
      after,
    )
  }

  /** 8.x: the group `proxops-<vm|ct>-<vmid>` and the resource's `group` */
  private planGroup(
    spec: HaSpec,
    id: string,
    pref: HaItem | undefined,
    marker: string,
    live: HaItem | undefined,
    params: Record<string, PlanParamValue>,
    diffs: FieldDiff[],
    deleteKeys: string[],
    before: PveRequest[],
    later: PveRequest[],
  ): void {
    if (spec.nodes === undefined) {
      // the preference was removed: unset the resource's group and delete ours (never someone else's)
      if (live?.group === id) {
        deleteKeys.push('group')
        diffs.push({ field: 'spec.ha.nodes', key: 'group', before: id })
      }
      if (pref && haOwned(pref, this.env.ownershipTag)) {
        later.push({ call: 'haWrite', object: 'groups', method: 'DELETE', id, params: {} })
        if (live?.group !== id) diffs.push({ field: 'spec.ha.nodes', key: `group ${id}`, before: pref.nodes ?? '' })
      }
      return
    }
    const nodes = formatNodes(spec.nodes)
    const restricted = spec.strict ? '1' : '0'
    const group: Record<string, PlanParamValue> = {}
    if (!pref || !sameNodes(pref.nodes, spec.nodes)) group.nodes = nodes
    if (!pref || isTrue(pref.restricted) !== spec.strict) group.restricted = Number(restricted)
    if (!pref || pref.comment !== marker) group.comment = marker
    if (Object.keys(group).length > 0) {
      for (const [k, v] of Object.entries(group))
        diffs.push({
          field: k === 'nodes' ? 'spec.ha.nodes' : k === 'restricted' ? 'spec.ha.strict' : 'spec.ha.ownership',
          key: `group ${id} ${k}`,
          ...(pref?.[k] !== undefined ? { before: pref[k] } : {}),
          after: String(v),
        })
      before.push(
        pref
          ? { call: 'haWrite', object: 'groups', method: 'PUT', id, params: group }
          : { call: 'haWrite', object: 'groups', method: 'POST', id, params: { group: id, ...group } },
      )
    }
    if (live?.group !== id) {
      params.group = id
      diffs.push({
        field: 'spec.ha.nodes',
        key: 'group',
        ...(live?.group !== undefined ? { before: live.group } : {}),
        after: id,
      })
    }
  }

  /** 9.x: the node-affinity rule `proxops-<vm|ct>-<vmid>`; false when a rule ProxOps does not own blocks it */
  private planRule(
    m: Guest,
    base: Base,
    spec: HaSpec,
    sid: string,
    id: string,
    pref: HaItem | undefined,
    marker: string,
    diffs: FieldDiff[],
    later: PveRequest[],
  ): boolean {
    if (spec.nodes === undefined) {
      if (pref && haOwned(pref, this.env.ownershipTag)) {
        later.push({ call: 'haWrite', object: 'rules', method: 'DELETE', id, params: {} })
        diffs.push({ field: 'spec.ha.nodes', key: `rule ${id}`, before: pref.nodes ?? '' })
      }
      return true
    }
    // NodeAffinity check_single_resource_reference: PVE refuses a second enabled node-affinity rule naming sid
    for (const [other, r] of this.preferences) {
      if (other === id || r.type !== 'node-affinity' || isTrue(r.disable)) continue
      if (!splitList(r.resources).includes(sid)) continue
      this.env.anomalies.push({
        code: 'ha-conflict',
        address: base.address,
        kind: base.kind,
        field: 'spec.ha.nodes',
        message: `${sid} is already in the node-affinity rule ${other}, which ProxOps does not own; PVE allows one per resource: remove ${sid} from it (or remove spec.ha.nodes of ${m.kind}/${m.metadata.name})`,
      })
      return false
    }
    // the rule plugins' feasibility checks over the whole rule set (kinds/ha/feasibility.ts): blocked in diff
    const refusal = nodeAffinityRefusal(id, sid, spec.nodes, [...this.preferences.values()])
    if (refusal !== undefined) {
      this.env.anomalies.push({
        code: 'ha-conflict',
        address: base.address,
        kind: base.kind,
        field: 'spec.ha.nodes',
        message: `PVE would refuse the node-affinity rule ${id}: ${refusal}; HA of ${m.kind}/${m.metadata.name} is not written this cycle`,
      })
      return false
    }
    const rule: Record<string, PlanParamValue> = {}
    if (!pref || pref.resources !== sid) rule.resources = sid
    if (!pref || !sameNodes(pref.nodes, spec.nodes)) rule.nodes = formatNodes(spec.nodes)
    if (!pref || isTrue(pref.strict) !== spec.strict) rule.strict = spec.strict ? 1 : 0
    if (!pref || pref.comment !== marker) rule.comment = marker
    const del = pref && isTrue(pref.disable) ? ['disable'] : []
    if (Object.keys(rule).length === 0 && del.length === 0) return true
    for (const [k, v] of Object.entries(rule))
      diffs.push({
        field:
          k === 'nodes'
            ? 'spec.ha.nodes'
            : k === 'strict'
              ? 'spec.ha.strict'
              : k === 'comment'
                ? 'spec.ha.ownership'
                : 'spec.ha',
        key: `rule ${id} ${k}`,
        ...(pref?.[k] !== undefined ? { before: pref[k] } : {}),
        after: String(v),
      })
    if (del.length > 0) diffs.push({ field: 'spec.ha.nodes', key: `rule ${id} disable`, before: '1' })
    later.push(
      pref
        ? {
            call: 'haWrite',
            object: 'rules',
            method: 'PUT',
            id,
            params: { type: 'node-affinity', ...rule, ...(del.length > 0 ? { delete: del.join(',') } : {}) },
          }
        : {
            call: 'haWrite',
            object: 'rules',
            method: 'POST',
            id,
            params: { rule: id, type: 'node-affinity', ...rule },
          },
    )
    return true
  }

  /** `spec.ha` removed from a guest whose resource ProxOps owns: delete it (purge takes it out of its rule) */
  private remove(m: Guest, type: GuestType, base: Base, sid: string, pref: HaItem | undefined, after: string[]): void {
    const requests: PveRequest[] = [{ call: 'haWrite', object: 'resources', method: 'DELETE', id: sid, params: {} }]
    const diffs: FieldDiff[] = [{ field: 'spec.ha', key: sid, before: liveState(this.resources.get(sid) as HaItem) }]
    const ha = known(this.env.ha) as LiveHa
    if (pref && haOwned(pref, this.env.ownershipTag)) {
      // a rule is purged with its last resource; an owned group is deleted once the resource is gone
      if (ha.form === 'groups')
        requests.push({ call: 'haWrite', object: 'groups', method: 'DELETE', id: pref.group ?? '', params: {} })
      diffs.push({
        field: 'spec.ha.nodes',
        key: `${ha.form === 'groups' ? 'group' : 'rule'} ${haPreferenceId(type, m.spec.vmid)}`,
        before: pref.nodes ?? '',
      })
    }
    this.env.removals.push({
      kind: 'HA',
      draft: this.draft(
        base,
        'delete',
        `${m.kind}/${m.metadata.name}: spec.ha removed; HA resource ${sid} (owned) will be removed`,
        diffs,
        'none',
        requests,
        after,
      ),
      overBudget: `removing HA resource ${sid} is over the prune budget (${this.env.budget}) this cycle (${PRUNE_BUDGET_OVERRIDE})`,
    })
  }

  private reason(m: Guest, sid: string, exists: boolean, diffs: readonly FieldDiff[]): string {
    const keys = [...new Set(diffs.map((d) => d.key))].join(', ')
    return exists
      ? `${m.kind}/${m.metadata.name}: HA resource ${sid} drift (${keys})`
      : `${m.kind}/${m.metadata.name}: HA resource ${sid} not on PVE; will create (${keys})`
  }

  private push(...draft: Parameters<typeof this.draft>): void {
    this.env.drafts.push(this.draft(...draft))
  }

  private draft(
    base: Base,
    type: 'create' | 'update' | 'delete',
    reason: string,
    diffs: FieldDiff[],
    disruption: DisruptionClass,
    requests: PveRequest[],
    after: string[],
  ): Draft {
    return {
      ...base,
      kind: 'HA',
      // under the guest's address beside the guest's own actions: the id says it is its HA resource's
      id: `${base.address}#ha-${type}`,
      type,
      reason,
      diffs: diffs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
      disruption,
      requests,
      after: after.slice(),
    }
  }
}

const isGuest = (m: Manifest): m is Guest => m.kind === 'VM' || m.kind === 'LXC'
