/**
 * adopt: a guest's pve-ha-manager resource as `spec.ha`, in the shape a user writes, so that the adopted
 * manifest plans nothing but the ownership claim (the marker comment). The node preference is adopted only
 * from the group (8.x) or node-affinity rule (9.x) ProxOps itself would write (`proxops-<vm|ct>-<vmid>`,
 * planner/src/ha/plan.ts); a shared group or someone else's rule is a gap and stays theirs.
 *
 * While HA manages a guest its power state is what the resource requests (PVE::HA::Config
 * read_and_check_resources_config: no state = started, `enabled` = started), so that is what `spec.state`
 * says; a guest not (yet) in that state is a warning, not a different manifest.
 */
import { isTrue, splitList, type GuestType, type HaItem } from '@proxops/pve-client/wire'
import type { LiveGuest, LiveHa, Observed } from '../../inventory.js'
import { haOwned, haPreferenceId, haSid, parseNodePriorities } from './plan.js'

/** resource properties spec.ha models, plus what PVE lists beside them */
const MODELLED = new Set(['sid', 'type', 'digest', 'state', 'max_restart', 'max_relocate', 'comment', 'group'])

export interface AdoptedHa {
  /** `spec.ha`; absent when the guest is no HA resource (or HA could not be read) */
  ha?: Record<string, unknown>
  /** `spec.state` as the resource requests it; absent = the guest's live power */
  state?: 'started' | 'stopped'
  gaps: { field: string; value: string; note: string }[]
  warnings: string[]
  /** set when the manifest cannot be listed as it is (HA unreadable: spec.ha absent would delete it) */
  incomplete?: string
}

/** the node preference as spec.ha writes it: node -> priority, sorted by node */
const nodePriorities = (value: string | undefined): Record<string, number> =>
  Object.fromEntries([...parseNodePriorities(value)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))

export function adoptHa(guest: LiveGuest, observed: Observed<LiveHa>, tag: string): AdoptedHa {
  const out: AdoptedHa = { gaps: [], warnings: [] }
  const type: GuestType = guest.type
  const sid = haSid(type, guest.vmid)
  if (guest.template) {
    // templates have no spec.ha, and the planner never plans HA for them
    if ('known' in observed && observed.known.resources.some((x) => x.sid === sid))
      out.gaps.push({ field: 'ha', value: sid, note: 'a template is not managed as an HA resource; left as it is' })
    return out
  }
  if ('unreadable' in observed) {
    // without spec.ha the planner would remove a resource ProxOps marked: never list such a file unreviewed
    out.incomplete = `spec.ha: the HA configuration could not be read (${observed.unreadable}); adopt again to learn whether ${sid} is an HA resource`
    return out
  }
  const live = observed.known
  const r = live.resources.find((x) => x.sid === sid)
  if (!r) return out

  const state = r.state === undefined || r.state === 'enabled' ? 'started' : r.state
  const ha: Record<string, unknown> = {}
  if (state === 'ignored') ha.state = 'ignored'
  else {
    out.state = state === 'started' ? 'started' : 'stopped'
    if (state === 'disabled') ha.state = 'disabled'
    const running = guest.status === 'running'
    if (running !== (state === 'started'))
      out.warnings.push(
        `${sid} on ${guest.node}: HA requests ${state} but the guest is ${guest.status}; adopted as spec.state: ${out.state}`,
      )
  }
  for (const key of ['max_restart', 'max_relocate'] as const)
    if (r[key] !== undefined && r[key] !== '1') ha[key] = Number(r[key])
  if (r.comment !== undefined && r.comment !== '' && !haOwned(r, tag))
    out.gaps.push({
      field: 'ha.comment',
      value: r.comment,
      note: 'the first apply replaces the resource comment with the ownership marker',
    })
  for (const [key, value] of Object.entries(r))
    if (!MODELLED.has(key) && !(key === 'failback' && value === '1'))
      out.gaps.push({ field: `ha.${key}`, value, note: 'HA resource option not modelled' })

  const own = haPreferenceId(type, guest.vmid)
  if (live.form === 'groups') adoptGroup(r, own, live.preferences, ha, out)
  else adoptRule(sid, own, live.preferences, ha, out)
  out.ha = ha
  return out
}

/** 8.x: the resource's group, when it is the guest's own `proxops-<vm|ct>-<vmid>` */
function adoptGroup(r: HaItem, own: string, groups: readonly HaItem[], ha: Record<string, unknown>, out: AdoptedHa) {
  if (r.group === undefined || r.group === '') return
  const g = groups.find((x) => x.group === r.group)
  if (r.group !== own || g === undefined) {
    out.gaps.push({
      field: 'ha.group',
      value: r.group,
      note: `node preference of a group ProxOps does not write (its own would be ${own}); not adopted, the resource keeps it`,
    })
    return
  }
  ha.nodes = nodePriorities(g.nodes)
  if (isTrue(g.restricted)) ha.strict = true
  if (isTrue(g.nofailback)) out.gaps.push({ field: `ha.group ${own} nofailback`, value: '1', note: 'not modelled' })
}

/** 9.x: the node-affinity rule `proxops-<vm|ct>-<vmid>` (the planner puts it back to this resource alone, enabled) */
function adoptRule(sid: string, own: string, rules: readonly HaItem[], ha: Record<string, unknown>, out: AdoptedHa) {
  for (const rule of rules) {
    if (!splitList(rule.resources).includes(sid)) continue
    const id = rule.rule ?? ''
    if (id === own && rule.type === 'node-affinity') {
      ha.nodes = nodePriorities(rule.nodes)
      if (isTrue(rule.strict)) ha.strict = true
      if (rule.resources !== sid || isTrue(rule.disable))
        out.gaps.push({
          field: `ha.rule ${id}`,
          value: `${isTrue(rule.disable) ? 'disabled ' : ''}${rule.resources ?? ''}`,
          note: `the first apply makes the rule enabled and for ${sid} alone`,
        })
      continue
    }
    out.gaps.push({
      field: `ha.rule ${id}`,
      value: `${rule.type ?? ''} ${rule.resources ?? ''}`.trim(),
      note:
        rule.type === 'node-affinity'
          ? `node preference in a rule ProxOps does not write (its own would be ${own}); not adopted, the rule stays as it is`
          : 'HA rule type not modelled; left as it is',
    })
  }
}
