/**
 * Planning one desired guest against PVE: the create / clone flow for an absent guest, and for a present one
 * the config write (with its disruption class), grow-only resizes, disk moves, mark-template, pending restarts and
 * power.
 */
import { formatSize } from '@proxops/pve-client/wire'
import { CLOUD_INIT_SLOT } from '@proxops/schema'
import { keyOf } from '../../kit/deps.js'
import type {
  ContainerManifest,
  LxcManifest,
  Manifest,
  QemuManifest,
  TemplateCtManifest,
  TemplateVmManifest,
  VmManifest,
} from '@proxops/schema'
import { allowed, classify, isDisruptionPolicy, maxClass, type GuestRuntime } from './disruption.js'
import { liveBool, SENSITIVE } from './fields.js'
import type { LiveGuest } from '../../inventory.js'
import { executes, isBookkeeping, unmanagedNote } from './keys.js'
import { readDrive } from './drives.js'
import { lxcSlotFamily } from './lxc.js'
import { display, sortDiffs, type Draft, type DraftBase, type Sink } from '../../kit/draft.js'
import type {
  ActionType,
  Anomaly,
  DisruptionClass,
  DisruptionPolicy,
  FieldDiff,
  PlanParamValue,
  Policy,
  PveRequest,
  Skip,
} from '../../plan-types.js'
import type { GuestType } from '@proxops/pve-client/wire'
import { CLONE_IDENTITY_KEYS, ipconfigKey } from './cloud-init.js'
import { qemuSlotFamily, type GuestFields } from './qemu.js'
import { hotplugSet, isCreateOnly } from './table.js'
import { DISRUPTION_OVERRIDE } from '../../kit/guard-overrides.js'
import { ignoredFields } from '../../kit/ignore-fields.js'

export interface GuestPlanEnv {
  policy: Policy
  /** desired manifests by `Kind/name` (clone sources) */
  byKey: ReadonlyMap<string, Manifest>
  out: Sink
}

/** One desired guest, its owned fields and how its findings are recorded. */
export interface GuestTarget {
  m: QemuManifest | ContainerManifest
  f: GuestFields
  base: DraftBase
  type: GuestType
  isTemplate: boolean
  skip: (code: Skip['code'], message: string) => void
  anomaly: (a: Omit<Anomaly, 'address' | 'kind'>) => void
  /** a clone's: the keys its declared source template declares, inherited with the clone (never unmanaged) */
  inherited?: ReadonlySet<string>
}

/**
 * What a clone's `spec.clone` names: a VM clones a TemplateVM, an LXC a TemplateCT, by name in this cluster;
 * `manifest` is absent when no such template is declared.
 */
export function cloneSource(
  m: VmManifest | LxcManifest,
  byKey: ReadonlyMap<string, Manifest>,
): { kind: 'TemplateVM' | 'TemplateCT'; name: string; manifest?: TemplateVmManifest | TemplateCtManifest } {
  const kind = m.kind === 'VM' ? 'TemplateVM' : 'TemplateCT'
  const name = m.spec.clone ?? ''
  const src = byKey.get(keyOf(kind, name))
  return src?.kind === kind ? { kind, name, manifest: src } : { kind, name }
}

/** A guest that is not on PVE: create (or full clone, or create + mark template). */
export function planNewGuest(t: GuestTarget, env: GuestPlanEnv): void {
  const { m, f, base, type, isTemplate, skip } = t
  const { node, vmid } = m.spec
  const started = m.spec.state === 'started' && !isTemplate
  if (f.createError !== undefined) {
    skip('invalid-desired', f.createError)
    return
  }
  const away = sourcesAway(m, env.byKey)
  if (away.length > 0) {
    for (const message of away) t.anomaly({ code: 'source-node', field: 'spec.node', message })
    return
  }
  const createDiffs: FieldDiff[] = []
  const params: Record<string, PlanParamValue> = {}
  for (const o of f.owned) {
    if (o.create === undefined) continue
    params[o.key] = o.create
    createDiffs.push({ field: o.field, key: o.key, after: o.sensitive ? SENSITIVE : (o.show ?? display(o.create)) })
  }

  if (m.spec.clone !== undefined && (m.kind === 'VM' || m.kind === 'LXC')) {
    planClone(t, m, createDiffs, started, env)
    return
  }

  for (const [k, v] of Object.entries(f.createOnly)) {
    params[k] = v
    createDiffs.push({ field: k === 'ostemplate' ? 'spec.template' : `spec.extra.${k}`, key: k, after: String(v) })
  }
  params.vmid = vmid
  // pve-container's create with start=1 only forks a separate vzstart task that nobody waits on, so an LXC is
  // started by a start request of its own (its task, its real error); a VM keeps start=1 (read back after)
  if (started && type === 'qemu') params.start = 1
  const requests: PveRequest[] = [{ call: 'createGuest', node, guest: type, params }]
  if (started && type === 'lxc') requests.push({ call: 'start', node, guest: type, vmid })
  if (isTemplate) requests.push({ call: 'markTemplate', node, guest: type, vmid })
  env.out.drafts.push({
    ...base,
    type: 'create',
    reason: `${base.resource}: not on PVE; will create${isTemplate ? ' + mark as PVE template' : ''}`,
    diffs: sortDiffs(createDiffs),
    disruption: 'none',
    requests,
  })
}

/**
 * The create-time sources (a clone's template, a disk image, a container template) that are not on the node the
 * guest is created on: PVE clones a template on its own node (clone_vm) and reads an image or template from the
 * node's storage. Only a create needs them there; an existing guest moves whatever they are (migrate.ts).
 */
function sourcesAway(m: QemuManifest | ContainerManifest, byKey: ReadonlyMap<string, Manifest>): string[] {
  const { node } = m.spec
  const out: string[] = []
  const later = `it can move to ${node} once it exists`
  if ((m.kind === 'VM' || m.kind === 'LXC') && m.spec.clone !== undefined) {
    const { kind, name, manifest: src } = cloneSource(m, byKey)
    if (src !== undefined && src.spec.node !== node)
      out.push(
        `clone source ${kind}/${name} is on node ${src.spec.node}, and PVE clones a template on its own node: create the guest on ${src.spec.node} (${later}), or declare a template on ${node}`,
      )
  }
  const artifacts: [string, string][] =
    m.kind === 'VM' || m.kind === 'TemplateVM'
      ? m.spec.disks.flatMap((d) => (d.image === undefined ? [] : [['DiskImage', d.image] as [string, string]]))
      : m.spec.template !== undefined
        ? [['CTTemplate', m.spec.template]]
        : []
  for (const [kind, name] of artifacts) {
    const a = byKey.get(keyOf(kind, name))
    const nodes = a !== undefined && 'nodes' in a.spec ? a.spec.nodes : undefined
    if (nodes === undefined || nodes.includes(node)) continue
    out.push(
      `${kind}/${name} is not declared on node ${node} (its nodes: ${nodes.join(', ') || 'none'}), and the guest is created from it there: add ${node} to its spec.nodes, or create the guest on one of its nodes (${later})`,
    )
  }
  return out.sort()
}

/** the VM volume slots a clone's post-clone write creates when the template gave it none (create forms) */
const CLONE_CREATED_VOLUMES: ReadonlySet<string> = new Set(['efidisk0', 'tpmstate0'])

const isLxc = (m: QemuManifest | ContainerManifest): m is ContainerManifest =>
  m.kind === 'LXC' || m.kind === 'TemplateCT'

/**
 * A clone-backed guest that is not on PVE: a full clone of its template (qemu-server / pve-container
 * `clone_vm`), then ProxOps' own config. An LXC clone is copied onto `root.storage` with its hostname and grown
 * to `root.size` when that is larger than the template's root (validation refuses a smaller one).
 */
function planClone(
  t: GuestTarget,
  m: VmManifest | LxcManifest,
  createDiffs: FieldDiff[],
  started: boolean,
  env: GuestPlanEnv,
): void {
  const { f, base, type, anomaly } = t
  const { node, vmid } = m.spec
  const { kind: srcKind, name, manifest: src } = cloneSource(m, env.byKey)
  if (!src) {
    anomaly({
      code: 'clone-source',
      message: `clone source ${srcKind}/${name} is not declared in this cluster; not cloning`,
    })
    return
  }
  if (src.spec.vmid === vmid) {
    anomaly({ code: 'clone-source', message: `clone source ${srcKind}/${name} has the same vmid ${vmid}; not cloning` })
    return
  }
  // the post-clone write: own values minus create-only keys and the volumes the clone inherits; a VM's EFI disk
  // and TPM state are created only where the template gave the clone none (the template may lack them), as is
  // the cloud-init drive; inherited identity keys not owned are deleted
  const set: Record<string, PlanParamValue> = {}
  const onlyIfAbsent: string[] = []
  for (const o of f.owned) {
    if (o.create === undefined || isCreateOnly(type, o.key)) continue
    if (o.volume && !(type === 'qemu' && CLONE_CREATED_VOLUMES.has(o.key))) continue
    set[o.key] = o.create
    if (o.volume || o.key === CLOUD_INIT_SLOT) onlyIfAbsent.push(o.key)
  }
  const del = m.kind === 'VM' ? cloneIdentityKeys(m, f).filter((k) => !(k in set)) : []
  if (del.length > 0) set.delete = del.join(',')
  const diffs = createDiffs.filter((d) => d.key in set)
  const requests: PveRequest[] = []
  if (isLxc(m)) {
    const root = m.spec.root
    requests.push({
      call: 'cloneGuest',
      node,
      guest: 'lxc',
      vmid: src.spec.vmid,
      params: { newid: vmid, full: 1, hostname: m.spec.dns.hostname, storage: root.storage },
    })
    const srcRoot = src.kind === 'TemplateCT' ? src.spec.root.size : root.size
    if (root.size > srcRoot) {
      const size = formatSize(root.size)
      requests.push({ call: 'resizeDisk', node, guest: 'lxc', vmid, disk: 'rootfs', size })
      diffs.push({ field: 'spec.root', key: 'rootfs', before: formatSize(srcRoot), after: size })
    }
  } else {
    requests.push({
      call: 'cloneGuest',
      node,
      guest: 'qemu',
      vmid: src.spec.vmid,
      params: { newid: vmid, full: 1, name: m.spec['pve-name'] },
    })
  }
  requests.push({
    call: 'updateConfig',
    node,
    guest: type,
    vmid,
    params: set,
    ...(onlyIfAbsent.length > 0 ? { onlyIfAbsent: onlyIfAbsent.sort() } : {}),
  })
  if (started) requests.push({ call: 'start', node, guest: type, vmid })
  env.out.drafts.push({
    ...base,
    type: 'clone',
    reason: `${base.resource}: not on PVE; will full-clone from ${srcKind} ${name} (vmid ${src.spec.vmid})`,
    diffs: sortDiffs(diffs),
    disruption: 'none',
    requests,
  })
}

/** A guest that is on PVE: config writes, resizes, mark-template, pending restarts, power. */
export function planLiveGuest(t: GuestTarget, g: LiveGuest, env: GuestPlanEnv): void {
  const s = liveState(t, g, env)
  const w = compareOwned(t, g, s.cfg, s.rt, s.policy, env)
  reportUndeclared(t, s, env)
  dropCloneIdentity(t, s, w)
  const resizes = holdBack(t, s, w)
  const a = new GuestActions(t, g, env)
  planMoves(t, g, s, w, a)
  planConfigWrite(t, s, w, resizes, a, env)
  planResizes(
    t,
    s,
    w,
    resizes.filter((r) => typeof w.params[r.key] !== 'string'),
    a,
  )
  if (t.isTemplate) {
    planTemplate(t, g, s, a)
    return
  }
  planPendingRestart(t, s, w, a, env)
  planPower(t, g, s, a)
}

/** What one live guest is and what its manifest asks of its power. */
interface LiveState {
  /** the pending-merged config */
  cfg: Readonly<Record<string, string>>
  running: boolean
  desiredStarted: boolean
  /** a running guest the manifest wants stopped: every write then lands on a stopped guest */
  willStop: boolean
  rt: GuestRuntime
  policy: DisruptionPolicy
  cloned: boolean
}

function liveState(t: GuestTarget, g: LiveGuest, env: GuestPlanEnv): LiveState {
  const { m, type, isTemplate } = t
  const running = g.status === 'running'
  const desiredStarted = m.spec.state === 'started' && !isTemplate
  // a running guest the manifest wants stopped is shut down anyway (a requested power change): every write
  // then lands on a stopped guest, so nothing is disruptive and nothing is held back
  const willStop = running && !desiredStarted
  return {
    cfg: mergedView(g),
    running,
    desiredStarted,
    willStop,
    // what the running guest can hotplug is decided by its applied options, not by pending ones
    rt: {
      type,
      running: running && !willStop,
      hotplug: hotplugSet(g.config.hotplug),
      numa: liveBool(g.config.numa, false),
    },
    policy: disruptionFor(m, env.policy.disruption),
    cloned: (m.kind === 'VM' || m.kind === 'LXC') && m.spec.clone !== undefined,
  }
}

/** live slots of the managed families nothing declares (anomalies) and other undeclared keys (unmanaged gaps) */
function reportUndeclared(t: GuestTarget, s: LiveState, env: GuestPlanEnv): void {
  const { f, type, base, anomaly } = t
  const liveOnly = liveOnlySlots(s.cfg, f, type, s.cloned, t.inherited)
  for (const [key, fam] of liveOnly) {
    anomaly({
      code: 'live-only-slot',
      field: key,
      message: `${base.resource as string}: live-only ${fam} slot ${key} (${(s.cfg[key] as string).split(',')[0]}) is not declared; proxops will not automatically remove it`,
    })
  }
  const reported = new Set([...liveOnly.map(([k]) => k), ...(t.inherited ?? [])])
  for (const key of unmanagedKeys(s.cfg, f, type, reported)) {
    const what = executes(type, key)
    env.out.gaps.push({
      address: base.address,
      field: key,
      note: unmanagedNote(type, key),
      unmanaged: true,
      ...(what !== undefined ? { executes: what } : {}),
    })
  }
}

/** a clone-backed VM drops inherited identity keys it does not own */
function dropCloneIdentity(t: GuestTarget, s: LiveState, w: OwnedComparison): void {
  const { m, f } = t
  if (!s.cloned || m.kind !== 'VM') return
  const ownedKeys = new Set(f.owned.map((o) => o.key))
  const del = cloneIdentityKeys(m, f).filter((k) => !ownedKeys.has(k) && s.cfg[k] !== undefined)
  if (del.length === 0) return
  w.params.delete = del.join(',')
  for (const k of del)
    w.diffs.push({
      field: 'spec.clone',
      key: k,
      before: k === 'cipassword' || k === 'sshkeys' ? SENSITIVE : s.cfg[k],
    })
}

/** what the disruption policy holds back this cycle; returns the resizes still planned */
function holdBack(t: GuestTarget, s: LiveState, w: OwnedComparison): OwnedComparison['resizes'] {
  if (w.heldBack.length > 0) {
    t.skip(
      'disruption',
      `${w.heldBack.join(', ')} would change a running guest (hotplug) and disruption is ${s.policy}; not written this cycle (${DISRUPTION_OVERRIDE})`,
    )
  }
  // growing a disk of a running guest is a hotplug change (qemu-server's qemu_block_resize on the live drive,
  // pve-container's resize of a mounted volume): held back like any other; a rewrite of the same slot keeps
  // the live size token
  if (s.rt.running && w.resizes.length > 0 && !allowed('hotplug', s.policy)) {
    t.skip(
      'disruption',
      `growing ${w.resizes.map((r) => r.key).join(', ')} would change a running guest (hotplug) and disruption is ${s.policy}; not resized this cycle (${DISRUPTION_OVERRIDE})`,
    )
    return []
  }
  return w.resizes
}

/**
 * The actions of one live guest, in plan order: each waits for the earlier actions of the same guest; resizes
 * only for the config write. A power action depends on none of them: the executor still runs it after them (one
 * action per guest at a time, in plan order), but a failed write or resize never leaves the guest in the wrong
 * power state, this cycle or the next.
 */
class GuestActions {
  private readonly ids: string[] = []
  private beforeResizes: string[] | undefined
  /** an action of this plan shuts the guest down (the write's restart, a pending restart) */
  stopped = false
  /** the config digest read at plan time */
  readonly digest: string

  constructor(
    private readonly t: GuestTarget,
    g: LiveGuest,
    private readonly env: GuestPlanEnv,
  ) {
    this.digest = g.digest
  }

  /** an action of the guest; a power action carries no digest (it changes no config) */
  push(
    type: ActionType,
    reason: string,
    diffs: FieldDiff[],
    disruption: DisruptionClass,
    requests: PveRequest[],
  ): void {
    const power = type === 'start' || type === 'stop'
    const d = guestDraft(this.t.base, type, reason, diffs, disruption, requests, power ? undefined : this.digest)
    const request = d.requests.find((r) => r.call === 'moveDisk') ?? d.requests[0]
    const disk = request?.call === 'resizeDisk' || request?.call === 'moveDisk' ? `:${request.disk}` : ''
    const id = `${d.address}#${d.type}${disk}`
    if (d.type === 'resize') this.beforeResizes ??= [...this.ids]
    const after =
      d.type === 'resize'
        ? [...(this.beforeResizes ?? [])]
        : d.type === 'start' || d.type === 'stop'
          ? []
          : [...this.ids]
    this.env.out.drafts.push({ ...d, id, after })
    this.ids.push(id)
  }

  shutdown(): PveRequest {
    const { node, vmid } = this.t.m.spec
    return {
      call: 'shutdown',
      node,
      guest: this.t.type,
      vmid,
      timeoutSeconds: this.env.policy.shutdownTimeoutSeconds,
      forceStop: this.env.policy.forceStopAfterTimeout,
    }
  }

  start(): PveRequest {
    return { call: 'start', node: this.t.m.spec.node, guest: this.t.type, vmid: this.t.m.spec.vmid }
  }
}

/**
 * The config write: an update, or for a running guest a class above hotplug (or one desired stopped) the write,
 * a graceful shutdown and a start. A slot that needs both an option rewrite and a resize is resized first in the
 * same action, and the rewrite carries the new size.
 */
function planConfigWrite(
  t: GuestTarget,
  s: LiveState,
  w: OwnedComparison,
  resizes: OwnedComparison['resizes'],
  a: GuestActions,
  env: GuestPlanEnv,
): void {
  const { params, diffs, classes, leftPending } = w
  if (Object.keys(params).length === 0) return
  const { base, type } = t
  const { node, vmid } = t.m.spec
  const resource = base.resource as string
  const digest = a.digest
  const cls = maxClass(classes)
  const keys = Object.keys(params).filter((k) => k !== 'delete')
  if (params.delete !== undefined) keys.push(`delete ${String(params.delete)}`)
  const reasonKeys = keys.join(', ')
  // a slot that needs both an option rewrite and a resize: resize first, in the same action, and let the
  // rewrite carry the new size, so a rewrite PVE keeps pending never restores the old size token
  const before = resizes.filter((r) => typeof params[r.key] === 'string')
  for (const r of before) {
    params[r.key] = String(params[r.key]).replace(/(^|,)size=[^,]*/, `$1size=${r.size}`)
    diffs.push(r.diff)
  }
  // the first request of the action carries the digest read at plan time
  const resizeFirst = before.map((r, i): PveRequest => ({
    call: 'resizeDisk',
    node,
    guest: type,
    vmid,
    disk: r.key,
    size: r.size,
    ...(i === 0 ? { digest } : {}),
  }))
  const moved = Object.fromEntries(w.moves.filter((m) => m.key in params).map((m) => [m.key, m.volume]))
  const update: PveRequest = {
    call: 'updateConfig',
    node,
    guest: type,
    vmid,
    params,
    ...(resizeFirst.length === 0 ? { digest } : {}),
    ...(Object.keys(moved).length > 0 ? { moved } : {}),
  }
  // resizes, the write, then any power requests. A running guest takes the write into [PENDING] (checked
  // against the planned digest, refused before anything is stopped) and the shutdown applies it: PVE's
  // stop rewrites the config from [PENDING] (qemu-server vm_stop_cleanup, pve-container's post-stop hook),
  // so a write sent after the shutdown would meet a new digest.
  const writes = (...power: PveRequest[]): PveRequest[] => [...resizeFirst, update, ...power]
  if (s.willStop) {
    a.stopped = true
    a.push(
      'shutdown-then-update',
      `${resource}: config drift (${reasonKeys}); desired stopped: write, then graceful shutdown`,
      sortDiffs(diffs),
      'stop',
      writes(a.shutdown()),
    )
  } else if (s.running && (cls === 'reboot' || cls === 'stop')) {
    a.stopped = true
    a.push(
      'shutdown-then-update',
      `${resource}: config drift (${reasonKeys}); needs a restart: write, graceful shutdown${s.desiredStarted ? ', start' : ''}`,
      sortDiffs(diffs),
      cls,
      s.desiredStarted ? writes(a.shutdown(), a.start()) : writes(a.shutdown()),
    )
  } else {
    a.push(
      'update',
      `${resource}: config drift (${reasonKeys})`,
      sortDiffs(diffs),
      leftPending.length > 0 ? 'reboot' : cls,
      writes(),
    )
  }
  if (leftPending.length > 0) {
    env.out.pending.push({
      address: base.address,
      keys: leftPending,
      message: `${leftPending.join(', ')} will stay pending in PVE until the guest restarts (disruption: ${s.policy}; ${DISRUPTION_OVERRIDE})`,
    })
  }
}

/**
 * The resizes not bundled with a write. Every resize rewrites the config (a new digest): only the guest's first
 * write of the cycle carries the planned digest, and resizes run in plan order, which sorts them by action id.
 */
function planResizes(
  t: GuestTarget,
  s: LiveState,
  w: OwnedComparison,
  resizes: OwnedComparison['resizes'],
  a: GuestActions,
): void {
  const { node, vmid } = t.m.spec
  const hasWrite = Object.keys(w.params).length > 0
  const digest = a.digest
  const digestCarrier = hasWrite ? undefined : resizes.map((r) => r.key).sort()[0]
  for (const r of resizes) {
    a.push(
      'resize',
      `${t.base.resource as string}: grow ${r.key} to ${r.size}`,
      [r.diff],
      s.running && !a.stopped ? 'hotplug' : 'none',
      [
        {
          call: 'resizeDisk',
          node,
          guest: t.type,
          vmid,
          disk: r.key,
          size: r.size,
          ...(r.key === digestCarrier ? { digest } : {}),
        },
      ],
    )
  }
}

/**
 * The disk moves (qemu-server move_vm_disk, pve-container move_volume), before the guest's other actions, each with
 * `delete`: PVE frees the source only once its copy is in the config. A running VM's disk is mirrored online
 * (hotplug class); a running container is shut down for it and started again when desired started (stop class); a
 * running guest desired stopped is shut down first.
 * Every move carries the planned digest (the executor sends the digest the previous move left); a later rewrite of a
 * moved slot names the moved volume just before it is written (`moved`). Both PVEs refuse `delete` for a volume a
 * snapshot still uses, so a guest with snapshots is an anomaly here. Moves that do not happen leave the other
 * changes of their slots for a later cycle.
 */
function planMoves(t: GuestTarget, g: LiveGuest, s: LiveState, w: OwnedComparison, a: GuestActions): void {
  if (w.moves.length === 0) return
  const resource = t.base.resource as string
  const keys = w.moves.map((m) => m.key).join(', ')
  const drop = () => {
    for (const m of w.moves) {
      delete w.params[m.key]
      w.diffs = w.diffs.filter((d) => d.key !== m.key)
      w.resizes = w.resizes.filter((r) => r.key !== m.key)
    }
    w.moves = []
  }
  if (g.config.parent !== undefined) {
    t.anomaly({
      code: 'volume-pool',
      field: w.moves[0]?.key ?? '',
      message: `${resource}: ${keys} must move to another storage but the guest has snapshots (the latest: ${g.config.parent}), which PVE does not move; delete them (qm delsnapshot / pct delsnapshot) and the next cycle moves the disk`,
    })
    drop()
    return
  }
  // a guest desired stopped is shut down first anyway (a requested power change, as planConfigWrite does)
  const cls: DisruptionClass = !s.running ? 'none' : s.willStop || t.type === 'lxc' ? 'stop' : 'hotplug'
  if (!s.willStop && !allowed(cls, s.policy)) {
    t.skip(
      'disruption',
      `moving ${keys} to another storage ${t.type === 'qemu' ? "would copy a running VM's disk online (hotplug)" : 'needs a shutdown of the running container'} and disruption is ${s.policy}; not moved this cycle`,
    )
    drop()
    return
  }
  const { node, vmid } = t.m.spec
  // in the order plan() sorts them (by action id): each waits for the one before it
  w.moves.sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0))
  w.moves.forEach((m, i) => {
    const move: PveRequest = {
      call: 'moveDisk',
      node,
      guest: t.type,
      vmid,
      disk: m.key,
      volume: m.volume,
      storage: m.storage,
      digest: a.digest,
    }
    // pve-container moves no volume of a running container: its first move asks for a shutdown also where the plan
    // read it stopped (one that is not running answers so, which the runner accepts), unless it is desired started
    const stopFirst = (cls === 'stop' || (t.type === 'lxc' && !s.desiredStarted)) && i === 0
    const startAfter = cls === 'stop' && i === w.moves.length - 1 && s.desiredStarted
    if (stopFirst) a.stopped = true
    a.push(
      'move-disk',
      `${resource}: move ${m.key} from storage ${m.from} to ${m.storage}${cls === 'hotplug' ? ' (online)' : ''}`,
      [m.diff],
      cls,
      [...(stopFirst ? [a.shutdown()] : []), move, ...(startAfter ? [a.start()] : [])],
    )
  })
}

/** A template that is not one yet on PVE: mark it (a running guest is shut down first, a stop-class action). */
function planTemplate(t: GuestTarget, g: LiveGuest, s: LiveState, a: GuestActions): void {
  if (g.template) return
  const resource = t.base.resource as string
  const stopFirst = s.running && !a.stopped
  if (stopFirst && !allowed('stop', s.policy)) {
    t.skip(
      'disruption',
      `mark-template needs a shutdown of the running guest and disruption is ${s.policy}; not done this cycle (${DISRUPTION_OVERRIDE})`,
    )
    return
  }
  if (g.config.parent !== undefined) {
    // qemu-server's and pve-container's `template` API refuse a guest with snapshots; `parent` names the latest
    t.anomaly({
      code: 'template-snapshots',
      field: 'template',
      message: `${resource}: PVE converts no guest that has snapshots to a template (this one has ${g.config.parent}); delete its snapshots (qm delsnapshot / pct delsnapshot) and the next cycle marks it`,
    })
    return
  }
  const mark: PveRequest = { call: 'markTemplate', node: t.m.spec.node, guest: t.type, vmid: t.m.spec.vmid }
  a.push(
    'mark-template',
    `${resource}: PVE object present but not a template; will mark as template`,
    [{ field: 'kind', key: 'template', after: '1' }],
    stopFirst ? 'stop' : 'none',
    stopFirst ? [a.shutdown(), mark] : [mark],
  )
}

/** owned values PVE holds pending on a running guest: a restart applies them, when the policy allows one */
function planPendingRestart(
  t: GuestTarget,
  s: LiveState,
  w: OwnedComparison,
  a: GuestActions,
  env: GuestPlanEnv,
): void {
  const { pendingKeys } = w
  if (pendingKeys.length === 0 || !s.running || a.stopped) return
  if (!allowed('reboot', s.policy)) {
    env.out.pending.push({
      address: t.base.address,
      keys: pendingKeys,
      message: `${pendingKeys.join(', ')} pending in PVE until the guest restarts (disruption: ${s.policy}; ${DISRUPTION_OVERRIDE})`,
    })
    return
  }
  a.push(
    'restart',
    `${t.base.resource as string}: owned changes pending in PVE (${pendingKeys.join(', ')}); graceful shutdown${s.desiredStarted ? ' and start' : ''} applies them`,
    [],
    'reboot',
    s.desiredStarted ? [a.shutdown(), a.start()] : [a.shutdown()],
  )
  a.stopped = true
}

/** the power state the manifest asks for; an unknown live power does nothing */
function planPower(t: GuestTarget, g: LiveGuest, s: LiveState, a: GuestActions): void {
  const resource = t.base.resource as string
  const livePower =
    g.status === 'running' ? 'running' : g.status === 'stopped' || g.status === '' ? 'stopped' : 'unknown'
  if (livePower === 'unknown') return
  if (s.desiredStarted && livePower === 'stopped') {
    a.push(
      'start',
      `${resource}: power "stopped" → "started"`,
      [{ field: 'spec.state', key: 'status', before: g.status, after: 'running' }],
      'none',
      [a.start()],
    )
  } else if (!s.desiredStarted && livePower === 'running' && !a.stopped) {
    a.push(
      'stop',
      `${resource}: power "running" → "stopped" (graceful shutdown)`,
      [{ field: 'spec.state', key: 'status', before: 'running', after: 'stopped' }],
      'stop',
      [a.shutdown()],
    )
  }
}

/** What comparing the owned keys with the live config found. */
interface OwnedComparison {
  params: Record<string, PlanParamValue>
  diffs: FieldDiff[]
  classes: DisruptionClass[]
  /** keys not written: their disruption class is above the policy */
  heldBack: string[]
  /** keys written that stay pending until a restart (reboot class under a lower policy) */
  leftPending: string[]
  /** converged keys with a different pending value on PVE */
  pendingKeys: string[]
  resizes: { key: string; size: string; diff: FieldDiff }[]
  moves: { key: string; volume: string; from: string; storage: string; diff: FieldDiff }[]
}

function compareOwned(
  t: GuestTarget,
  g: LiveGuest,
  cfg: Readonly<Record<string, string>>,
  rt: GuestRuntime,
  policy: DisruptionPolicy,
  env: GuestPlanEnv,
): OwnedComparison {
  const { f, base, anomaly } = t
  const resource = base.resource as string
  const w: OwnedComparison = {
    params: {},
    diffs: [],
    classes: [],
    heldBack: [],
    leftPending: [],
    pendingKeys: [],
    resizes: [],
    moves: [],
  }
  const ignored = ignoredFields(t.m, env.policy)
  for (const o of f.owned) {
    // ignore-fields: the live value is never compared, so never written either
    if (ignored(o.field)) continue
    const before = cfg[o.key]
    const outcomes = o.compare(before)
    if (outcomes.length === 0 && g.pending[o.key] !== undefined && g.config[o.key] !== g.pending[o.key])
      w.pendingKeys.push(o.key)
    for (const out of outcomes) {
      if (out.t === 'anomaly') anomaly({ code: out.code, field: o.key, message: `${resource}: ${out.message}` })
      else if (out.t === 'gap') env.out.gaps.push({ address: base.address, field: o.field, note: out.note })
      else if (out.t === 'resize') {
        w.resizes.push({ key: o.key, size: out.size, diff: fieldDiff(o.field, o.key, before, `size=${out.after}`) })
      } else if (out.t === 'move') {
        const diff = { field: `${o.field}.storage`, key: o.key, before: out.from, after: out.storage }
        w.moves.push({ key: o.key, volume: out.volume, from: out.from, storage: out.storage, diff })
      } else {
        const cls =
          o.running ??
          classify(o.key, out.newSlot === true, rt, {
            before,
            after: typeof out.value === 'string' ? out.value : undefined,
          })
        if (!allowed(cls, policy) && cls !== 'reboot') {
          w.heldBack.push(o.key)
          continue
        }
        if (!allowed(cls, policy)) w.leftPending.push(o.key)
        else w.classes.push(cls)
        w.params[o.key] = out.value
        w.diffs.push(
          o.sensitive
            ? fieldDiff(o.field, o.key, before === undefined ? undefined : SENSITIVE, SENSITIVE)
            : fieldDiff(o.field, o.key, before, out.after),
        )
      }
    }
  }
  return w
}

/** A guest action draft. */
function guestDraft(
  base: GuestTarget['base'],
  type: ActionType,
  reason: string,
  diffs: FieldDiff[],
  disruption: DisruptionClass,
  requests: PveRequest[],
  digest?: string,
): Draft {
  return { ...base, type, reason, diffs, disruption, requests, ...(digest === undefined ? {} : { digest }) }
}

/** A field diff; `before` only when PVE has a value. */
function fieldDiff(field: string, key: string, before: string | undefined, after: string): FieldDiff {
  return before === undefined ? { field, key, after } : { field, key, before, after }
}

/**
 * Live slots of the managed families (disks, NICs, PCI, mount points) that no field declares: reported, never
 * removed. A clone's slots its declared template declares (`inherited`) came with the clone: they are in git.
 */
function liveOnlySlots(
  cfg: Readonly<Record<string, string>>,
  f: GuestFields,
  type: GuestType,
  cloned: boolean,
  inherited: ReadonlySet<string> | undefined,
): [string, string][] {
  const out: [string, string][] = []
  for (const key in cfg) {
    if (f.declaredSlots.has(key) || inherited?.has(key)) continue
    const fam = type === 'qemu' ? qemuSlotFamily(key) : lxcSlotFamily(key)
    if (fam === undefined) continue
    // an LXC clone's mount points are the template's copies
    if (fam === 'mount' && cloned) continue
    if (fam === 'disk') {
      const drive = readDrive(cfg[key] as string)
      // an IDE CD-ROM or cloud-init drive is not a disk (elsewhere it is reported); `none` is an empty slot; a
      // clone's disks are inherited
      if (key.startsWith('ide') && drive !== undefined && drive.kind !== 'disk') continue
      if (drive?.file === 'none' || cloned) continue
    }
    out.push([key, fam])
  }
  return out.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
}

/** The PVE keys a guest's manifest declares: owned fields, declared slots, create-only keys, keys left to PVE. */
export function declaredKeys(f: GuestFields): Set<string> {
  // spec.extra keys are declared (sent on create, reported as a gap of their own)
  return new Set([
    ...f.owned.map((o) => o.key),
    ...f.declaredSlots,
    ...Object.keys(f.createOnly),
    ...(f.leftToPve ?? []),
  ])
}

/**
 * Live keys no field owns and nothing else reports (an anomaly, a clone's template): PVE's bookkeeping aside,
 * every one is listed (sorted) as unmanaged, so a key added on PVE (a hook script, raw arguments, a device) is
 * visible in diff.
 */
function unmanagedKeys(
  cfg: Readonly<Record<string, string>>,
  f: GuestFields,
  type: GuestType,
  reported: ReadonlySet<string>,
): string[] {
  const owned = declaredKeys(f)
  return Object.keys(cfg)
    .filter((k) => !owned.has(k) && !reported.has(k) && !isBookkeeping(type, k, cfg))
    .sort()
}

/** The identity keys a clone inherits from its template that the VM must own or drop. */
function cloneIdentityKeys(m: QemuManifest | ContainerManifest, f: GuestFields): string[] {
  const ipconfigs = m.kind === 'VM' || m.kind === 'TemplateVM' ? (m.spec['cloud-init-data']?.ipconfigs ?? []) : []
  const nics = Math.max(m.spec.networks.length, ...ipconfigs.map((c) => c.nic + 1))
  const keys = [...CLONE_IDENTITY_KEYS, ...Array.from({ length: nics }, (_, i) => ipconfigKey(i))]
  return keys.filter((k) => !(f.leftToPve ?? []).includes(k))
}

/** The config PVE will run with once pending changes apply: current values, pending values over them, pending deletes removed. */
export function mergedView(g: LiveGuest): Readonly<Record<string, string>> {
  if (g.pendingDeletes.length === 0 && Object.keys(g.pending).length === 0) return g.config
  const out: Record<string, string> = { ...g.config, ...g.pending }
  for (const k of g.pendingDeletes) delete out[k]
  return out
}

export function disruptionFor(m: Manifest, dflt: DisruptionPolicy): DisruptionPolicy {
  const a = m.metadata.annotations?.['proxops/disruption']?.trim()
  return a !== undefined && isDisruptionPolicy(a) ? a : dflt
}
