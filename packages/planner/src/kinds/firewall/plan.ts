/**
 * Planning a guest's `spec.firewall`: one `firewall` action per guest whose live firewall differs from what its
 * manifest owns (docs/schema-reference.md, `spec.firewall`). The firewall is owned with the guest: it is planned
 * only for a guest this manifest plans (an untagged guest of another name is never reached), never for guests
 * no manifest declares, and a pruned guest's firewall goes with it (PVE's destroy removes `<vmid>.fw`).
 * Firewall changes apply live: `hotplug` for a running guest (held back under `proxops/disruption: none`),
 * `none` for a stopped or new one.
 */
import type { ContainerManifest, Manifest, QemuManifest } from '@proxops/schema'
import { isGuest } from '../../desired.js'
import type { LiveFirewall, LiveGuest } from '../../inventory.js'
import type { DisruptionPolicy, FieldDiff, Gap, Skip } from '../../plan-types.js'
import type { GuestType } from '@proxops/pve-client/wire'
import { allowed } from '../guest/disruption.js'
import { disruptionFor } from '../guest/guest-plan.js'
import { emptyPlan, type KindContext, type KindPlan } from '../../kit/kind.js'
import type { Draft } from '../../kit/draft.js'
import {
  desiredFirewall,
  EMPTY_FIREWALL,
  firewallWrites,
  liveFirewall,
  liveOption,
  OPTION_KEYS,
  ruleLine,
  type CanonFirewall,
  type CanonIpset,
} from './canon.js'
import { DISRUPTION_OVERRIDE } from '../../kit/guard-overrides.js'

export interface FirewallPlanInput {
  m: QemuManifest | ContainerManifest
  type: GuestType
  address: string
  base: Omit<Draft, 'type' | 'reason' | 'diffs' | 'disruption' | 'requests'>
  /** the live guest; undefined when this plan creates it */
  live?: LiveGuest
  /** the create or clone draft of a new guest */
  createdBy?: string
  firewalls: ReadonlyMap<number, LiveFirewall>
  policy: DisruptionPolicy
}

export interface FirewallPlanOut {
  drafts: Draft[]
  skips: Skip[]
  gaps: Gap[]
}

/** The firewall of every planned guest whose manifest declares spec.firewall. */
export function planFirewalls(ctx: KindContext): KindPlan {
  const out = emptyPlan()
  const firewalls = new Map(ctx.live.firewalls.map((f) => [f.vmid, f]))
  for (const g of ctx.guests) {
    if (g.m.spec.firewall === undefined) continue
    planFirewall(
      {
        m: g.m,
        type: g.type,
        address: g.base.address,
        base: g.base,
        ...(g.live ? { live: g.live } : {}),
        ...(g.createdBy !== undefined ? { createdBy: g.createdBy } : {}),
        firewalls,
        policy: disruptionFor(g.m, ctx.policy.disruption),
      },
      out,
    )
  }
  return out
}

function planFirewall(i: FirewallPlanInput, out: FirewallPlanOut): void {
  const spec = i.m.spec.firewall
  if (spec === undefined) return
  const { node, vmid } = i.m.spec
  const desired = desiredFirewall(spec)
  const skip = (code: Skip['code'], message: string) =>
    out.skips.push({ code, address: i.address, kind: i.m.kind, node, vmid, message })
  noFilteringNic(i, out)

  let live: CanonFirewall | undefined
  if (i.live) {
    const entry = i.firewalls.get(vmid)
    if (!entry || 'unreadable' in entry) {
      skip('unknown', `firewall could not be read this cycle (${entry ? entry.unreadable : 'not read'}); not planned`)
      return
    }
    live = liveFirewall(entry.known)
  } else if (i.createdBy === undefined) {
    return
  }
  const writes = firewallWrites(live ?? EMPTY_FIREWALL, desired)
  if (writes.length === 0) return
  const running = i.live !== undefined && i.live.status === 'running'
  const disruption = running ? 'hotplug' : 'none'
  if (!allowed(disruption, i.policy)) {
    skip(
      'disruption',
      `firewall changes apply to the running guest at once and disruption is ${i.policy}; not written this cycle (${DISRUPTION_OVERRIDE})`,
    )
    return
  }
  const diffs = firewallDiffs(live ?? EMPTY_FIREWALL, desired)
  const fields = [
    ...new Set(diffs.map((d) => d.field.replace(/\[.*$/, '').replace(/^spec\.firewall\.?/, '') || 'firewall')),
  ]
  out.drafts.push({
    ...i.base,
    kind: 'GuestFirewall',
    // under the guest's address beside the guest's own update: the id says it is its firewall's
    id: `${i.base.address}#firewall`,
    type: 'update',
    reason: `${i.m.kind}/${i.m.metadata.name}: ${live ? 'firewall drift' : 'firewall of the new guest'} (${fields.join(', ')})`,
    diffs,
    disruption,
    ...(i.createdBy === undefined ? {} : { after: [i.createdBy] }),
    requests: [
      {
        call: 'firewall',
        node,
        guest: i.type,
        vmid,
        desired,
        ...(live ? { live } : {}),
        writes,
      },
    ],
  })
}

/** an enabled firewall filters only on NICs with `firewall=1`: say so when none has it (declared or live) */
function noFilteringNic(i: FirewallPlanInput, out: FirewallPlanOut): void {
  if (!i.m.spec.firewall?.enable) return
  const declared = i.m.spec.networks
  const liveNics = Object.entries(i.live?.config ?? {}).filter(([k]) => /^net\d+$/.test(k))
  const filtering =
    declared.length > 0 ? declared.some((n) => n.firewall) : liveNics.some(([, v]) => /(^|,)firewall=1(,|$)/.test(v))
  if (filtering || (declared.length === 0 && liveNics.length === 0)) return
  out.gaps.push({
    address: i.address,
    field: 'spec.firewall.enable',
    note: 'the guest firewall is enabled but no NIC has firewall=1, so PVE filters no traffic of this guest',
  })
}

const entryText = (e: CanonIpset['entries'][number]) =>
  `${e.nomatch ? '!' : ''}${e.cidr}${e.comment === undefined ? '' : ` # ${e.comment}`}`
const setText = (s: CanonIpset | undefined) =>
  s === undefined
    ? undefined
    : `${s.comment === undefined ? '' : `# ${s.comment}: `}${s.entries.map(entryText).join(', ') || '(empty)'}`

/** Per-field and per-rule differences, for the plan's display (the writes are derived separately). */
export function firewallDiffs(live: CanonFirewall, desired: CanonFirewall): FieldDiff[] {
  const out: FieldDiff[] = []
  const push = (field: string, key: string, before: string | undefined, after: string | undefined) => {
    if (before === after) return
    out.push({ field, key, ...(before === undefined ? {} : { before }), ...(after === undefined ? {} : { after }) })
  }
  for (const [yaml, pve] of Object.entries(OPTION_KEYS)) {
    if (desired.options[pve] === undefined) continue
    const before = live.options[pve]
    if (liveOption(live.options, pve) === desired.options[pve]) continue
    push(`spec.firewall.${yaml}`, `firewall.options.${pve}`, before, desired.options[pve])
  }
  const aliasText = (a: CanonFirewall['aliases'][number] | undefined) =>
    a === undefined ? undefined : `${a.name} ${a.cidr}${a.comment === undefined ? '' : ` # ${a.comment}`}`
  const names = [...new Set([...live.aliases, ...desired.aliases].map((a) => a.name.toLowerCase()))].sort()
  for (const n of names) {
    const l = live.aliases.find((a) => a.name.toLowerCase() === n)
    const d = desired.aliases.find((a) => a.name.toLowerCase() === n)
    push(`spec.firewall.aliases[${d?.name ?? l?.name ?? n}]`, 'firewall.alias', aliasText(l), aliasText(d))
  }
  const sets = [...new Set([...live.ipsets, ...desired.ipsets].map((s) => s.name))].sort()
  for (const n of sets) {
    push(
      `spec.firewall.ipsets[${n}]`,
      'firewall.ipset',
      setText(live.ipsets.find((s) => s.name === n)),
      setText(desired.ipsets.find((s) => s.name === n)),
    )
  }
  const count = Math.max(live.rules.length, desired.rules.length)
  for (let p = 0; p < count; p++) {
    const l = live.rules[p]
    const d = desired.rules[p]
    push(
      `spec.firewall.rules[${p}]`,
      'firewall.rule',
      l === undefined ? undefined : ruleLine(l),
      d === undefined ? undefined : ruleLine(d),
    )
  }
  return out
}

/** the vmids observe() must read firewalls of: the guests whose manifests declare spec.firewall */
export function firewallVmids(desired: { manifests: readonly Manifest[] }): number[] {
  const out: number[] = []
  for (const m of desired.manifests) {
    if (!isGuest(m)) continue
    if (m.spec.firewall !== undefined) out.push(m.spec.vmid)
  }
  return out.sort((a, b) => a - b)
}
