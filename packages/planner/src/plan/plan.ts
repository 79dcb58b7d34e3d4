/**
 * plan(desired, live, policy): the pure heart of ProxOps. Same inputs, same Plan (see serializePlan).
 * Reads nothing but its arguments; all PVE knowledge comes from the LiveInventory observe() produced.
 */
import { poolNeeded } from '@proxops/schema'
import type {
  ArtifactManifest,
  BackupJobManifest,
  ContainerManifest,
  Manifest,
  PoolManifest,
  QemuManifest,
} from '@proxops/schema'
import { keyOf, levels } from './deps.js'
import { planBackupJobs } from '../kinds/backup-job/plan.js'
import {
  ARTIFACT_CONTENT,
  isArtifact,
  isBackupJob,
  isGuest,
  isPool,
  isQemu,
  type DesiredState,
  type SecretLookup,
} from '../desired.js'
import { isDisruptionPolicy } from '../kinds/guest/disruption.js'
import { PlanInputError } from '../errors.js'
import {
  cloneSource,
  declaredKeys,
  disruptionFor,
  planLiveGuest,
  planNewGuest,
  type GuestPlanEnv,
} from '../kinds/guest/guest-plan.js'
import { planFirewall, type FirewallPlanInput } from '../kinds/firewall/plan.js'
import type { LiveFirewall, LiveGuest, LiveInventory } from '../inventory.js'
import { lxcFields } from '../kinds/guest/lxc.js'
import { artifactAddress, assemblePlan, guestAddress, sortDiffs, type Draft } from './order.js'
import type { Owned } from '../kinds/guest/fields.js'
import {
  DEFAULT_POLICY,
  type Anomaly,
  type Gap,
  type GuestKind,
  type PendingChange,
  type Plan,
  type PlanParamValue,
  type Policy,
  type Skip,
} from '../plan-types.js'
import type { GuestType } from '@proxops/pve-client/wire'
import { ownerMarker, ownerOf, ownedHere } from './ownership.js'
import { prunes } from '../kinds/guest/prune.js'
import { HaPlanner } from '../kinds/ha/plan.js'
import { PoolPlanner } from '../kinds/pool/plan.js'
import { qemuFields, type GuestBuildContext, type GuestFields } from '../kinds/guest/qemu.js'
import { tagsField } from '../kinds/guest/tags.js'
import { isSnapshotTrigger, safetySnapshotKeep, snapshotProblem, takesSnapshots } from '../kinds/guest/snapshots.js'

export interface PlanOptions {
  /** decrypted secret values, used only to compare `sshkeys` from refs; never copied into the plan */
  secrets?: SecretLookup
}

export const artifactVolid = (a: ArtifactManifest): string =>
  `${a.spec.storage}:${ARTIFACT_CONTENT[a.kind]}/${a.spec.filename}`

export function plan(
  desired: DesiredState,
  live: LiveInventory,
  policy: Policy = DEFAULT_POLICY,
  options: PlanOptions = {},
): Plan {
  checkPolicy(policy)
  const ctx = new Context(desired, live, policy, options)
  const jobs: BackupJobManifest[] = []
  for (const m of desired.manifests) {
    if (isArtifact(m)) ctx.planArtifact(m)
    else if (isBackupJob(m)) jobs.push(m)
    else if (isGuest(m)) ctx.planGuest(m)
  }
  ctx.pools.planDeclared()
  ctx.reportUnknown()
  const pr = prunes(ctx.visibleGuests, ctx.matched, ctx.desiredCounts, policy, ctx.offlineNodes)
  ctx.drafts.push(...pr.drafts)
  ctx.anomalies.push(...pr.anomalies)
  ctx.skips.push(...pr.skips)
  // backup jobs spend what the guests' prunes left of the cycle's budget
  const bj = planBackupJobs({
    desired: jobs,
    live: live.backupJobs ?? { unreadable: live.backupJobsUnreadable ?? 'not read' },
    policy,
    budget: policy.pruneBudget === 'unlimited' ? Number.POSITIVE_INFINITY : policy.pruneBudget - pr.drafts.length,
    levelOf: (m) => ctx.levelOfKey(keyOf(m.kind, m.metadata.name)),
  })
  ctx.drafts.push(...bj.drafts)
  ctx.anomalies.push(...bj.anomalies)
  ctx.skips.push(...bj.skips)
  // pools spend what the guests' and backup jobs' prunes left, after the members they wait for
  const spent = pr.drafts.length + bj.drafts.filter((d) => d.type === 'delete').length
  ctx.pools.planPrunes(
    pr.drafts,
    policy.pruneBudget === 'unlimited' ? Number.POSITIVE_INFINITY : policy.pruneBudget - spent,
  )
  return ctx.finish()
}

function checkPolicy(p: Policy): void {
  if (p.pruneBudget !== 'unlimited' && !(Number.isInteger(p.pruneBudget) && p.pruneBudget >= 0)) {
    throw new PlanInputError(
      'PLAN_POLICY',
      `pruneBudget must be a whole number >= 0 or 'unlimited' (got ${String(p.pruneBudget)})`,
      'policy.pruneBudget',
    )
  }
  if (!(p.pruneRatioLimit > 0 && p.pruneRatioLimit <= 1)) {
    throw new PlanInputError('PLAN_POLICY', 'pruneRatioLimit must be in (0, 1]', 'policy.pruneRatioLimit')
  }
  if (!isDisruptionPolicy(p.disruption))
    throw new PlanInputError(
      'PLAN_POLICY',
      `unknown disruption policy ${JSON.stringify(p.disruption)}`,
      'policy.disruption',
    )
  if (!/^[a-z0-9_][a-z0-9_\-+.]*$/.test(p.ownershipTag))
    throw new PlanInputError('PLAN_POLICY', 'ownershipTag must be a lower-case PVE tag', 'policy.ownershipTag')
  if (p.clusterEntry !== undefined && !/^[a-z0-9][a-z0-9_\-+.]*$/.test(p.clusterEntry))
    throw new PlanInputError('PLAN_POLICY', 'clusterEntry must be a lower-case cluster name', 'policy.clusterEntry')
  if (!(Number.isInteger(p.shutdownTimeoutSeconds) && p.shutdownTimeoutSeconds > 0)) {
    throw new PlanInputError(
      'PLAN_POLICY',
      'shutdownTimeoutSeconds must be a whole number > 0',
      'policy.shutdownTimeoutSeconds',
    )
  }
}

class Context {
  readonly drafts: Draft[] = []
  readonly anomalies: Anomaly[] = []
  readonly skips: Skip[] = []
  readonly pending: PendingChange[] = []
  readonly gaps: Gap[] = []
  private readonly ha: HaPlanner
  readonly pools: PoolPlanner
  /** live vmids claimed by a desired guest (never prune candidates) */
  readonly matched = new Set<number>()
  /** owned (tagged) live guests by type and PVE name, for reporting a renumbered guest */
  private readonly ownedByName = new Map<string, LiveGuest[]>()
  readonly desiredCounts = new Map<GuestKind, number>()
  readonly visibleGuests: LiveGuest[]
  private readonly byKey = new Map<string, Manifest>()
  /** the declared keys of each clone source template (`Kind/name`), built once */
  private readonly templateKeys = new Map<string, ReadonlySet<string>>()
  private readonly levels: Map<string, { level: number; prereqs: string[] }>
  private readonly allowedNode: (node: string) => boolean
  private readonly online = new Map<string, boolean>()
  private readonly guests = new Map<number, LiveGuest>()
  private readonly unknown = new Map<number, LiveInventory['unknownGuests'][number]>()
  private readonly volumes = new Set<string>()
  private readonly unreadable = new Map<string, string>()
  /** storage types by node and storage (`/nodes/{node}/storage`), for safety snapshots */
  private readonly storageTypes = new Map<string, string>()
  /** `node\0storage` of the storages PVE reports `shared`: one volume namespace that every node holding it sees */
  private readonly sharedStorages = new Set<string>()
  private readonly reportedUnknown = new Set<number>()
  private readonly firewalls = new Map<number, LiveFirewall>()
  /** vmids of guests on nodes outside the allowlist (never acted on, but they block a create) */
  private readonly elsewhere = new Map<number, string>()
  /** vmids held by guests this token cannot see (observe's `/cluster/nextid?vmid=` probe) */
  private readonly invisible = new Set<number>()
  private readonly env: GuestPlanEnv
  /** build contexts shared by every guest (plain VMs and LXC, clone-backed VMs): built once, not per guest */
  private readonly buildContexts: { plain: GuestBuildContext; cloned: GuestBuildContext }

  constructor(
    private readonly desired: DesiredState,
    live: LiveInventory,
    private readonly policy: Policy,
    private readonly options: PlanOptions,
  ) {
    const allow = new Set(policy.nodes)
    this.allowedNode = (n) => allow.size === 0 || allow.has(n)
    for (const m of desired.manifests) {
      const key = keyOf(m.kind, m.metadata.name)
      if (this.byKey.has(key)) throw new PlanInputError('PLAN_DUPLICATE', 'declared twice', key)
      this.byKey.set(key, m)
      if (isGuest(m)) {
        this.desiredCounts.set(m.kind, (this.desiredCounts.get(m.kind) ?? 0) + 1)
      }
    }
    this.levels = levels(this.byKey)
    this.env = { policy, byKey: this.byKey, out: this }
    this.ha = new HaPlanner({
      ha: live.ha,
      ownershipTag: policy.ownershipTag,
      budget: policy.pruneBudget,
      drafts: this.drafts,
      anomalies: this.anomalies,
      skips: this.skips,
    })
    this.pools = new PoolPlanner({
      desired: desired.manifests.filter(isPool),
      named: new Set(desired.manifests.flatMap((m) => poolNeeded(m)?.id ?? [])),
      live: live.pools,
      policy,
      levelOf: (m: PoolManifest) => this.levelOf(m),
      drafts: this.drafts,
      anomalies: this.anomalies,
      skips: this.skips,
    })
    this.buildContexts = this.makeBuildContexts()
    for (const n of live.nodes) this.online.set(n.node, n.online)
    this.visibleGuests = live.guests.filter((g) => this.allowedNode(g.node))
    for (const g of this.visibleGuests) this.guests.set(g.vmid, g)
    for (const g of live.guests) if (!this.allowedNode(g.node)) this.elsewhere.set(g.vmid, g.node)
    for (const g of live.unknownGuests) if (!this.allowedNode(g.node)) this.elsewhere.set(g.vmid, g.node)
    for (const h of live.heldVmids ?? []) {
      if (h.node !== undefined) this.elsewhere.set(h.vmid, h.node)
      else this.invisible.add(h.vmid)
    }
    // a live guest whose PVE name is a desired name of the same family is not a prune candidate
    const names = { qemu: new Set<string>(), lxc: new Set<string>() }
    for (const m of desired.manifests) {
      if (!isGuest(m)) continue
      const family = isQemu(m) ? names.qemu : names.lxc
      family.add(m.metadata.name)
      family.add(isQemu(m) ? m.spec['pve-name'] : m.spec.dns.hostname)
    }
    for (const g of this.visibleGuests) if (g.name !== undefined && names[g.type].has(g.name)) this.matched.add(g.vmid)
    for (const g of this.visibleGuests) {
      if (g.name === undefined || !ownedHere(ownerOf(g.tags, policy))) continue
      const k = `${g.type}\0${g.name}`
      const list = this.ownedByName.get(k)
      if (list) list.push(g)
      else this.ownedByName.set(k, [g])
    }
    for (const u of live.unknownGuests) if (this.allowedNode(u.node)) this.unknown.set(u.vmid, u)
    for (const v of live.volumes) this.volumes.add(`${v.node}\0${v.storage}\0${v.volid}`)
    for (const u of live.unreadableStorages) this.unreadable.set(`${u.node}\0${u.storage}`, u.reason)
    for (const st of live.storages) {
      this.storageTypes.set(`${st.node}\0${st.storage}`, st.type)
      if (st.shared) this.sharedStorages.add(`${st.node}\0${st.storage}`)
    }
    for (const f of live.firewalls ?? []) this.firewalls.set(f.vmid, f)
  }

  private checkNode(kind: string, name: string, node: string): void {
    if (!this.allowedNode(node)) {
      throw new PlanInputError(
        'PLAN_UNKNOWN_NODE',
        `references node ${JSON.stringify(node)}, which is not in the cluster's node allowlist (${this.policy.nodes.join(', ')})`,
        keyOf(kind, name),
      )
    }
  }

  get offlineNodes(): ReadonlySet<string> {
    return new Set([...this.online].filter(([, up]) => !up).map(([n]) => n))
  }

  private nodeDown(node: string): boolean {
    return this.online.get(node) !== true
  }

  planArtifact(m: ArtifactManifest): void {
    const { storage, filename } = m.spec
    const volid = artifactVolid(m)
    // a shared storage keeps one file for every node that holds it: one download, on the first node that can
    // make it; the other nodes see the file once it is there
    let sharedDownload: string | undefined
    for (const node of m.spec.nodes) {
      this.checkNode(m.kind, m.metadata.name, node)
      const address = artifactAddress(m.kind, node, storage, filename)
      const skip = (code: Skip['code'], message: string) =>
        this.skips.push({ code, address, kind: m.kind, node, message })
      if (this.nodeDown(node)) {
        skip('node-offline', `node ${node} is offline or unknown; not checking ${storage}/${filename} this cycle`)
        continue
      }
      const reason = this.unreadable.get(`${node}\0${storage}`)
      if (reason !== undefined) {
        skip(
          'storage-unreadable',
          `live inventory of ${storage} on ${node} unreadable this cycle; skipping download of ${storage}/${filename}`,
        )
        continue
      }
      if (this.volumes.has(`${node}\0${storage}\0${volid}`)) continue
      const shared = this.sharedStorages.has(`${node}\0${storage}`)
      if (shared && sharedDownload !== undefined) continue
      if (shared) sharedDownload = node
      const params: Record<string, PlanParamValue> = { url: m.spec.url, filename, content: ARTIFACT_CONTENT[m.kind] }
      if (m.spec.checksum) {
        params.checksum = m.spec.checksum.value
        params['checksum-algorithm'] = m.spec.checksum.algorithm
      }
      this.drafts.push({
        resource: keyOf(m.kind, m.metadata.name),
        address,
        kind: m.kind,
        name: m.metadata.name,
        node,
        storage,
        filename,
        type: 'download',
        reason: shared
          ? `${m.kind} ${filename} not present on shared storage ${storage}; will download once, on ${node}`
          : `${m.kind} ${filename} not present on storage ${storage} on ${node}; will download`,
        diffs: [{ field: 'spec.url', key: 'volid', after: volid }],
        disruption: 'none',
        tier: 0,
        level: this.levelOf(m),
        requests: [{ call: 'downloadUrl', node, storage, params }],
      })
    }
  }

  levelOfKey(key: string): number {
    return this.levels.get(key)?.level ?? 0
  }

  private levelOf(m: Manifest): number {
    return this.levels.get(keyOf(m.kind, m.metadata.name))?.level ?? 0
  }

  /**
   * A clone's inherited keys: what its declared source template declares. The clone carries them from the
   * template, so they are in git; the clone's own manifest does not own them.
   */
  private inheritedKeys(m: QemuManifest | ContainerManifest): ReadonlySet<string> | undefined {
    if ((m.kind !== 'VM' && m.kind !== 'LXC') || m.spec.clone === undefined) return undefined
    const { manifest: src } = cloneSource(m, this.byKey)
    if (!src) return undefined
    const key = keyOf(src.kind, src.metadata.name)
    let keys = this.templateKeys.get(key)
    if (!keys) this.templateKeys.set(key, (keys = declaredKeys(this.fields(src))))
    return keys
  }

  private fields(m: QemuManifest | ContainerManifest): GuestFields {
    const bctx = m.kind === 'VM' && m.spec.clone !== undefined ? this.buildContexts.cloned : this.buildContexts.plain
    return isQemu(m) ? qemuFields(m, bctx) : lxcFields(m, bctx)
  }

  private makeBuildContexts(): { plain: GuestBuildContext; cloned: GuestBuildContext } {
    const ownershipTag = this.policy.ownershipTag
    const marker = ownerMarker(this.policy)
    const tagFields = new Map<string, Owned>()
    const plain: GuestBuildContext = {
      volid: (kind, name) => {
        const a = this.byKey.get(keyOf(kind, name))
        return a && isArtifact(a) ? artifactVolid(a) : undefined
      },
      cloned: false,
      tags: (tags) => {
        const key = JSON.stringify(tags)
        let owned = tagFields.get(key)
        if (!owned) tagFields.set(key, (owned = tagsField(tags, ownershipTag, marker)))
        return owned
      },
      ...(this.options.secrets ? { secrets: this.options.secrets } : {}),
    }
    return { plain, cloned: { ...plain, cloned: true } }
  }

  planGuest(m: QemuManifest | ContainerManifest): void {
    const { node, vmid } = m.spec
    const name = m.metadata.name
    this.checkNode(m.kind, name, node)
    const type: GuestType = m.kind === 'VM' || m.kind === 'TemplateVM' ? 'qemu' : 'lxc'
    const isTemplate = m.kind === 'TemplateVM' || m.kind === 'TemplateCT'
    const address = guestAddress(m.kind, node, vmid, name)
    const skip = (code: Skip['code'], message: string) =>
      this.skips.push({ code, address, kind: m.kind, node, vmid, message })
    const anomaly = (a: Omit<Anomaly, 'address' | 'kind'>): void => {
      this.anomalies.push({ ...a, address, kind: m.kind })
    }
    const resource = keyOf(m.kind, name)
    const level = this.levels.get(resource)?.level ?? 0
    const base = { resource, address, kind: m.kind, name, node, vmid, tier: 0 as const, level }

    const u = this.unknown.get(vmid)
    if (u) {
      this.matched.add(vmid)
      this.reportedUnknown.add(vmid)
      // a guest on an offline node is unreadable because of its node: say so
      skip(
        this.nodeDown(u.node) ? 'node-offline' : 'unknown',
        `${u.type}/${vmid} on ${u.node} could not be read this cycle (${u.reason}); no create, update, power or delete`,
      )
      return
    }
    const g = this.guests.get(vmid)
    if (g) this.matched.add(vmid)
    if (g && (g.node !== node || g.type !== type)) {
      anomaly({
        code: g.node !== node ? 'node-mismatch' : 'kind-mismatch',
        message: `vmid ${vmid} is a ${g.type} guest on node ${g.node} on PVE, but ${resource} declares a ${type} guest on ${node}; proxops will not touch it`,
      })
      return
    }
    const hidden = g ? undefined : this.elsewhere.get(vmid)
    if (hidden) {
      // vmids are cluster-wide: a guest outside the allowlist still makes a create impossible
      anomaly({
        code: 'node-mismatch',
        message: `vmid ${vmid} exists on node ${hidden}, outside this cluster's node allowlist; ${resource} is not created`,
      })
      return
    }
    if (!g && this.invisible.has(vmid)) {
      // PVE's nextid sees the whole vmlist; the guest itself is hidden from this token (no VM.Audit on it)
      anomaly({
        code: 'vmid-taken',
        message: `vmid ${vmid} is held by a guest this token cannot see (PVE's /cluster/nextid says it exists; no VM.Audit on /vms/${vmid}); ${resource} is not created: grant VM.Audit to see it, or choose another vmid`,
      })
      return
    }
    const pveName = isQemu(m) ? m.spec['pve-name'] : m.spec.dns.hostname
    const owner = g ? ownerOf(g.tags, this.policy) : undefined
    if (g && owner?.kind === 'other') {
      // one PVE cluster reached by two entries: the guest is the other entry's, whatever this one declares
      anomaly({
        code: 'owned-elsewhere',
        message: `vmid ${vmid} is held by the ${g.type} guest ${JSON.stringify(g.name ?? '')} on ${g.node}, owned by cluster entry ${owner.entries.join(', ')} (tag ${owner.entries.map((e) => `${this.policy.ownershipTag}.${e}`).join(', ')}); ${resource} does not take it over`,
      })
      return
    }
    if (g && owner?.kind === 'none' && !sameGuest(g, pveName, name)) {
      // vmids are cluster-wide: an unowned guest of another name at this vmid is not taken over; declaring its
      // PVE name (what proxops adopt writes) is the explicit claim
      anomaly({
        code: 'vmid-taken',
        message: `vmid ${vmid} is held by the untagged ${g.type} guest ${JSON.stringify(g.name ?? '')} on ${g.node}; ${resource} (PVE name ${JSON.stringify(pveName)}) does not take it over: adopt it (proxops adopt) or choose another vmid`,
      })
      return
    }
    if (this.nodeDown(node)) {
      skip('node-offline', `node ${node} is offline or unknown; ${resource} not planned this cycle`)
      return
    }
    const f = this.fields(m)
    for (const gap of f.gaps) this.gaps.push({ address, ...gap })

    if (!g) {
      // renumbering (same name, new vmid) creates a new guest; the old one is kept (its name is declared, so it
      // is never pruned) and reported
      const olds = new Set([
        ...(this.ownedByName.get(`${type}\0${pveName}`) ?? []),
        ...(this.ownedByName.get(`${type}\0${name}`) ?? []),
      ])
      for (const old of olds) {
        if (old.vmid === vmid) continue
        anomaly({
          code: 'renumbered',
          message: `${resource} was vmid ${old.vmid} on ${old.node} on PVE (same name); vmid ${vmid} is created as a new guest and ${old.vmid} is kept: remove it by hand once the new one serves, or restore spec.vmid`,
        })
      }
      const pool = this.pools.createParam(m, address)
      if (pool === 'refused') return
      const first = this.drafts.length
      planNewGuest({ m: this.powerFor(m, undefined), f, base, type, isTemplate, skip, anomaly }, this.env)
      if (pool.pool !== undefined) this.joinOnCreate(first, address, pool.pool)
      this.planFirewall(m, type, base, undefined)
      this.planHa(m, type, undefined, base, first)
      return
    }
    if (g.lock !== undefined && g.lock !== '') {
      skip('locked', `locked: ${g.lock}; not planned this cycle`)
      return
    }
    if (g.status === 'paused') {
      // PVE refuses both start ("already running") and shutdown ("VM is paused") of a paused VM
      skip(
        'paused',
        `${g.qmpstatus !== undefined && g.qmpstatus !== 'paused' ? `QMP status ${g.qmpstatus}` : 'paused'} on PVE; resume or stop it by hand; not planned this cycle`,
      )
      return
    }
    if (g.template && !isTemplate) {
      anomaly({
        code: 'kind-mismatch',
        message: `${resource} is declared as ${m.kind} but vmid ${vmid} is a PVE template; PVE cannot turn a template back (declare it as ${type === 'qemu' ? 'TemplateVM' : 'TemplateCT'} or remove it by hand)`,
      })
      return
    }
    const first = this.drafts.length
    const inherited = this.inheritedKeys(m)
    planLiveGuest(
      { m: this.powerFor(m, g), f, base, type, isTemplate, skip, anomaly, ...(inherited ? { inherited } : {}) },
      g,
      this.env,
    )
    this.safetySnapshot(m, g, base, type, isTemplate, first, anomaly)
    this.planFirewall(m, type, base, g)
    this.planHa(m, type, g, base, first)
    this.pools.membership(m, base, this.idsFrom(first, address))
  }

  /**
   * A safety snapshot before the guest's disruptive actions (drafts from index `first`), which wait for it; where
   * PVE cannot snapshot a volume of the guest, an anomaly instead and none of those actions (docs/safety.md).
   */
  private safetySnapshot(
    m: QemuManifest | ContainerManifest,
    g: LiveGuest,
    base: Omit<Draft, 'type' | 'reason' | 'diffs' | 'disruption' | 'requests'>,
    type: GuestType,
    isTemplate: boolean,
    first: number,
    anomaly: (a: Omit<Anomaly, 'address' | 'kind'>) => void,
  ): void {
    const keep = safetySnapshotKeep(m, this.policy)
    if (keep === undefined) return
    const own = this.drafts.slice(first).filter((d) => d.address === base.address)
    if (!takesSnapshots(isTemplate || g.template, own)) return
    const triggers = own.filter(isSnapshotTrigger)
    if (triggers.length === 0) return
    const what = [...new Set(triggers.map((d) => d.type))].join(', ')
    const problem = snapshotProblem(type, g.config, (sid) => this.storageTypes.get(`${g.node}\0${sid}`))
    if (problem) {
      anomaly({
        code: 'snapshot-unsupported',
        field: problem.key,
        message: `${base.resource}: safety snapshots are on, but PVE cannot snapshot ${problem.key} (${problem.volume}: ${problem.reason}); not done this cycle: ${what}. Move the volume to a storage that snapshots it, or set the annotation proxops/safety-snapshots: "false"`,
      })
      const dropped = new Set(triggers.map((d) => d.id))
      for (let i = this.drafts.length - 1; i >= first; i--)
        if (dropped.has((this.drafts[i] as Draft).id)) this.drafts.splice(i, 1)
      for (const d of own) if (d.after) d.after = d.after.filter((id) => !dropped.has(id))
      return
    }
    const id = `${base.address}#snapshot`
    this.drafts.push({
      ...base,
      id,
      type: 'snapshot',
      reason: `${base.resource}: safety snapshot proxops-<UTC time> before ${what}; keeps the newest ${keep} proxops-* snapshots`,
      diffs: [],
      disruption: 'none',
      requests: [{ call: 'snapshot', node: g.node, guest: type, vmid: g.vmid, keep, digest: g.digest }],
      digest: g.digest,
    })
    for (const d of triggers) d.after = [...(d.after ?? []), id]
  }

  /** `pool=` on the create or clone request of a new guest: PVE adds it when the worker ends */
  private joinOnCreate(first: number, address: string, pool: string): void {
    for (let i = first; i < this.drafts.length; i++) {
      const d = this.drafts[i] as Draft
      if (d.address !== address || (d.type !== 'create' && d.type !== 'clone')) continue
      d.requests = d.requests.map((r, n) =>
        n === 0 && (r.call === 'createGuest' || r.call === 'cloneGuest') ? { ...r, params: { ...r.params, pool } } : r,
      )
      d.diffs = sortDiffs([...d.diffs, { field: 'spec.pool', key: 'pool', after: pool }])
    }
  }

  /** ids of the drafts for one address from index `first` on */
  private idsFrom(first: number, address: string): string[] {
    const out: string[] = []
    for (let i = first; i < this.drafts.length; i++) {
      const d = this.drafts[i] as Draft
      if (d.address === address) out.push(d.id ?? `${d.address}#${d.type}`)
    }
    return out
  }

  /** spec.firewall (firewall/plan.ts), after the guest's own actions; a new guest's waits for its create */
  private planFirewall(
    m: QemuManifest | ContainerManifest,
    type: GuestType,
    base: FirewallPlanInput['base'],
    g: LiveGuest | undefined,
  ): void {
    if (m.spec.firewall === undefined) return
    const created = g
      ? undefined
      : this.drafts.find((d) => d.address === base.address && (d.type === 'create' || d.type === 'clone'))
    planFirewall(
      {
        m,
        type,
        address: base.address,
        base,
        ...(g ? { live: g } : {}),
        ...(created ? { createdBy: created.id ?? `${created.address}#${created.type}` } : {}),
        firewalls: this.firewalls,
        policy: disruptionFor(m, this.policy.disruption),
      },
      this,
    )
  }

  /** an HA-managed guest's power goes through its HA resource: the guest plan then keeps the live power */
  private powerFor<M extends QemuManifest | ContainerManifest>(m: M, g: LiveGuest | undefined): M {
    const pin = this.ha.pinnedPower(m, g)
    return pin === undefined || pin === m.spec.state ? m : { ...m, spec: { ...m.spec, state: pin } }
  }

  /** the guest's HA actions, after the guest's own actions of this cycle (drafts from index `first`) */
  private planHa(
    m: QemuManifest | ContainerManifest,
    type: GuestType,
    g: LiveGuest | undefined,
    base: Parameters<HaPlanner['plan']>[3],
    first: number,
  ): void {
    if (m.kind !== 'VM' && m.kind !== 'LXC') return
    const after: string[] = []
    for (let i = first; i < this.drafts.length; i++) {
      const d = this.drafts[i] as Draft
      if (d.address === base.address) after.push(d.id ?? `${d.address}#${d.type}`)
    }
    this.ha.plan(m, type, g, base, after)
  }

  /** Unknown guests that no manifest claims are still reported (they are never prune candidates). */
  reportUnknown(): void {
    for (const u of this.unknown.values()) {
      if (this.reportedUnknown.has(u.vmid)) continue
      const kind: GuestKind = u.type === 'qemu' ? 'VM' : 'LXC'
      this.skips.push({
        code: 'unknown',
        address: guestAddress(kind, u.node, u.vmid, u.name),
        kind,
        node: u.node,
        vmid: u.vmid,
        message: `could not be read this cycle (${u.reason}); never a prune candidate`,
      })
    }
  }

  finish(): Plan {
    return assemblePlan({
      desired: this.desired,
      policy: this.policy,
      drafts: this.drafts,
      out: this,
      byKey: this.byKey,
      levels: this.levels,
    })
  }
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
