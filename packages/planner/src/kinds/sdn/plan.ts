/**
 * Planning the SDN kinds (pve-network): each declared controller, zone, vnet and subnet is created or its owned
 * keys updated in the config files, and a plan with SDN writes ends them with one `PUT /cluster/sdn`
 * (`SdnApply/cluster`, type `update`), which every guest on a declared vnet waits for. The apply makes every
 * pending edit running, whoever made it: so when any SDN object carries pending edits that are not this plan's
 * own (the values the manifests declare, left by an interrupted run), no SDN write is planned and each such
 * object is an `sdn-pending` anomaly naming its pending keys. Nothing SDN is deleted (docs/network.md).
 */
import type { SdnObject } from '@proxops/pve-client/wire'
import { sdnConfigValues } from '@proxops/pve-client/wire'
import type { Manifest } from '@proxops/schema'
import type { LiveSdn } from '../../inventory.js'
import { skipUnread, unreadReason, type Draft } from '../../kit/draft.js'
import { emptyPlan, type KindContext, type KindPlan } from '../../kit/kind.js'
import { keyOf } from '../../kit/deps.js'
import { commentMarker } from '../../kit/ownership.js'
import { compare } from '../../kit/text.js'
import type { FieldDiff, ResourceKind } from '../../plan-types.js'
import { desiredValues, sendValues, type SdnManifest } from './fields.js'

export const SDN_KINDS = ['SdnController', 'Zone', 'VNet', 'Subnet'] as const
export const APPLY_ADDRESS = 'SdnApply/cluster'

export const isSdn = (m: Manifest): m is SdnManifest => (SDN_KINDS as readonly string[]).includes(m.kind)

/** a subnet's PVE id: `<zone>-<network>-<mask>` (the Subnets create handler) */
export const subnetCidr = (id: string): string => id.split('-').slice(1).join('/')

export function sdnAddress(m: SdnManifest): string {
  return m.kind === 'Subnet' ? `Subnet/${m.spec.vnet}/${m.spec.cidr}` : `${m.kind}/${m.spec.id}`
}

/** the live object of a manifest, from the pending listings */
function liveOf(m: SdnManifest, live: LiveSdn): SdnObject | undefined {
  switch (m.kind) {
    case 'SdnController':
      return live.controllers.find((o) => o.id === m.spec.id)
    case 'Zone':
      return live.zones.find((o) => o.id === m.spec.id)
    case 'VNet':
      return live.vnets.find((o) => o.id === m.spec.id)
    case 'Subnet':
      return live.subnets.find((o) => subnetCidr(o.id) === m.spec.cidr && sdnConfigValues(o)?.vnet === m.spec.vnet)
  }
}

/** the config-file path below /cluster/sdn of a manifest's collection and object */
function paths(m: SdnManifest, liveId: string | undefined): { collection: string; object: string; idKey: string } {
  if (m.kind === 'Subnet') {
    const collection = `vnets/${m.spec.vnet}/subnets`
    return { collection, object: `${collection}/${liveId ?? ''}`, idKey: 'subnet' }
  }
  const collection = m.kind === 'SdnController' ? 'controllers' : m.kind === 'Zone' ? 'zones' : 'vnets'
  const idKey = m.kind === 'SdnController' ? 'controller' : m.kind === 'Zone' ? 'zone' : 'vnet'
  return { collection, object: `${collection}/${m.spec.id}`, idKey }
}

/**
 * The pending edits of a live object are this plan's own when each pending key holds what the manifest declares
 * (a whole new object: its every declared key), so applying them applies nothing anyone else wrote
 */
function pendingIsOwn(o: SdnObject, want: Record<string, string> | undefined): boolean {
  if (o.state === undefined && Object.keys(o.pending).length === 0) return true
  if (!want || o.state === 'deleted') return false
  // an EVPN zone's `mac` is PVE's own pick at create (EvpnPlugin on_update_hook)
  return Object.entries(o.pending).every(
    ([k, v]) => k === 'type' || want[k] === v || (k === 'mac' && want[k] === undefined),
  )
}

const pendingText = (o: SdnObject): string =>
  o.state === 'new'
    ? 'created, not applied'
    : o.state === 'deleted'
      ? 'deleted, not applied'
      : `pending keys: ${Object.keys(o.pending).sort().join(', ')}`

export function planSdn(ctx: KindContext): KindPlan {
  const out = emptyPlan()
  const manifests = ctx.desired.manifests.filter(isSdn).sort((a, b) => compare(sdnAddress(a), sdnAddress(b)))
  if (manifests.length === 0) return out
  const observed = ctx.live.sdn
  if (observed === undefined || 'unreadable' in observed) {
    const objects = manifests.map((m) => ({ address: sdnAddress(m), kind: m.kind }))
    skipUnread(out.skips, objects, `SDN ${unreadReason(observed)}; not planned this cycle`)
    return out
  }
  const live = observed.known
  const marker = commentMarker(ctx.policy)
  const writes: Draft[] = []
  const own = new Set<SdnObject>()
  for (const m of manifests) {
    const address = sdnAddress(m)
    const want = desiredValues(m, marker)
    const base = {
      resource: keyOf(m.kind, m.metadata.name),
      address,
      kind: m.kind as ResourceKind,
      name: m.metadata.name,
      node: '',
      tier: 0 as const,
      level: ctx.levelOf(keyOf(m.kind, m.metadata.name)),
      disruption: 'none' as const,
    }
    if (m.kind === 'Subnet' && (m.spec['dhcp-range']?.length ?? 0) > 1) {
      out.anomalies.push({
        code: 'unsupported-option',
        address,
        kind: m.kind,
        field: 'spec.dhcp-range',
        message: 'more than one DHCP range is not supported yet (docs/gaps/network.md); not written',
      })
      continue
    }
    const o = liveOf(m, live)
    if (o && pendingIsOwn(o, want)) own.add(o)
    const cfg = o ? sdnConfigValues(o) : undefined
    const p = paths(m, o?.id)
    if (!cfg) {
      const params: Record<string, string> = { ...sendValues(want) }
      if (m.kind === 'Subnet') {
        delete params.vnet
        Object.assign(params, { subnet: m.spec.cidr, type: 'subnet' })
      } else params[p.idKey] = m.spec.id
      writes.push({
        ...base,
        type: 'create',
        reason: `${address}: not in the SDN config; will create (applied with the plan's SDN apply)`,
        diffs: Object.entries(want).map(([k, v]) => ({ field: `spec.${k}`, key: k, after: v })),
        requests: [{ call: 'sdnWrite', method: 'POST', path: p.collection, params }],
      })
      continue
    }
    if (
      m.kind !== 'Subnet' &&
      m.kind !== 'VNet' &&
      cfg.type !== undefined &&
      want.type !== undefined &&
      cfg.type !== want.type
    ) {
      out.anomalies.push({
        code: 'kind-mismatch',
        address,
        kind: m.kind,
        field: 'spec.type',
        message: `${address} is a ${cfg.type} ${m.kind === 'Zone' ? 'zone' : 'controller'} on PVE, the manifest says ${want.type}; PVE cannot change a type: delete it by hand or rename`,
      })
      continue
    }
    const diffs: FieldDiff[] = []
    const params: Record<string, string> = {}
    const sent = sendValues(want)
    for (const [k, v] of Object.entries(want)) {
      if (k === 'type' || (m.kind === 'Subnet' && k === 'vnet') || cfg[k] === v) continue
      params[k] = sent[k] as string
      diffs.push({ field: `spec.${k}`, key: k, ...(cfg[k] === undefined ? {} : { before: cfg[k] }), after: v })
    }
    if (diffs.length === 0) continue
    writes.push({
      ...base,
      type: 'update',
      reason: `${address}: drift (${diffs.map((d) => d.key).join(', ')}); applied with the plan's SDN apply`,
      diffs: diffs.sort((a, b) => compare(a.key ?? '', b.key ?? '')),
      requests: [{ call: 'sdnWrite', method: 'PUT', path: p.object, params }],
    })
  }

  // what `PUT /cluster/sdn` would apply besides this plan's writes
  const named: [string, SdnObject][] = [
    ...live.controllers.map((o): [string, SdnObject] => [`SdnController/${o.id}`, o]),
    ...live.zones.map((o): [string, SdnObject] => [`Zone/${o.id}`, o]),
    ...live.vnets.map((o): [string, SdnObject] => [`VNet/${o.id}`, o]),
    ...live.subnets.map((o): [string, SdnObject] => [
      `Subnet/${o.values.vnet ?? o.pending.vnet ?? ''}/${subnetCidr(o.id)}`,
      o,
    ]),
  ]
  const pending = named.filter(([, o]) => o.state !== undefined || Object.keys(o.pending).length > 0)
  const foreign = pending.filter(([, o]) => !own.has(o))
  if (foreign.length > 0) {
    for (const [address, o] of foreign)
      out.anomalies.push({
        code: 'sdn-pending',
        address,
        message: `${address} has SDN edits someone left unapplied (${pendingText(o)}); PUT /cluster/sdn would apply them with ProxOps' own, so no SDN write is planned until they are applied or reverted by hand`,
      })
    return out
  }
  if (writes.length === 0 && pending.length === 0) return out
  writes.forEach((d) => (d.id = `${d.address}#${d.type}`))
  out.drafts.push(...writes)
  const vnets = manifests.filter((m) => m.kind === 'VNet').map((m) => keyOf(m.kind, m.metadata.name))
  out.drafts.push({
    id: `${APPLY_ADDRESS}#update`,
    address: APPLY_ADDRESS,
    kind: 'SdnApply',
    node: '',
    type: 'update',
    reason: `SDN: apply the pending config (PUT /cluster/sdn, every node reloads): ${writes.length} write(s)${pending.length ? `, ${pending.length} object(s) left pending by an earlier run` : ''}`,
    diffs: [],
    disruption: 'none',
    tier: 0,
    level: Math.max(0, ...manifests.map((m) => ctx.levelOf(keyOf(m.kind, m.metadata.name)))) + 1,
    after: writes.map((d) => d.id as string),
    alsoResources: vnets,
    requests: [{ call: 'applySdn' }],
  })
  return out
}
