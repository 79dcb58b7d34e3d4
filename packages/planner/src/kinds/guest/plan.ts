/**
 * Planning the guest kind (VM, TemplateVM, LXC, TemplateCT): for each declared guest, whether it can be planned
 * at all this cycle (unknown, foreign, mismatched, locked, paused), then its create or clone, or its config
 * writes, resizes, template conversion, restarts and power (guest-plan.ts), and a safety snapshot before the
 * disruptive ones. The guests git no longer declares go to the prune stage (prune.ts). Pure.
 */
import type { ContainerManifest, QemuManifest } from '@proxops/schema'
import type { GuestType } from '@proxops/pve-client/wire'
import { artifactVolid, isArtifact, isGuest, isQemu } from '../../desired.js'
import type { LiveGuest, UnknownGuest } from '../../inventory.js'
import { keyOf } from '../../kit/deps.js'
import { guestAddress, sortDiffs, type Draft } from '../../kit/draft.js'
import { commentMarker, ownerMarker, ownerOf, ownedHere } from '../../kit/ownership.js'
import type { Anomaly, GuestKind, Skip } from '../../plan-types.js'
import { haSid, pinnedPower } from '../ha/plan.js'
import { emptyPlan, type KindPlan, type PlanContext, type PlannedGuest } from '../../kit/kind.js'
import { poolForCreate, poolIndex, type PoolIndex } from '../pool/plan.js'
import type { Owned } from './fields.js'
import {
  cloneSource,
  declaredKeys,
  disruptionFor,
  planLiveGuest,
  planNewGuest,
  type GuestPlanEnv,
  type GuestTarget,
} from './guest-plan.js'
import { planMigration } from './migrate.js'
import { lxcFields } from './lxc.js'
import { guestPrunes } from './prune.js'
import { destroyEffects } from './destroy-effects.js'
import { qemuFields, type GuestBuildContext, type GuestFields } from './qemu.js'
import { isSnapshotTrigger, isStoppingMove, safetySnapshotKeep, snapshotProblem, takesSnapshots } from './snapshots.js'
import { tagsField } from './tags.js'
import { storageRefusals } from './storage-refusals.js'
import { withDeclaredStorages } from '../../kit/declared-storages.js'

type GuestManifest = QemuManifest | ContainerManifest

export function planGuests(ctx: PlanContext): KindPlan & { planned: PlannedGuest[]; foreign: Map<number, string> } {
  const view = new LiveGuests(ctx)
  const fields = guestFields(ctx)
  const pools = poolIndex(ctx)
  const out = { ...emptyPlan(), planned: [] as PlannedGuest[], foreign: new Map<number, string>() }
  const matched = new Set<number>()
  const desiredCounts = new Map<GuestKind, number>()
  for (const m of ctx.desired.manifests) {
    if (!isGuest(m)) continue
    desiredCounts.set(m.kind, (desiredCounts.get(m.kind) ?? 0) + 1)
    const one = planGuest(m, ctx, view, fields, pools)
    if (one.claims) matched.add(m.spec.vmid)
    if (one.foreign !== undefined) out.foreign.set(m.spec.vmid, one.foreign)
    merge(out, one.plan)
    if (one.planned) out.planned.push(one.planned)
  }
  // unknown guests no manifest claims are still reported (they are never prune candidates)
  const declared = new Set(ctx.desired.manifests.flatMap((m) => (isGuest(m) ? [m.spec.vmid] : [])))
  for (const u of view.unknown.values()) {
    if (declared.has(u.vmid)) continue
    const kind: GuestKind = u.type === 'qemu' ? 'VM' : 'LXC'
    out.skips.push({
      code: 'unknown',
      address: guestAddress(kind, u.node, u.vmid, u.name),
      kind,
      node: u.node,
      vmid: u.vmid,
      message: `could not be read this cycle (${u.unreadable}); never a prune candidate`,
    })
  }
  // a live guest whose PVE name is a desired name of the same family is not a prune candidate either
  for (const g of view.visible) if (g.name !== undefined && view.names[g.type].has(g.name)) matched.add(g.vmid)
  for (const vmid of view.unknown.keys()) matched.add(vmid)
  const declaredJobs = new Set(ctx.desired.manifests.flatMap((m) => (m.kind === 'BackupJob' ? [m.spec.id] : [])))
  out.prunes = guestPrunes(view.visible, matched, desiredCounts, ctx.policy, view.offline, (g) =>
    destroyEffects(g, ctx.live, ctx.policy, declaredJobs),
  )
  return out
}

export function merge(into: KindPlan, from: KindPlan): void {
  into.drafts.push(...from.drafts)
  into.anomalies.push(...from.anomalies)
  into.skips.push(...from.skips)
  into.pending.push(...from.pending)
  into.gaps.push(...from.gaps)
}

/** What the live inventory says about guests, indexed once per plan. */
class LiveGuests {
  /** readable guests on allowlisted nodes, sorted by vmid */
  readonly visible: readonly LiveGuest[]
  readonly byVmid = new Map<number, LiveGuest>()
  readonly unknown = new Map<number, UnknownGuest>()
  /** vmids of guests on nodes outside the allowlist (never acted on, but they block a create) */
  readonly elsewhere = new Map<number, string>()
  /** vmids held by guests this token cannot see (observe's `/cluster/nextid?vmid=` probe) */
  readonly invisible = new Set<number>()
  /** owned (tagged) live guests by type and PVE name, for reporting a renumbered guest */
  readonly ownedByName = new Map<string, LiveGuest[]>()
  /** the desired names and PVE names of each family */
  readonly names = { qemu: new Set<string>(), lxc: new Set<string>() }
  /** storage types by node and storage, for safety snapshots */
  readonly storageTypes = new Map<string, string>()
  readonly offline: ReadonlySet<string>

  constructor(ctx: PlanContext) {
    const { live, policy } = ctx
    this.visible = live.guests.filter((g) => ctx.allowedNode(g.node))
    for (const g of this.visible) this.byVmid.set(g.vmid, g)
    for (const g of [...live.guests, ...live.unknownGuests])
      if (!ctx.allowedNode(g.node)) this.elsewhere.set(g.vmid, g.node)
    for (const h of live.heldVmids) {
      if (h.node !== undefined) this.elsewhere.set(h.vmid, h.node)
      else this.invisible.add(h.vmid)
    }
    for (const u of live.unknownGuests) if (ctx.allowedNode(u.node)) this.unknown.set(u.vmid, u)
    for (const m of ctx.desired.manifests) {
      if (!isGuest(m)) continue
      const family = isQemu(m) ? this.names.qemu : this.names.lxc
      family.add(m.metadata.name)
      family.add(isQemu(m) ? m.spec['pve-name'] : m.spec.dns.hostname)
    }
    for (const g of this.visible) {
      if (g.name === undefined || !ownedHere(ownerOf(g.tags, policy))) continue
      const k = `${g.type}\0${g.name}`
      const list = this.ownedByName.get(k)
      if (list) list.push(g)
      else this.ownedByName.set(k, [g])
    }
    for (const st of live.storages) this.storageTypes.set(`${st.node}\0${st.storage}`, st.type)
    this.offline = new Set(live.nodes.filter((n) => !n.online).map((n) => n.node))
  }
}

/** The owned fields of a manifest, with the build contexts and a clone source's declared keys made once. */
function guestFields(ctx: PlanContext) {
  const tagFields = new Map<string, Owned>()
  const marker = ownerMarker(ctx.policy)
  const plain: GuestBuildContext = {
    volid: (kind, name) => {
      const a = ctx.byKey.get(keyOf(kind, name))
      return a && isArtifact(a) ? artifactVolid(a) : undefined
    },
    cloned: false,
    tags: (tags) => {
      const key = JSON.stringify(tags)
      let owned = tagFields.get(key)
      if (!owned) tagFields.set(key, (owned = tagsField(tags, ctx.policy.ownershipTag, marker)))
      return owned
    },
    ...(ctx.secrets ? { secrets: ctx.secrets } : {}),
  }
  const cloned: GuestBuildContext = { ...plain, cloned: true }
  const of = (m: GuestManifest): GuestFields => {
    const bctx = m.kind === 'VM' && m.spec.clone !== undefined ? cloned : plain
    return isQemu(m) ? qemuFields(m, bctx) : lxcFields(m, bctx)
  }
  const templateKeys = new Map<string, ReadonlySet<string>>()
  /**
   * A clone's inherited keys: what its declared source template declares. The clone carries them from the
   * template, so they are in git; the clone's own manifest does not own them.
   */
  const inherited = (m: GuestManifest): ReadonlySet<string> | undefined => {
    if ((m.kind !== 'VM' && m.kind !== 'LXC') || m.spec.clone === undefined) return undefined
    const { manifest: src } = cloneSource(m, ctx.byKey)
    if (!src) return undefined
    const key = keyOf(src.kind, src.metadata.name)
    let keys = templateKeys.get(key)
    if (!keys) templateKeys.set(key, (keys = declaredKeys(of(src))))
    return keys
  }
  return { of, inherited }
}

interface OneGuest {
  plan: KindPlan
  /** the manifest claims its vmid (never a prune candidate) */
  claims: boolean
  planned?: PlannedGuest
  /** the vmid is held by a guest that is not this entry's: why (nothing that points at a guest may reach it) */
  foreign?: string
}

/** One declared guest: why it cannot be planned this cycle, or its actions. */
function planGuest(
  m: GuestManifest,
  ctx: PlanContext,
  view: LiveGuests,
  fields: ReturnType<typeof guestFields>,
  pools: PoolIndex,
): OneGuest {
  const { policy } = ctx
  const { node, vmid } = m.spec
  const name = m.metadata.name
  const plan = emptyPlan()
  const type: GuestType = m.kind === 'VM' || m.kind === 'TemplateVM' ? 'qemu' : 'lxc'
  const isTemplate = m.kind === 'TemplateVM' || m.kind === 'TemplateCT'
  const address = guestAddress(m.kind, node, vmid, name)
  const skip = (code: Skip['code'], message: string) =>
    plan.skips.push({ code, address, kind: m.kind, node, vmid, message })
  const anomaly = (a: Omit<Anomaly, 'address' | 'kind'>): void => {
    plan.anomalies.push({ ...a, address, kind: m.kind })
  }
  const resource = keyOf(m.kind, name)
  const base = { resource, address, kind: m.kind, name, node, vmid, tier: 0 as const, level: ctx.levelOf(resource) }
  const env: GuestPlanEnv = { policy, byKey: ctx.byKey, out: plan }

  const u = view.unknown.get(vmid)
  if (u) {
    // a guest on an offline node is unreadable because of its node: say so
    skip(
      ctx.nodeDown(u.node) ? 'node-offline' : 'unknown',
      `${u.type}/${vmid} on ${u.node} could not be read this cycle (${u.unreadable}); no create, update, power or delete`,
    )
    const unknownOwner = ownerOf(u.tags, policy)
    return {
      plan,
      claims: true,
      ...(unknownOwner.kind === 'other'
        ? { foreign: `owned by cluster entry ${unknownOwner.entries.join(', ')}` }
        : {}),
    }
  }
  const g = view.byVmid.get(vmid)
  const claims = g !== undefined
  if (g && g.type !== type) {
    anomaly({
      code: 'kind-mismatch',
      message: `vmid ${vmid} is a ${g.type} guest on node ${g.node} on PVE, but ${resource} declares a ${type} guest on ${node}; proxops will not touch it`,
    })
    return { plan, claims, foreign: `a ${g.type} guest on ${g.node}, not the one ${resource} declares` }
  }
  const hidden = g ? undefined : view.elsewhere.get(vmid)
  if (hidden) {
    // vmids are cluster-wide: a guest outside the allowlist still makes a create impossible
    anomaly({
      code: 'node-mismatch',
      message: `vmid ${vmid} exists on node ${hidden}, outside this cluster's node allowlist; ${resource} is not created`,
    })
    return { plan, claims, foreign: `on node ${hidden}, outside this cluster's node allowlist` }
  }
  if (!g && view.invisible.has(vmid)) {
    // PVE's nextid sees the whole vmlist; the guest itself is hidden from this token (no VM.Audit on it)
    anomaly({
      code: 'vmid-taken',
      message: `vmid ${vmid} is held by a guest this token cannot see (PVE's /cluster/nextid says it exists; no VM.Audit on /vms/${vmid}); ${resource} is not created: grant VM.Audit to see it, or choose another vmid`,
    })
    return { plan, claims, foreign: 'a guest this token cannot see' }
  }
  const pveName = isQemu(m) ? m.spec['pve-name'] : m.spec.dns.hostname
  const owner = g ? ownerOf(g.tags, policy) : undefined
  if (g && owner?.kind === 'other') {
    // one PVE cluster reached by two entries: the guest is the other entry's, whatever this one declares
    anomaly({
      code: 'owned-elsewhere',
      message: `vmid ${vmid} is held by the ${g.type} guest ${JSON.stringify(g.name ?? '')} on ${g.node}, owned by cluster entry ${owner.entries.join(', ')} (tag ${owner.entries.map((e) => `${policy.ownershipTag}.${e}`).join(', ')}); ${resource} does not take it over`,
    })
    return { plan, claims, foreign: `owned by cluster entry ${owner.entries.join(', ')}` }
  }
  if (g && owner?.kind === 'none' && !sameGuest(g, pveName, name)) {
    // vmids are cluster-wide: an unowned guest of another name at this vmid is not taken over; declaring its
    // PVE name (what proxops adopt writes) is the explicit claim
    anomaly({
      code: 'vmid-taken',
      message: `vmid ${vmid} is held by the untagged ${g.type} guest ${JSON.stringify(g.name ?? '')} on ${g.node}; ${resource} (PVE name ${JSON.stringify(pveName)}) does not take it over: adopt it (proxops adopt) or choose another vmid`,
    })
    return {
      plan,
      claims,
      foreign: `the untagged guest ${JSON.stringify(g.name ?? '')}, not the one ${resource} declares`,
    }
  }
  // a guest away from an offline spec.node is planned below (HA placed it, or its migration is refused)
  if (ctx.nodeDown(node) && (!g || g.node === node)) {
    skip('node-offline', `node ${node} is offline or unknown; ${resource} not planned this cycle`)
    return { plan, claims }
  }
  const f = fields.of(m)
  for (const gap of f.gaps) plan.gaps.push({ address, ...gap })
  const target = { f, base, type, isTemplate, skip, anomaly }

  if (!g) {
    // renumbering (same name, new vmid) creates a new guest; the old one is kept (its name is declared, so it
    // is never pruned) and reported
    const olds = new Set([
      ...(view.ownedByName.get(`${type}\0${pveName}`) ?? []),
      ...(view.ownedByName.get(`${type}\0${name}`) ?? []),
    ])
    for (const old of olds) {
      if (old.vmid === vmid) continue
      anomaly({
        code: 'renumbered',
        message: `${resource} was vmid ${old.vmid} on ${old.node} on PVE (same name); vmid ${vmid} is created as a new guest and ${old.vmid} is kept: remove it by hand once the new one serves, or restore spec.vmid`,
      })
    }
    const pool = poolForCreate(m, pools)
    if ('missing' in pool) {
      anomaly(pool.missing)
      return { plan, claims }
    }
    planNewGuest({ ...target, m: withPower(m, undefined, ctx) }, env)
    if (refusedStorage(plan, type, node, ctx, base)) return { plan, claims }
    const created = plan.drafts.find((d) => d.type === 'create' || d.type === 'clone')
    if (created && pool.pool !== undefined) joinOnCreate(created, pool.pool)
    return {
      plan,
      claims,
      planned: { m, type, base, ...(created ? { createdBy: created.id ?? `${created.address}#${created.type}` } : {}) },
    }
  }
  if (g.lock !== undefined && g.lock !== '') {
    skip('locked', `locked: ${g.lock}; not planned this cycle`)
    return { plan, claims }
  }
  if (g.status === 'paused') {
    // PVE refuses both start ("already running") and shutdown ("VM is paused") of a paused VM
    skip(
      'paused',
      `${g.qmpstatus !== undefined && g.qmpstatus !== 'paused' ? `QMP status ${g.qmpstatus}` : 'paused'} on PVE; resume or stop it by hand; not planned this cycle`,
    )
    return { plan, claims }
  }
  if (g.node !== node && (isTemplate || g.template)) {
    // a template's base volumes carry its linked clones, which PVE cannot move with it (scan_local_volumes)
    anomaly({
      code: 'node-mismatch',
      message: `vmid ${vmid} is a template on node ${g.node}, declared on ${node}; proxops does not migrate templates (linked clones would hold them): set spec.node to ${g.node} or move it by hand`,
    })
    return { plan, claims }
  }
  if (g.node !== node) {
    const where = placement(m, g, ctx)
    if (where.kind === 'migrate') return planMove(m, g, ctx, fields, base, plan, claims, skip)
    if (where.kind === 'refuse') {
      anomaly({ code: 'node-mismatch', message: where.message })
      return { plan, claims }
    }
    if (where.kind === 'skip') {
      skip('unknown', where.message)
      return { plan, claims }
    }
    // HA placed it: the guest is planned where it is, and spec.node stays its preferred node (spec.ha.nodes)
    plan.gaps.push({ address, field: 'spec.node', note: where.message, placedOn: g.node })
    return planLive(
      onNode(m, g.node),
      g,
      { ...target, base: { ...base, node: g.node } },
      ctx,
      view,
      fields,
      plan,
      claims,
    )
  }
  return planLive(m, g, target, ctx, view, fields, plan, claims)
}

/** the manifest as planned on another node than its spec.node (where HA placed the guest) */
const onNode = <M extends GuestManifest>(m: M, node: string): M => ({ ...m, spec: { ...m.spec, node } })

type Placement =
  | { kind: 'migrate' }
  /** HA placed the guest: it is planned where it is */
  | { kind: 'ha'; message: string }
  | { kind: 'refuse' | 'skip'; message: string }

/**
 * Why a guest is on another allowlisted node than its spec.node, and what follows. PVE hands a migrate request
 * of an HA-managed guest to HA (qemu-server / pve-container migrate_vm: PVE::HA::Config::vm_is_ha_managed, a
 * resource whose state is not `ignored`), and the HA manager places its services itself (select_service_node):
 * a guest whose manifest declares spec.ha is left where HA put it; one HA manages outside the manifest is
 * reported; any other guest is moved back.
 */
function placement(m: GuestManifest, g: LiveGuest, ctx: PlanContext): Placement {
  const where = `vmid ${g.vmid} is on node ${g.node}, declared on ${m.spec.node}`
  if ('unreadable' in ctx.live.ha)
    return {
      kind: 'skip',
      message: `${where}; the HA configuration could not be read (${ctx.live.ha.unreadable}), so whether HA placed it there is unknown; not moved this cycle`,
    }
  const sid = haSid(g.type, g.vmid)
  const r = ctx.live.ha.known.resources.find((x) => x.sid === sid)
  if (r === undefined || r.state === 'ignored') return { kind: 'migrate' }
  const declaresHa = (m.kind === 'VM' || m.kind === 'LXC') && m.spec.ha !== undefined
  if (declaresHa)
    return {
      kind: 'ha',
      message: `on node ${g.node}, where HA placed it (${sid}); spec.node ${m.spec.node} is its preferred node through spec.ha.nodes, and proxops does not move a guest HA manages`,
    }
  return {
    kind: 'refuse',
    message: `${where}, and HA manages it (${sid}) without spec.ha in this manifest: HA decides where it runs, so proxops will not move it (declare spec.ha, or move it with ha-manager)`,
  }
}

/** A guest away from its spec.node that is not HA's: its migration, alone this cycle (migrate.ts). */
function planMove(
  m: GuestManifest,
  g: LiveGuest,
  ctx: PlanContext,
  fields: ReturnType<typeof guestFields>,
  base: PlannedGuest['base'],
  plan: KindPlan,
  claims: boolean,
  skip: (code: Skip['code'], message: string) => void,
): OneGuest {
  const type = g.type
  const outcome = planMigration({
    g,
    type,
    target: m.spec.node,
    base,
    owned: fields.of(m).owned,
    policy: disruptionFor(m, ctx.policy.disruption),
    storages: ctx.live.storages,
    check: ctx.live.migrationChecks?.find((c) => c.vmid === g.vmid && c.node === g.node),
    targetDown: ctx.nodeDown(m.spec.node),
  })
  if ('skip' in outcome) skip(outcome.skip.code, outcome.skip.message)
  else if ('refused' in outcome)
    plan.anomalies.push({
      code: 'migration-refused',
      address: base.address,
      kind: base.kind,
      field: 'spec.node',
      message: `${base.resource}: on node ${g.node}, declared on ${m.spec.node}; PVE would refuse the migration: ${outcome.refused.join('; ')}; not moved`,
    })
  else plan.drafts.push(outcome.draft)
  return { plan, claims }
}

/** A live guest on the node it is planned on: its writes, resizes, template conversion, restarts and power. */
function planLive(
  m: GuestManifest,
  g: LiveGuest,
  target: Omit<GuestTarget, 'm'>,
  ctx: PlanContext,
  view: LiveGuests,
  fields: ReturnType<typeof guestFields>,
  plan: KindPlan,
  claims: boolean,
): OneGuest {
  const { base, type, isTemplate, anomaly } = target
  const env: GuestPlanEnv = { policy: ctx.policy, byKey: ctx.byKey, out: plan }
  if (g.template && !isTemplate) {
    anomaly({
      code: 'kind-mismatch',
      message: `${base.resource} is declared as ${m.kind} but vmid ${g.vmid} is a PVE template; PVE cannot turn a template back (declare it as ${type === 'qemu' ? 'TemplateVM' : 'TemplateCT'} or remove it by hand)`,
    })
    return { plan, claims }
  }
  const inherited = fields.inherited(m)
  planLiveGuest({ ...target, m: withPower(m, g, ctx), ...(inherited ? { inherited } : {}) }, g, env)
  if (refusedStorage(plan, type, m.spec.node, ctx, base)) return { plan, claims }
  safetySnapshot(m, g, base, type, isTemplate, plan, view, ctx)
  return { plan, claims, planned: { m, type, base, live: g } }
}

/**
 * A volume the guest's actions would allocate where PVE refuses it (storage-refusals.ts): the guest is blocked,
 * none of its actions is planned, and neither is anything that lives on it.
 */
function refusedStorage(plan: KindPlan, type: GuestType, node: string, ctx: PlanContext, base: PlannedGuest['base']) {
  const refusals = storageRefusals(
    type,
    node,
    plan.drafts,
    withDeclaredStorages(ctx.live.storages, ctx.desired.manifests),
  )
  if (refusals.length === 0) return false
  plan.anomalies.push({
    code: 'storage-refused',
    address: base.address,
    kind: base.kind,
    message: `${base.resource}: PVE would refuse ${refusals.join('; ')}; not ${plan.drafts.some((d) => d.type === 'create' || d.type === 'clone') ? 'created' : 'changed'} this cycle`,
  })
  plan.drafts = []
  plan.pending = []
  return true
}

/** an HA-managed guest's power goes through its HA resource: the guest plan then keeps the live power */
function withPower<M extends GuestManifest>(m: M, g: LiveGuest | undefined, ctx: PlanContext): M {
  const pin = pinnedPower(m, g, ctx.live.ha)
  return pin === undefined || pin === m.spec.state ? m : { ...m, spec: { ...m.spec, state: pin } }
}

/** `pool=` on the create or clone request of a new guest: PVE adds it when the worker ends */
function joinOnCreate(d: Draft, pool: string): void {
  d.requests = d.requests.map((r, n) =>
    n === 0 && (r.call === 'createGuest' || r.call === 'cloneGuest') ? { ...r, params: { ...r.params, pool } } : r,
  )
  d.diffs = sortDiffs([...d.diffs, { field: 'spec.pool', key: 'pool', after: pool }])
}

/**
 * A safety snapshot before the guest's disruptive actions, which wait for it; where PVE cannot snapshot a
 * volume of the guest, an anomaly instead and none of those actions (docs/safety.md).
 */
function safetySnapshot(
  m: GuestManifest,
  g: LiveGuest,
  base: PlannedGuest['base'],
  type: GuestType,
  isTemplate: boolean,
  plan: KindPlan,
  view: LiveGuests,
  ctx: PlanContext,
): void {
  const keep = safetySnapshotKeep(m, ctx.policy)
  if (keep === undefined) return
  const own = plan.drafts
  if (!takesSnapshots(isTemplate || g.template, own)) return
  const triggers = own.filter(isSnapshotTrigger)
  if (triggers.length === 0) return
  const what = [...new Set(triggers.map((d) => d.type))].join(', ')
  const problem = snapshotProblem(type, g.config, (sid) => view.storageTypes.get(`${g.node}\0${sid}`))
  if (problem) {
    plan.anomalies.push({
      address: base.address,
      kind: base.kind,
      code: 'snapshot-unsupported',
      field: problem.key,
      message: `${base.resource}: safety snapshots are on, but PVE cannot snapshot ${problem.key} (${problem.volume}: ${problem.reason}); not done this cycle: ${what}. Move the volume to a storage that snapshots it, or set the annotation proxops/safety-snapshots: "false"`,
    })
    const dropped = new Set([...triggers, ...own.filter(isStoppingMove)].map((d) => d.id))
    plan.drafts = own.filter((d) => !dropped.has(d.id))
    for (const d of plan.drafts) if (d.after) d.after = d.after.filter((id) => !dropped.has(id))
    return
  }
  const id = `${base.address}#snapshot`
  const mark = commentMarker(ctx.policy)
  plan.drafts.push({
    ...base,
    id,
    type: 'snapshot',
    reason: `${base.resource}: safety snapshot proxops-<UTC time> before ${what}; keeps the newest ${keep} safety snapshots marked ${mark}`,
    diffs: [],
    disruption: 'none',
    requests: [{ call: 'snapshot', node: g.node, guest: type, vmid: g.vmid, keep, digest: g.digest, mark }],
    digest: g.digest,
  })
  for (const d of triggers) d.after = [...(d.after ?? []), id]
  // the disk moves come first: PVE frees a moved volume only while no snapshot names it
  const moves = own.filter((d) => d.type === 'move-disk' && d.id !== undefined).map((d) => d.id as string)
  if (moves.length > 0) (plan.drafts.find((d) => d.id === id) as Draft).after = moves
}

/**
 * An untagged live guest is the one a manifest declares when the manifest names its PVE name; a guest without
 * a name of its own matches the name proxops adopt gives it (`vm-<vmid>`, `ct-<vmid>`).
 */
function sameGuest(g: LiveGuest, pveName: string, name: string): boolean {
  if (g.name === pveName || g.name === name) return true
  const own = g.type === 'qemu' ? g.config.name : g.config.hostname
  return own === undefined && name === `${g.type === 'qemu' ? 'vm' : 'ct'}-${g.vmid}`
}
