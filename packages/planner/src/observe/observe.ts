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
 *   - HA (2) and pools (1 + one per pool) (kinds/ha/read.ts, kinds/pool/read.ts)
 * The storage listings run alongside the node guest lists and the guest reads (one in-flight limit for all).
 * Any per-object read failure marks that object unknown, never absent. A failure of the cluster listing
 * itself throws ObserveError: nothing can be planned from half a cluster.
 */
import type { ClusterResource } from '@proxops/pve-client/wire'
import { Limiter } from '@proxops/pve-client/wire'
import type { LiveReader } from '../ports.js'
import type { LiveInventory, LiveNode } from '../inventory.js'
import { KINDS } from '../kinds/index.js'
import type { ObserveOptions, ReadContext } from '../kit/kind.js'
import { compare, errorText } from '../kit/text.js'

export type { ObserveOptions }
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
  const nodesOutside = outsideNodes(resources, allow)

  // every kind reads at once, sharing the in-flight limit; the guest kind's node lists are asked for first, and
  // the kinds that live on guests (their firewalls) wait for the guests the kind that reads them yields
  const base = { reader, read, pveVersion: version, resources, online, allowed, options }
  const first = KINDS.find((k) => k.readsGuests)
  const guestsRead: Promise<Partial<LiveInventory>> =
    first?.read({ ...base, guests: Promise.resolve([]) }) ?? Promise.resolve({})
  const guests = guestsRead.then((part) => part.guests ?? [])
  const ctx: ReadContext = { ...base, guests }
  const parts = await Promise.all([guestsRead, ...KINDS.filter((k) => k !== first).map((k) => k.read(ctx))])
  return Object.assign(
    { cluster, pveVersion: version, nodes, ...(nodesOutside.length > 0 ? { nodesOutside } : {}) },
    ...parts,
  ) as LiveInventory
}

/** the cluster's nodes the allowlist leaves out (a cluster-wide backup job reaches their guests too) */
function outsideNodes(resources: readonly ClusterResource[], allow: ReadonlySet<string> | undefined): string[] {
  if (!allow) return []
  const out = new Set<string>()
  for (const r of resources) {
    if (r.type !== 'node') continue
    const node = r.node ?? r.id.replace(/^node\//, '')
    if (!allow.has(node)) out.add(node)
  }
  return [...out].sort(compare)
}

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
