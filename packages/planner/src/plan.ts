/**
 * plan(desired, live, policy): the pure heart of ProxOps. Same inputs, same Plan (see serializePlan).
 * Reads nothing but its arguments; all PVE knowledge comes from the LiveInventory observe() produced.
 */
import { keyOf, levels } from './deps.js'
import { isArtifact, isQemu, type ArtifactManifest, type DesiredManifest, type DesiredState, type LxcManifest, type SecretLookup, type VmManifest } from './desired.js'
import { allowed, classify, isDisruptionPolicy, maxClass, type GuestRuntime } from './disruption.js'
import { PlanInputError } from './errors.js'
import { SENSITIVE, type Owned } from './fields.js'
import type { LiveGuest, LiveInventory } from './inventory.js'
import { lxcFields, lxcSlotFamily } from './lxc.js'
import {
  DEFAULT_POLICY,
  PLAN_FORMAT_VERSION,
  type Action,
  type ActionType,
  type Anomaly,
  type DisruptionClass,
  type DisruptionPolicy,
  type FieldDiff,
  type Gap,
  type GuestKind,
  type PendingChange,
  type Plan,
  type PlanParams,
  type PlanParamValue,
  type Policy,
  type PveRequest,
  type ResourceKind,
  type Skip,
} from './plan-types.js'
import type { GuestType } from './ports.js'
import { prunes } from './prune.js'
import { CLONE_IDENTITY_KEYS, hotplugSet, qemuFields, qemuSlotFamily, type GuestBuildContext, type GuestFields } from './qemu.js'
import { liveBool, parsePS } from './fields.js'

export interface PlanOptions {
  /** decrypted secret values, used only to compare `sshkeys` from refs; never copied into the plan */
  secrets?: SecretLookup
}

const CONTENT_DIR: Record<ArtifactManifest['kind'], string> = { ISO: 'iso', CTTemplate: 'vztmpl', DiskImage: 'import' }

export const artifactVolid = (a: ArtifactManifest): string => `${a.spec.storage}:${CONTENT_DIR[a.kind]}/${a.spec.filename}`
export const guestAddress = (kind: ResourceKind, node: string, vmid: number, name?: string): string =>
  `${kind}/${node}/${vmid}${name === undefined || name === '' ? '' : `(${name})`}`
export const artifactAddress = (kind: ResourceKind, node: string, storage: string, filename: string): string =>
  `${kind}/${node}/${storage}/${filename}`

/** Action order within a tier and level (RB 9.4, mark-template and restarts placed where they are safe). */
const RANK: Record<ActionType, number> = {
  download: 0,
  create: 0,
  clone: 0,
  update: 1,
  'shutdown-then-update': 1,
  resize: 2,
  'mark-template': 3,
  restart: 4,
  start: 5,
  stop: 6,
  delete: 9,
}

/** Draft actions before dependency wiring: `resource` is the manifest key whose prerequisites apply. */
export interface Draft extends Omit<Action, 'id' | 'dependsOn' | 'requires'> {
  resource?: string
  /** same-object actions that must run first (ids) */
  after?: string[]
  id?: string
}

export function plan(desired: DesiredState, live: LiveInventory, policy: Policy = DEFAULT_POLICY, options: PlanOptions = {}): Plan {
  checkPolicy(policy)
  const ctx = new Context(desired, live, policy, options)
  for (const m of desired.manifests) {
    if (isArtifact(m)) ctx.planArtifact(m)
    else ctx.planGuest(m)
  }
  ctx.reportUnknown()
  const pr = prunes(ctx.visibleGuests, ctx.matched, ctx.desiredCounts, policy, ctx.offlineNodes)
  ctx.drafts.push(...pr.drafts)
  ctx.anomalies.push(...pr.anomalies)
  ctx.skips.push(...pr.skips)
  return ctx.finish()
}

function checkPolicy(p: Policy): void {
  if (p.pruneBudget !== 'unlimited' && !(Number.isInteger(p.pruneBudget) && p.pruneBudget >= 0)) {
    throw new PlanInputError('PLAN_POLICY', `pruneBudget must be a whole number >= 0 or 'unlimited' (got ${String(p.pruneBudget)})`, 'policy.pruneBudget')
  }
  if (!(p.pruneRatioLimit > 0 && p.pruneRatioLimit <= 1)) {
    throw new PlanInputError('PLAN_POLICY', 'pruneRatioLimit must be in (0, 1]', 'policy.pruneRatioLimit')
  }
  if (!isDisruptionPolicy(p.disruption)) throw new PlanInputError('PLAN_POLICY', `unknown disruption policy ${JSON.stringify(p.disruption)}`, 'policy.disruption')
  if (!/^[a-z0-9_][a-z0-9_\-+.]*$/.test(p.ownershipTag)) throw new PlanInputError('PLAN_POLICY', 'ownershipTag must be a lower-case PVE tag', 'policy.ownershipTag')
  if (!(Number.isInteger(p.shutdownTimeoutSeconds) && p.shutdownTimeoutSeconds > 0)) {
    throw new PlanInputError('PLAN_POLICY', 'shutdownTimeoutSeconds must be a whole number > 0', 'policy.shutdownTimeoutSeconds')
  }
}

class Context {
  readonly drafts: Draft[] = []
  readonly anomalies: Anomaly[] = []
  readonly skips: Skip[] = []
  readonly pending: PendingChange[] = []
  readonly gaps: Gap[] = []
  /** live vmids claimed by a desired guest (never prune candidates) */
  readonly matched = new Set<number>()
  readonly desiredCounts = new Map<GuestKind, number>()
  readonly visibleGuests: LiveGuest[]
  private readonly byKey = new Map<string, DesiredManifest>()
  private readonly levels: Map<string, { level: number; prereqs: string[] }>
  private readonly allowedNode: (node: string) => boolean
  private readonly online = new Map<string, boolean>()
  private readonly guests = new Map<number, LiveGuest>()
  private readonly unknown = new Map<number, LiveInventory['unknownGuests'][number]>()
  private readonly volumes = new Set<string>()
  private readonly unreadable = new Map<string, string>()
  private readonly reportedUnknown = new Set<number>()

  constructor(
    private readonly desired: DesiredState,
    private readonly live: LiveInventory,
    private readonly policy: Policy,
    private readonly options: PlanOptions,
  ) {
    const allow = new Set(policy.nodes)
    this.allowedNode = (n) => allow.size === 0 || allow.has(n)
    for (const m of desired.manifests) {
      const key = keyOf(m.kind, m.metadata.name)
      if (this.byKey.has(key)) throw new PlanInputError('PLAN_DUPLICATE', 'declared twice', key)
      this.byKey.set(key, m)
      if (!isArtifact(m)) {
        this.desiredCounts.set(m.kind, (this.desiredCounts.get(m.kind) ?? 0) + 1)
      }
    }
    this.levels = levels(this.byKey)
    for (const n of live.nodes) this.online.set(n.node, n.online)
    this.visibleGuests = live.guests.filter((g) => this.allowedNode(g.node))
    for (const g of this.visibleGuests) this.guests.set(g.vmid, g)
    // RB 9.5: a live guest whose PVE name is a desired name of the same family is not a prune candidate
    const names = new Set<string>()
    for (const m of desired.manifests) {
      if (isArtifact(m)) continue
      const family = isQemu(m) ? 'qemu' : 'lxc'
      names.add(`${family}/${m.metadata.name}`)
      names.add(`${family}/${isQemu(m) ? m.spec['pve-name'] : m.spec.dns.hostname}`)
    }
    for (const g of this.visibleGuests) if (g.name !== undefined && names.has(`${g.type}/${g.name}`)) this.matched.add(g.vmid)
    for (const u of live.unknownGuests) if (this.allowedNode(u.node)) this.unknown.set(u.vmid, u)
    for (const v of live.volumes) this.volumes.add(`${v.node}\0${v.storage}\0${v.volid}`)
    for (const u of live.unreadableStorages) this.unreadable.set(`${u.node}\0${u.storage}`, u.reason)
  }

  private checkNode(kind: string, name: string, node: string): void {
    if (!this.allowedNode(node)) {
      throw new PlanInputError('PLAN_UNKNOWN_NODE', `references node ${JSON.stringify(node)}, which is not in the cluster's node allowlist (${this.policy.nodes.join(', ')})`, keyOf(kind, name))
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
    for (const node of m.spec.nodes) {
      this.checkNode(m.kind, m.metadata.name, node)
      const address = artifactAddress(m.kind, node, storage, filename)
      const skip = (code: Skip['code'], message: string) => this.skips.push({ code, address, kind: m.kind, node, message })
      if (this.nodeDown(node)) {
        skip('node-offline', `node ${node} is offline or unknown; not checking ${storage}/${filename} this cycle`)
        continue
      }
      const reason = this.unreadable.get(`${node}\0${storage}`)
      if (reason !== undefined) {
        skip('storage-unreadable', `live inventory of ${storage} on ${node} unreadable this cycle; skipping download of ${storage}/${filename}`)
        continue
      }
      if (this.volumes.has(`${node}\0${storage}\0${volid}`)) continue
      const params: Record<string, PlanParamValue> = { url: m.spec.url, filename, content: CONTENT_DIR[m.kind] }
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
        reason: `${m.kind} ${filename} not present on storage ${storage} on ${node}; will download`,
        diffs: [{ field: 'spec.url', key: 'volid', after: volid }],
        disruption: 'none',
        tier: 0,
        level: this.levelOf(m),
        requests: [{ call: 'downloadUrl', node, storage, params }],
      })
    }
  }

  private levelOf(m: DesiredManifest): number {
    return this.levels.get(keyOf(m.kind, m.metadata.name))?.level ?? 0
  }

  private fields(m: VmManifest | LxcManifest): GuestFields {
    const bctx: GuestBuildContext = {
      ownershipTag: this.policy.ownershipTag,
      volid: (kind, name) => {
        const a = this.byKey.get(keyOf(kind, name))
        return a && isArtifact(a) ? artifactVolid(a) : undefined
      },
      cloned: m.kind === 'VM' && m.spec.clone !== undefined,
      ...(this.options.secrets ? { secrets: this.options.secrets } : {}),
    }
    return isQemu(m) ? qemuFields(m, bctx) : lxcFields(m, bctx)
  }

  planGuest(m: VmManifest | LxcManifest): void {
    const { node, vmid } = m.spec
    const name = m.metadata.name
    this.checkNode(m.kind, name, node)
    const type: GuestType = m.kind === 'VM' || m.kind === 'TemplateVM' ? 'qemu' : 'lxc'
    const isTemplate = m.kind === 'TemplateVM' || m.kind === 'TemplateCT'
    const address = guestAddress(m.kind, node, vmid, name)
    const skip = (code: Skip['code'], message: string) => this.skips.push({ code, address, kind: m.kind, node, vmid, message })
    const anomaly = (a: Omit<Anomaly, 'address' | 'kind'>) => this.anomalies.push({ ...a, address, kind: m.kind })
    const resource = keyOf(m.kind, name)
    const level = this.levelOf(m)
    const base = { resource, address, kind: m.kind, name, node, vmid, tier: 0 as const, level }

    const u = this.unknown.get(vmid)
    if (u) {
      this.matched.add(vmid)
      this.reportedUnknown.add(vmid)
      skip('unknown', `${u.type}/${vmid} on ${u.node} could not be read this cycle (${u.reason}); no create, update, power or delete`)
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
    if (this.nodeDown(node)) {
      skip('node-offline', `node ${node} is offline or unknown; ${resource} not planned this cycle`)
      return
    }
    const f = this.fields(m)
    for (const gap of f.gaps) this.gaps.push({ address, ...gap })

    if (!g) {
      this.planCreate(m, f, base, type, isTemplate, skip, anomaly)
      return
    }
    if (g.lock !== undefined && g.lock !== '') {
      skip('locked', `locked: ${g.lock}; not planned this cycle`)
      return
    }
    if (g.template && !isTemplate) {
      anomaly({ code: 'kind-mismatch', message: `${resource} is declared as ${m.kind} but vmid ${vmid} is a PVE template; PVE cannot turn a template back (declare it as ${type === 'qemu' ? 'TemplateVM' : 'TemplateCT'} or remove it by hand)` })
      return
    }
    this.planExisting(m, f, g, base, type, isTemplate, skip, anomaly)
  }

  private planCreate(
    m: VmManifest | LxcManifest,
    f: GuestFields,
    base: Pick<Draft, 'resource' | 'address' | 'kind' | 'name' | 'node' | 'vmid' | 'tier' | 'level'>,
    type: GuestType,
    isTemplate: boolean,
    skip: (code: Skip['code'], message: string) => void,
    anomaly: (a: Omit<Anomaly, 'address' | 'kind'>) => void,
  ): void {
    const { node, vmid } = m.spec
    const started = m.spec.state === 'started' && !isTemplate
    if (f.createError !== undefined) {
      skip('invalid-desired', f.createError)
      return
    }
    const createDiffs: FieldDiff[] = []
    const params: Record<string, PlanParamValue> = {}
    for (const o of f.owned) {
      if (o.create === undefined) continue
      params[o.key] = o.create
      createDiffs.push({ field: o.field, key: o.key, after: o.sensitive ? SENSITIVE : (o.show ?? display(o.create)) })
    }

    if (m.kind === 'VM' && m.spec.clone !== undefined) {
      const src = this.byKey.get(keyOf('TemplateVM', m.spec.clone))
      if (!src || src.kind !== 'TemplateVM') {
        anomaly({ code: 'clone-source', message: `clone source TemplateVM/${m.spec.clone} is not declared in this cluster; not cloning` })
        return
      }
      if (src.spec.vmid === vmid) {
        anomaly({ code: 'clone-source', message: `clone source TemplateVM/${m.spec.clone} has the same vmid ${vmid}; not cloning` })
        return
      }
      // the post-clone write: own values minus disk slots; inherited identity keys not owned are deleted
      const set: Record<string, PlanParamValue> = {}
      for (const o of f.owned) if (o.create !== undefined && !o.volume) set[o.key] = o.create
      const nics = Math.max(m.spec.networks.length, ...(m.spec['cloud-init-data']?.ipconfigs ?? []).map((c) => c.nic + 1))
      const del = [...CLONE_IDENTITY_KEYS, ...Array.from({ length: nics }, (_, i) => `ipconfig${i}`)].filter((k) => !(k in set))
      if (del.length > 0) set.delete = del.join(',')
      const requests: PveRequest[] = [
        { call: 'cloneGuest', node, guest: 'qemu', vmid: src.spec.vmid, params: { newid: vmid, full: 1, name: m.spec['pve-name'] } },
        { call: 'updateConfig', node, guest: 'qemu', vmid, params: sortParams(set), ...('ide2' in set ? { onlyIfAbsent: ['ide2'] } : {}) },
      ]
      if (started) requests.push({ call: 'start', node, guest: 'qemu', vmid })
      this.drafts.push({
        ...base,
        type: 'clone',
        reason: `${base.resource}: not on PVE; will full-clone from TemplateVM ${m.spec.clone} (vmid ${src.spec.vmid})`,
        diffs: createDiffs.filter((d) => d.key in set),
        disruption: 'none',
        requests,
      })
      return
    }

    for (const [k, v] of Object.entries(f.createOnly)) {
      params[k] = v
      createDiffs.push({ field: k === 'ostemplate' ? 'spec.template' : `spec.extra.${k}`, key: k, after: String(v) })
    }
    params.vmid = vmid
    if (started) params.start = 1
    const requests: PveRequest[] = [{ call: 'createGuest', node, guest: type, params: sortParams(params) }]
    if (isTemplate) requests.push({ call: 'markTemplate', node, guest: type, vmid })
    this.drafts.push({
      ...base,
      type: 'create',
      reason: `${base.resource}: not on PVE; will create${isTemplate ? ' + mark as PVE template' : ''}`,
      diffs: sortDiffs(createDiffs),
      disruption: 'none',
      requests,
    })
  }

  private planExisting(
    m: VmManifest | LxcManifest,
    f: GuestFields,
    g: LiveGuest,
    base: Pick<Draft, 'resource' | 'address' | 'kind' | 'name' | 'node' | 'vmid' | 'tier' | 'level'>,
    type: GuestType,
    isTemplate: boolean,
    skip: (code: Skip['code'], message: string) => void,
    anomaly: (a: Omit<Anomaly, 'address' | 'kind'>) => void,
  ): void {
    const { node, vmid } = m.spec
    const resource = base.resource as string
    const cfg = mergedView(g)
    const running = g.status === 'running'
    const rt: GuestRuntime = { type, running, hotplug: hotplugSet(cfg.hotplug), numa: liveBool(cfg.numa, false) }
    const policy = disruptionFor(m, this.policy.disruption)
    const cloned = m.kind === 'VM' && m.spec.clone !== undefined

    const params: Record<string, PlanParamValue> = {}
    const diffs: FieldDiff[] = []
    const classes: DisruptionClass[] = []
    const heldBack: string[] = []
    const leftPending: string[] = []
    const pendingKeys: string[] = []
    const resizes: { key: string; size: string; diff: FieldDiff }[] = []
    const ownedKeys = new Set<string>()

    for (const o of f.owned) {
      ownedKeys.add(o.key)
      const before = cfg[o.key]
      const outcomes = o.compare(before)
      if (outcomes.length === 0 && g.pending[o.key] !== undefined && g.config[o.key] !== g.pending[o.key]) pendingKeys.push(o.key)
      for (const out of outcomes) {
        if (out.t === 'anomaly') anomaly({ code: out.code, field: o.key, message: `${resource}: ${out.message}` })
        else if (out.t === 'gap') this.gaps.push({ address: base.address as string, field: o.field, note: out.note })
        else if (out.t === 'resize') {
          resizes.push({ key: o.key, size: out.size, diff: { field: o.field, key: o.key, ...(before === undefined ? {} : { before }), after: `size=${out.after}` } })
        } else {
          const cls = classify(o.key, out.newSlot === true, rt)
          const diff: FieldDiff = { field: o.field, key: o.key, ...(before === undefined ? {} : { before: o.sensitive ? SENSITIVE : before }), after: o.sensitive ? SENSITIVE : out.after }
          if (!allowed(cls, policy) && cls !== 'reboot') {
            heldBack.push(o.key)
            continue
          }
          if (!allowed(cls, policy)) leftPending.push(o.key)
          else classes.push(cls)
          params[o.key] = out.value
          diffs.push(diff)
        }
      }
    }

    // live-only slots: reported, never removed
    const slotKeys: string[] = []
    for (const key in cfg) if (!f.declaredSlots.has(key) && (type === 'qemu' ? qemuSlotFamily(key) : lxcSlotFamily(key)) !== undefined) slotKeys.push(key)
    for (const key of slotKeys.sort()) {
      const fam = type === 'qemu' ? qemuSlotFamily(key) : lxcSlotFamily(key)
      if (fam === undefined) continue
      const value = cfg[key] as string
      if (fam === 'disk') {
        const p = parsePS(value, 'file')
        if (key.startsWith('ide') && (p?.media === 'cdrom' || (p?.file ?? '').includes('cloudinit'))) continue
        if (p?.file === 'none') continue
        if (cloned) continue
      }
      anomaly({ code: 'live-only-slot', field: key, message: `${resource}: live-only ${fam} slot ${key} (${value.split(',')[0]}) is not declared; proxops will not automatically remove it` })
    }

    // a clone-backed VM drops inherited identity keys it does not own
    if (cloned) {
      const nics = Math.max(m.spec.networks.length, ...((m as VmManifest).spec['cloud-init-data']?.ipconfigs ?? []).map((c) => c.nic + 1))
      const identity = [...CLONE_IDENTITY_KEYS, ...Array.from({ length: nics }, (_, i) => `ipconfig${i}`)]
      const del = identity.filter((k) => !ownedKeys.has(k) && cfg[k] !== undefined)
      if (del.length > 0) {
        params.delete = del.join(',')
        for (const k of del) diffs.push({ field: 'spec.clone', key: k, before: k === 'cipassword' || k === 'sshkeys' ? SENSITIVE : (cfg[k] as string) })
      }
    }

    if (heldBack.length > 0) {
      skip('disruption', `${heldBack.join(', ')} would change a running guest (hotplug) and disruption is ${policy}; not written this cycle`)
    }

    const desiredStarted = m.spec.state === 'started' && !isTemplate
    let ids: string[] = []
    // each action waits for the earlier actions of the same guest; resizes only for the config write
    let beforeResizes: string[] | undefined
    const push = (d: Draft): string => {
      const id = `${d.address}#${d.type}${d.type === 'resize' ? `:${(d.requests[0] as { disk: string }).disk}` : ''}`
      if (d.type === 'resize') beforeResizes ??= [...ids]
      this.drafts.push({ ...d, id, after: d.type === 'resize' ? [...(beforeResizes ?? [])] : [...ids] })
      ids = [...ids, id]
      return id
    }
    const shutdown = (): PveRequest => ({ call: 'shutdown', node, guest: type, vmid, timeoutSeconds: this.policy.shutdownTimeoutSeconds, forceStop: this.policy.forceStopAfterTimeout })
    let stoppedByUpdate = false
    const hasWrite = Object.keys(params).length > 0
    if (hasWrite) {
      const cls = maxClass(classes)
      const keys = Object.keys(params).filter((k) => k !== 'delete')
      const reasonKeys = [...keys, ...(params.delete !== undefined ? [`delete ${String(params.delete)}`] : [])].join(', ')
      const update: PveRequest = { call: 'updateConfig', node, guest: type, vmid, params: sortParams(params), digest: g.digest }
      if (running && (cls === 'reboot' || cls === 'stop')) {
        stoppedByUpdate = true
        const requests: PveRequest[] = [shutdown(), update]
        if (desiredStarted) requests.push({ call: 'start', node, guest: type, vmid })
        push({ ...base, type: 'shutdown-then-update', reason: `${resource}: config drift (${reasonKeys}); needs a restart: graceful shutdown, write${desiredStarted ? ', start' : ''}`, diffs: sortDiffs(diffs), disruption: cls, digest: g.digest, requests })
      } else {
        push({ ...base, type: 'update', reason: `${resource}: config drift (${reasonKeys})`, diffs: sortDiffs(diffs), disruption: leftPending.length > 0 ? 'reboot' : cls, digest: g.digest, requests: [update] })
      }
      if (leftPending.length > 0) {
        this.pending.push({ address: base.address as string, keys: leftPending, message: `${leftPending.join(', ')} will stay pending in PVE until the guest restarts (disruption: ${policy})` })
      }
    }
    for (const r of resizes) {
      push({
        ...base,
        type: 'resize',
        reason: `${resource}: grow ${r.key} to ${r.size}`,
        diffs: [r.diff],
        disruption: running ? 'hotplug' : 'none',
        digest: g.digest,
        requests: [{ call: 'resizeDisk', node, guest: type, vmid, disk: r.key, size: r.size, ...(hasWrite ? {} : { digest: g.digest }) }],
      })
    }
    if (isTemplate && !g.template) {
      if (running && !allowed('stop', policy)) {
        skip('disruption', `mark-template needs the guest stopped and disruption is ${policy}`)
      } else {
        const requests: PveRequest[] = running && !stoppedByUpdate ? [shutdown(), { call: 'markTemplate', node, guest: type, vmid }] : [{ call: 'markTemplate', node, guest: type, vmid }]
        push({ ...base, type: 'mark-template', reason: `${resource}: PVE object present but not a template; will mark as template`, diffs: [{ field: 'kind', key: 'template', after: '1' }], disruption: running ? 'stop' : 'none', digest: g.digest, requests })
      }
      return
    }
    if (isTemplate) return
    if (pendingKeys.length > 0 && running && !stoppedByUpdate) {
      if (allowed('reboot', policy)) {
        const requests: PveRequest[] = [shutdown()]
        if (desiredStarted) requests.push({ call: 'start', node, guest: type, vmid })
        push({ ...base, type: 'restart', reason: `${resource}: owned changes pending in PVE (${pendingKeys.join(', ')}); graceful shutdown${desiredStarted ? ' and start' : ''} applies them`, diffs: [], disruption: 'reboot', digest: g.digest, requests })
        stoppedByUpdate = true
      } else {
        this.pending.push({ address: base.address as string, keys: pendingKeys, message: `${pendingKeys.join(', ')} pending in PVE until the guest restarts (disruption: ${policy})` })
      }
    }
    // power (RB 9.3): unknown live power does nothing
    const livePower = g.status === 'running' ? 'running' : g.status === 'stopped' || g.status === 'paused' || g.status === '' ? 'stopped' : 'unknown'
    if (livePower === 'unknown') return
    if (desiredStarted && livePower === 'stopped') {
      push({ ...base, type: 'start', reason: `${resource}: power "stopped" → "started"`, diffs: [{ field: 'spec.state', key: 'status', before: g.status, after: 'running' }], disruption: 'none', requests: [{ call: 'start', node, guest: type, vmid }] })
    } else if (!desiredStarted && livePower === 'running' && !stoppedByUpdate) {
      push({ ...base, type: 'stop', reason: `${resource}: power "running" → "stopped" (graceful shutdown)`, diffs: [{ field: 'spec.state', key: 'status', before: 'running', after: 'stopped' }], disruption: 'stop', requests: [shutdown()] })
    }
  }

  /** Unknown guests that no manifest claims are still reported (they are never prune candidates). */
  reportUnknown(): void {
    for (const u of this.unknown.values()) {
      if (this.reportedUnknown.has(u.vmid)) continue
      const kind: GuestKind = u.type === 'qemu' ? 'VM' : 'LXC'
      this.skips.push({ code: 'unknown', address: guestAddress(kind, u.node, u.vmid, u.name), kind, node: u.node, vmid: u.vmid, message: `could not be read this cycle (${u.reason}); never a prune candidate` })
    }
  }

  finish(): Plan {
    // ids, then dependency wiring: prerequisites' actions (same node for artifacts) and same-object order
    const byResource = new Map<string, Draft[]>()
    for (const d of this.drafts) {
      d.id ??= `${d.address}#${d.type}`
      if (d.resource !== undefined) {
        const list = byResource.get(d.resource) ?? []
        list.push(d)
        byResource.set(d.resource, list)
      }
    }
    const actions: Action[] = this.drafts.map((d) => {
      const dependsOn = new Set<string>(d.after ?? [])
      const requires = new Set<string>()
      const pre = d.resource === undefined ? [] : (this.levels.get(d.resource)?.prereqs ?? [])
      for (const p of pre) {
        const m = this.byKey.get(p)
        if (!m) continue
        if (isArtifact(m)) {
          const nodes = m.spec.nodes.includes(d.node) ? [d.node] : [...m.spec.nodes]
          for (const n of nodes) requires.add(artifactAddress(m.kind, n, m.spec.storage, m.spec.filename))
        } else {
          requires.add(guestAddress(m.kind, m.spec.node, m.spec.vmid, m.metadata.name))
        }
        for (const a of byResource.get(p) ?? []) if (requires.has(a.address)) dependsOn.add(a.id as string)
      }
      const { resource: _r, after: _a, ...rest } = d
      return { ...rest, id: d.id as string, dependsOn: [...dependsOn].sort(), requires: [...requires].sort() }
    })
    actions.sort(compareActions)
    const anomalies = [...this.anomalies].sort((a, b) => cmp(a.address ?? '', b.address ?? '') || cmp(a.field ?? '', b.field ?? '') || cmp(a.code, b.code) || cmp(a.message, b.message))
    const skips = [...this.skips].sort((a, b) => cmp(a.node, b.node) || (a.vmid ?? 0) - (b.vmid ?? 0) || cmp(a.address, b.address) || cmp(a.code, b.code) || cmp(a.message, b.message))
    const pending = [...this.pending].sort((a, b) => cmp(a.address, b.address) || cmp(a.message, b.message))
    const gaps = [...this.gaps].sort((a, b) => cmp(a.address, b.address) || cmp(a.field, b.field) || cmp(a.note, b.note))
    const count = (...t: ActionType[]) => actions.filter((a) => t.includes(a.type)).length
    return {
      format_version: PLAN_FORMAT_VERSION,
      cluster: this.desired.cluster,
      ...(this.desired.commit === undefined ? {} : { commit: this.desired.commit }),
      policy: { pruneBudget: this.policy.pruneBudget, disruption: this.policy.disruption, ownershipTag: this.policy.ownershipTag },
      actions,
      anomalies,
      skips,
      pending,
      gaps,
      summary: {
        create: count('create', 'clone'),
        update: count('update', 'shutdown-then-update'),
        resize: count('resize'),
        power: count('start', 'stop', 'restart'),
        markTemplate: count('mark-template'),
        delete: count('delete'),
        download: count('download'),
        anomalies: anomalies.length,
        skips: skips.length,
        pending: pending.length,
        actions: actions.length,
      },
    }
  }
}

/** The config PVE will run with once pending changes apply: current values, pending values over them, pending deletes removed. */
export function mergedView(g: LiveGuest): Readonly<Record<string, string>> {
  if (g.pendingDeletes.length === 0 && Object.keys(g.pending).length === 0) return g.config
  const out: Record<string, string> = { ...g.config, ...g.pending }
  for (const k of g.pendingDeletes) delete out[k]
  return out
}

function disruptionFor(m: DesiredManifest, dflt: DisruptionPolicy): DisruptionPolicy {
  const a = m.metadata.annotations?.['proxops/disruption']?.trim()
  return a !== undefined && isDisruptionPolicy(a) ? a : dflt
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

export function compareActions(a: Action, b: Action): number {
  return (
    a.tier - b.tier ||
    (a.tier === 9 ? 0 : a.level - b.level) ||
    RANK[a.type] - RANK[b.type] ||
    cmp(a.node, b.node) ||
    (a.vmid ?? 0) - (b.vmid ?? 0) ||
    cmp(a.address, b.address) ||
    cmp(a.id, b.id)
  )
}

function display(v: PlanParamValue): string {
  return typeof v === 'object' ? SENSITIVE : String(v)
}

function sortDiffs(d: FieldDiff[]): FieldDiff[] {
  return [...d].sort((a, b) => cmp(a.key, b.key) || cmp(a.field, b.field))
}

function sortParams(p: Record<string, PlanParamValue>): PlanParams {
  return Object.fromEntries(Object.keys(p).sort().map((k) => [k, p[k] as PlanParamValue]))
}

export type { Owned }
