/**
 * observe(): reads one cluster through the LiveReader port into a LiveInventory.
 *
 * Request budget for a full read: guests + 2 x nodes + storages + 5 (+ 1 per create candidate).
 *   - 2: `/version` and `/cluster/resources` (nodes, storages and guests in one listing)
 *   - 1: `/cluster/backup` (the backup jobs; a reader without it leaves them unknown)
 *   - 2 per online node: `/nodes/{n}/qemu` and `/nodes/{n}/lxc` (power state without the resources lag)
 *   - 1 per guest: `.../pending`, which carries the applied value, the pending value, the pending delete flag
 *     and the `digest` row of every key (qemu-server's vm_pending lists every key of the loaded config)
 *   - 1 per storage and artifact content type it holds (`iso`, `vztmpl`, `import`; reconcile() asks only for the
 *     types the repository declares artifacts of), with `content=`: an unfiltered listing would also run
 *     `qemu-img info` on every disk image of a file storage (pve-storage list_images); a shared storage is listed
 *     through one node
 *   - 1 per desired vmid that no listing shows (`/cluster/nextid?vmid=`: the create candidates only)
 *   - HA (2) and pools (1 + one per pool) (kinds/ha/observe.ts, kinds/pool/observe.ts)
 * The storage listings run alongside the node guest lists and the guest reads (one in-flight limit for all).
 * Any per-object read failure marks that object unknown, never absent. A failure of the cluster listing
 * itself throws ObserveError: nothing can be planned from half a cluster.
 */
import type { ClusterResource, GuestListItem, GuestType, PendingEntry } from '@proxops/pve-client/wire'
import type { LiveReader } from '../ports.js'
import type {
  LiveFirewall,
  LiveGuest,
  LiveInventory,
  LiveNode,
  LiveStorage,
  LiveVolume,
  HeldVmid,
  UnknownGuest,
} from '../inventory.js'
import { isTrue, Limiter, readTags } from '@proxops/pve-client/wire'
import { readHa } from '../kinds/ha/observe.js'
import { readPools } from '../kinds/pool/observe.js'

export interface ObserveOptions {
  /** requests in flight at once for this cluster (default 8) */
  concurrency?: number
  /** node allowlist; objects on other nodes are invisible. Empty or absent = every node of the cluster. */
  nodes?: readonly string[]
  /** storage content types whose volumes are listed, one `content=` listing each (default iso, vztmpl, import) */
  contentTypes?: readonly string[]
  signal?: AbortSignal
  /** vmids whose guest firewall is read (the guests whose manifests declare spec.firewall), `all` for adopt */
  firewalls?: readonly number[] | 'all'
  /**
   * the desired guests' vmids: one that no allowlisted node lists is looked up in /cluster/resources (a guest on
   * another node) and else probed with `vmidFree` (a guest this token cannot see); see `heldVmids`
   */
  vmids?: readonly number[]
}

export class ObserveError extends Error {
  readonly code = 'PVE_INVENTORY_READ_FAILED'
  constructor(
    readonly cluster: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`pve inventory read failed for cluster ${cluster}: ${message}`, options)
    this.name = 'ObserveError'
  }
}

export const DEFAULT_READ_CONCURRENCY = 8
const DEFAULT_CONTENT_TYPES = ['iso', 'vztmpl', 'import'] as const

interface GuestRef {
  type: GuestType
  vmid: number
  node: string
  resource?: ClusterResource
  listed?: GuestListItem
}

export async function observe(
  cluster: string,
  reader: LiveReader,
  options: ObserveOptions = {},
): Promise<LiveInventory> {
  const gate = new Limiter(options.concurrency ?? DEFAULT_READ_CONCURRENCY)
  const read = <T>(fn: () => Promise<T>): Promise<T> => {
    options.signal?.throwIfAborted()
    return gate.run(() => {
      options.signal?.throwIfAborted()
      return fn()
    })
  }
  const allow = options.nodes && options.nodes.length > 0 ? new Set(options.nodes) : undefined
  const allowed = (node: string | undefined): node is string => node !== undefined && (!allow || allow.has(node))

  let version: string
  let resources: ClusterResource[]
  try {
    const [v, r] = await Promise.all([read(() => reader.version()), read(() => reader.clusterResources())])
    version = v.version
    resources = r
  } catch (error) {
    options.signal?.throwIfAborted()
    throw new ObserveError(cluster, errorText(error), { cause: error })
  }

  const nodes = readNodes(resources, allow)
  const online = new Set(nodes.filter((n) => n.online).map((n) => n.node))

  // the node's own guest lists: power state without lag, and guests the resources view has not caught up with.
  // They are asked for first: every guest read waits for them, while nothing waits for the listings below.
  const listed = new Map<string, GuestListItem>()
  const unlistedNodes = new Map<string, string>()
  const nodeGuests = reader.nodeGuests.bind(reader)
  const listsRead = Promise.all(
    [...online].flatMap((node) =>
      (['qemu', 'lxc'] as const).map(async (type) => {
        try {
          for (const guest of await read(() => nodeGuests(node, type)))
            listed.set(`${type}/${guest.vmid}@${node}`, guest)
        } catch (error) {
          options.signal?.throwIfAborted()
          unlistedNodes.set(`${type}@${node}`, errorText(error))
        }
      }),
    ),
  )

  // Storage listings need only the cluster listing: they start now and share the in-flight limit with the
  // node guest lists and the guest reads, instead of waiting for them as a phase of their own.
  const storagesRead = readStorages(reader, read, resources, allowed, online, options)
  // if a later phase throws first, this promise must not end as an unhandled rejection
  storagesRead.catch(() => undefined)
  const jobsRead = readBackupJobs(reader, read, options)
  jobsRead.catch(() => undefined)
  // the HA configuration (two reads; a failure makes HA unknown, so this promise never rejects)
  const haRead = readHa(reader, version, read)
  // the pools and their members (1 + pools reads; a failure makes pools unknown, this promise never rejects)
  const poolsRead = readPools(reader, read)
  await listsRead

  const refs = new Map<string, GuestRef>()
  for (const r of resources) {
    if ((r.type !== 'qemu' && r.type !== 'lxc') || r.vmid === undefined || !allowed(r.node)) continue
    refs.set(`${r.type}/${r.vmid}@${r.node}`, { type: r.type, vmid: r.vmid, node: r.node, resource: r })
  }
  for (const [key, guest] of listed) {
    const [typeId, node] = key.split('@') as [string, string]
    const type = typeId.startsWith('qemu/') ? 'qemu' : 'lxc'
    const ref = refs.get(key) ?? { type, vmid: guest.vmid, node }
    refs.set(key, { ...ref, listed: guest })
  }
  // a guest that a node lists wins over a stale /cluster/resources row placing it elsewhere (a migration)
  const listedVmids = new Set([...listed.values()].map((g) => g.vmid))
  for (const [key, ref] of refs) {
    if (
      !ref.listed &&
      listedVmids.has(ref.vmid) &&
      online.has(ref.node) &&
      !unlistedNodes.has(`${ref.type}@${ref.node}`)
    )
      refs.delete(key)
  }

  // the held-vmid probes need only the listings: they share the in-flight limit with the guest reads instead
  // of waiting for the last of them
  const heldRead = readHeldVmids(reader, read, resources, refs, allowed, options)
  heldRead.catch(() => undefined)

  const guests: LiveGuest[] = []
  const unknownGuests: UnknownGuest[] = []
  await Promise.all(
    [...refs.values()].map(async (ref) => {
      const unknown = (reason: string): void => {
        unknownGuests.push({
          type: ref.type,
          vmid: ref.vmid,
          node: ref.node,
          ...nameOf(ref),
          tags: readTags(ref.listed?.tags ?? ref.resource?.tags),
          unreadable: reason,
        })
      }
      if (!online.has(ref.node)) return unknown(`node ${ref.node} is offline`)
      const listError = unlistedNodes.get(`${ref.type}@${ref.node}`)
      if (listError !== undefined) return unknown(`guest list of node ${ref.node} unreadable: ${listError}`)
      try {
        guests.push(await readGuest(reader, read, ref))
      } catch (error) {
        options.signal?.throwIfAborted()
        unknown(
          error instanceof ImplausibleRead ? `implausible read: ${error.message}` : `read failed: ${errorText(error)}`,
        )
      }
    }),
  )

  const heldVmids = await heldRead
  const firewalls = await readFirewalls(reader, read, guests, options)
  const { storages, volumes, unreadableStorages } = await storagesRead
  const jobs = await jobsRead
  const ha = await haRead
  const pools = await poolsRead

  return {
    cluster,
    pveVersion: version,
    nodes,
    guests: guests.sort(byGuest),
    unknownGuests: unknownGuests.sort(byGuest),
    storages,
    volumes,
    unreadableStorages,
    firewalls,
    ha,
    pools,
    backupJobs: jobs,
    heldVmids,
  }
}

/** `/cluster/backup`, one request; a failed read makes every backup job unknown this cycle */
async function readBackupJobs(
  reader: LiveReader,
  read: Read,
  options: ObserveOptions,
): Promise<LiveInventory['backupJobs']> {
  const list = reader.backupJobs.bind(reader)
  try {
    const jobs = await read(() => list())
    return { known: jobs.map((j) => ({ id: j.id, values: j.values })).sort((a, b) => compare(a.id, b.id)) }
  } catch (error) {
    options.signal?.throwIfAborted()
    return { unreadable: `read failed: ${errorText(error)}` }
  }
}

/**
 * Desired vmids held outside what this read covers. vmids are cluster-wide: a guest on a node outside the
 * allowlist shows in /cluster/resources, and one the token may not audit is hidden there, but PVE::API2::Cluster
 * nextid checks the full vmlist for anyone. One probe per desired vmid that nothing lists (the create candidates,
 * so none in a converged cluster); a failed probe is left to the create, which PVE checks again.
 */
async function readHeldVmids(
  reader: LiveReader,
  read: Read,
  resources: readonly ClusterResource[],
  refs: ReadonlyMap<string, GuestRef>,
  allowed: (node: string | undefined) => node is string,
  options: ObserveOptions,
): Promise<HeldVmid[]> {
  if (!options.vmids || options.vmids.length === 0) return []
  const seen = new Set([...refs.values()].map((r) => r.vmid))
  const elsewhere = new Map<number, HeldVmid>()
  for (const r of resources) {
    if ((r.type !== 'qemu' && r.type !== 'lxc') || r.vmid === undefined || allowed(r.node)) continue
    elsewhere.set(r.vmid, {
      vmid: r.vmid,
      type: r.type,
      ...(r.node !== undefined ? { node: r.node } : {}),
      ...(r.name !== undefined ? { name: r.name } : {}),
    })
  }
  const out: HeldVmid[] = []
  const probe = reader.vmidFree.bind(reader)
  await Promise.all(
    [...new Set(options.vmids)]
      .filter((vmid) => !seen.has(vmid))
      .map(async (vmid) => {
        const held = elsewhere.get(vmid)
        if (held) return out.push(held)
        try {
          if (!(await read(() => probe(vmid)))) out.push({ vmid })
        } catch {
          options.signal?.throwIfAborted()
        }
      }),
  )
  return out.sort((a, b) => a.vmid - b.vmid)
}

/** the firewalls asked for, of guests that were read; a failed read is kept with its reason */
async function readFirewalls(
  reader: LiveReader,
  read: Read,
  guests: readonly LiveGuest[],
  options: ObserveOptions,
): Promise<LiveFirewall[]> {
  if (!options.firewalls || options.firewalls.length === 0) return []
  const want = options.firewalls === 'all' ? new Set(guests.map((g) => g.vmid)) : new Set(options.firewalls)
  const out: LiveFirewall[] = []
  await Promise.all(
    guests
      .filter((g) => want.has(g.vmid))
      .map(async (g) => {
        const readFw = reader.guestFirewall.bind(reader)
        try {
          out.push({ vmid: g.vmid, known: await read(() => readFw(g.node, g.type, g.vmid)) })
        } catch (error) {
          options.signal?.throwIfAborted()
          out.push({ vmid: g.vmid, unreadable: errorText(error) })
        }
      }),
  )
  return out.sort((a, b) => a.vmid - b.vmid)
}

type Read = <T>(fn: () => Promise<T>) => Promise<T>

function readNodes(resources: readonly ClusterResource[], allow: ReadonlySet<string> | undefined): LiveNode[] {
  const nodes = new Map<string, LiveNode>()
  for (const r of resources) {
    if (r.type !== 'node') continue
    const node = r.node ?? r.id.replace(/^node\//, '')
    if (allow && !allow.has(node)) continue
    nodes.set(node, { node, online: r.status === 'online' })
  }
  // an allowlisted node the cluster does not report is treated as offline: nothing there is readable
  for (const node of allow ?? []) if (!nodes.has(node)) nodes.set(node, { node, online: false })
  return [...nodes.values()].sort((a, b) => compare(a.node, b.node))
}

/** A read that PVE cannot have given: the guest is unknown this cycle, never planned from it. */
class ImplausibleRead extends Error {}

async function readGuest(reader: LiveReader, read: Read, ref: GuestRef): Promise<LiveGuest> {
  const { type, vmid, node } = ref
  const [rows, status] = await Promise.all([
    read(() => reader.guestPending(node, type, vmid)),
    // without the node's guest list, fall back to one status read per guest (over the request budget, but correct)
    ref.listed ? Promise.resolve(undefined) : read(() => reader.guestStatus(node, type, vmid)),
  ])
  const split = splitPending(rows)
  const implausible = implausibleConfig(ref, split)
  if (implausible !== undefined) throw new ImplausibleRead(implausible)
  const { config, pending, pendingDeletes } = split
  const digest = split.digest as string
  const lock = config.lock ?? ref.listed?.lock ?? status?.lock ?? ref.resource?.lock
  const template =
    isTrue(config.template) ||
    ref.listed?.template === true ||
    status?.template === true ||
    ref.resource?.template === true
  const name = (type === 'qemu' ? config.name : config.hostname) ?? nameOf(ref).name
  return {
    type,
    vmid,
    node,
    ...(name !== undefined ? { name } : {}),
    template,
    status: powerState(ref.listed, status?.status, status?.qmpstatus),
    ...qmpField(ref.listed, status?.qmpstatus),
    tags: readTags(config.tags ?? ref.listed?.tags ?? ref.resource?.tags),
    ...(lock ? { lock } : {}),
    digest,
    config,
    pending,
    pendingDeletes,
  }
}

/**
 * Why a guest's `/pending` answer cannot be its real config, or undefined when it can. Planning from such a read
 * would rewrite the guest (create-form disks on a running VM, tags and name dropped), so the guest is unknown.
 *   - no `digest` row: PVE's parse_vm_config / parse_pct_config give every loaded config a digest, and
 *     PVE::GuestHelpers::config_with_pending_array lists it (an answer of `[]` is no config at all);
 *   - an LXC without `rootfs`: pve-container's create always writes it and update_pct_config refuses to
 *     delete it;
 *   - a config that contradicts the node's guest list read in the same cycle: that list's `name` and `tags`
 *     come from the same file (qemu-server / pve-container vmstatus: `name || "VM <vmid>"`, `hostname ||
 *     "CT<vmid>"` without whitespace, `tags` as written). A rename between the two reads makes the guest
 *     unknown for one cycle, which is the safe side.
 */
export function implausibleConfig(
  ref: { type: GuestType; vmid: number; listed?: Pick<GuestListItem, 'name' | 'tags'> | undefined },
  split: { digest: string | undefined; config: Readonly<Record<string, string>> },
): string | undefined {
  const { config } = split
  if (split.digest === undefined || split.digest === '')
    return 'its /pending answer has no digest row, which every PVE config read has'
  if (ref.type === 'lxc' && config.rootfs === undefined) return 'its config has no rootfs, which every container has'
  const listed = ref.listed
  if (!listed) return undefined
  const name =
    ref.type === 'qemu' ? config.name || `VM ${ref.vmid}` : (config.hostname || `CT${ref.vmid}`).replace(/\s/g, '')
  if (listed.name !== undefined && listed.name !== name)
    return `its config names it ${JSON.stringify(name)} but the node's guest list ${JSON.stringify(listed.name)}`
  if ((listed.tags ?? '') !== (config.tags ?? ''))
    return `its config has tags ${JSON.stringify(config.tags ?? '')} but the node's guest list ${JSON.stringify(listed.tags ?? '')}`
  return undefined
}

/** Splits `/pending` rows into the applied config, the pending values and the pending deletes. */
export function splitPending(rows: readonly PendingEntry[]): {
  digest: string | undefined
  config: Record<string, string>
  pending: Record<string, string>
  pendingDeletes: string[]
} {
  let digest: string | undefined
  const config: Record<string, string> = {}
  const pending: Record<string, string> = {}
  const pendingDeletes: string[] = []
  // PVE lists the keys in order already; copy and sort only when a reader does not
  const ordered = rows.every((row, i) => i === 0 || compare((rows[i - 1] as PendingEntry).key, row.key) <= 0)
    ? rows
    : [...rows].sort((a, b) => compare(a.key, b.key))
  for (const row of ordered) {
    if (row.key === 'digest') {
      digest = row.value
      continue
    }
    if (row.value !== undefined) config[row.key] = String(row.value)
    if (row.pending !== undefined) pending[row.key] = String(row.pending)
    if (row.delete) pendingDeletes.push(row.key)
  }
  return { digest, config, pending, pendingDeletes }
}

/**
 * `running` with any QMP status but `running` (paused, prelaunch, suspended, io-error, guest-panicked,
 * inmigrate, ...) is not a guest proxops can act on: PVE refuses a shutdown of a paused, prelaunch or
 * suspended VM (qemu-server vm_is_paused), and the others need a person. Those count as `paused`.
 */
function powerState(
  listed: GuestListItem | undefined,
  status: string | undefined,
  qmpstatus: string | undefined,
): string {
  const qmp = qmpOf(listed, qmpstatus)
  const state = listed ? listed.status : status
  if (state === 'running' && qmp !== undefined && qmp !== 'running') return 'paused'
  return state === 'running' || state === 'stopped' ? state : 'unknown'
}

/** the QMP status, kept only when it is not plain `running` (for the skip message) */
function qmpField(listed: GuestListItem | undefined, qmpstatus: string | undefined): { qmpstatus?: string } {
  const qmp = qmpOf(listed, qmpstatus)
  return qmp !== undefined && qmp !== 'running' && qmp !== 'stopped' ? { qmpstatus: qmp } : {}
}

function qmpOf(listed: GuestListItem | undefined, qmpstatus: string | undefined): string | undefined {
  return listed ? listed.qmpstatus : qmpstatus
}

function nameOf(ref: GuestRef): { name?: string } {
  const name = ref.listed?.name ?? ref.resource?.name
  return name !== undefined ? { name } : {}
}

async function readStorages(
  reader: LiveReader,
  read: Read,
  resources: readonly ClusterResource[],
  allowed: (node: string | undefined) => node is string,
  online: ReadonlySet<string>,
  options: ObserveOptions,
): Promise<Pick<LiveInventory, 'storages' | 'volumes' | 'unreadableStorages'>> {
  const contentTypes = [...new Set(options.contentTypes ?? DEFAULT_CONTENT_TYPES)].sort()
  const storages: LiveStorage[] = []
  for (const r of resources) {
    if (r.type !== 'storage' || !allowed(r.node)) continue
    const storage = r.storage ?? r.id.split('/')[2] ?? r.id
    storages.push({
      node: r.node,
      storage,
      type: r.plugintype ?? 'unknown',
      content: (r.content ?? '')
        .split(',')
        .map((c) => c.trim())
        .filter(Boolean)
        .sort(),
      active: r.status === 'available',
      // /cluster/resources lists enabled storages only; a disabled one does not appear
      enabled: true,
      shared: r.shared === true,
    })
  }
  storages.sort((a, b) => compare(a.node, b.node) || compare(a.storage, b.storage))

  const volumes: LiveVolume[] = []
  const unreadable: { node: string; storage: string; unreadable: string }[] = []
  // one listing per local storage, and one per shared storage (through its first online node)
  const listings = new Map<string, { reader: LiveStorage; holders: LiveStorage[]; types: string[] }>()
  for (const s of storages) {
    const types = contentTypes.filter((c) => s.content.includes(c))
    if (types.length === 0) continue
    if (!online.has(s.node)) {
      unreadable.push({ node: s.node, storage: s.storage, unreadable: `node ${s.node} is offline` })
      continue
    }
    if (!s.active) {
      unreadable.push({
        node: s.node,
        storage: s.storage,
        unreadable: `storage ${s.storage} is not active on ${s.node}`,
      })
      continue
    }
    const key = s.shared ? `shared:${s.storage}` : `${s.node}:${s.storage}`
    const listing = listings.get(key)
    if (listing) listing.holders.push(s)
    else listings.set(key, { reader: s, holders: [s], types })
  }
  await Promise.all(
    [...listings.values()].map(async ({ reader: s, holders, types }) => {
      try {
        // one listing per content type: PVE's `content` filter takes one type
        const lists = await Promise.all(types.map((c) => read(() => reader.storageContent(s.node, s.storage, c))))
        const items = lists.flat()
        for (const holder of holders) {
          for (const item of items) {
            if (!types.includes(item.content)) continue
            volumes.push({
              node: holder.node,
              storage: holder.storage,
              volid: item.volid,
              content: item.content,
              ...(item.format !== undefined ? { format: item.format } : {}),
              ...(item.size !== undefined ? { size: item.size } : {}),
            })
          }
        }
      } catch (error) {
        options.signal?.throwIfAborted()
        for (const holder of holders)
          unreadable.push({
            node: holder.node,
            storage: holder.storage,
            unreadable: `content listing failed: ${errorText(error)}`,
          })
      }
    }),
  )
  volumes.sort((a, b) => compare(a.node, b.node) || compare(a.storage, b.storage) || compare(a.volid, b.volid))
  unreadable.sort((a, b) => compare(a.node, b.node) || compare(a.storage, b.storage))
  return { storages, volumes, unreadableStorages: unreadable }
}

function byGuest(
  a: { vmid: number; node: string; type: string },
  b: { vmid: number; node: string; type: string },
): number {
  return a.vmid - b.vmid || compare(a.node, b.node) || compare(a.type, b.type)
}

/** Plain code-unit order: deterministic regardless of locale. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message
  return String(error)
}
