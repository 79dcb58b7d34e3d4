/**
 * Reading the guest kind: the node guest lists (power state without the resources lag, two requests per online
 * node), then one `/pending` read per guest (the applied value, the pending value, the pending delete flag and
 * the `digest` row of every key: qemu-server's vm_pending lists every key of the loaded config), and for each
 * desired vmid nothing lists, where it is held (`/cluster/resources`, else `/cluster/nextid?vmid=`). A guest
 * that cannot be read is unknown, never absent.
 */
import type { ClusterResource, GuestListItem, GuestType, PendingEntry } from '@proxops/pve-client/wire'
import { isTrue, readTags } from '@proxops/pve-client/wire'
import type { LiveReader } from '../../ports.js'
import type { HeldVmid, LiveGuest, LiveInventory, MigrationCheck, UnknownGuest } from '../../inventory.js'
import { compare, errorText } from '../../kit/text.js'
import type { ObserveOptions } from '../../kit/kind.js'
import type { Read, ReadContext } from '../../kit/kind.js'

interface GuestRef {
  type: GuestType
  vmid: number
  node: string
  resource?: ClusterResource
  listed?: GuestListItem
}

export async function readGuests(
  ctx: ReadContext,
): Promise<Pick<LiveInventory, 'guests' | 'unknownGuests' | 'heldVmids' | 'migrationChecks'>> {
  const { reader, read, resources, online, allowed, options } = ctx
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
  guests.sort(byGuest)
  const migrationChecks = await readMigrationChecks(ctx, guests)
  return {
    guests,
    unknownGuests: unknownGuests.sort(byGuest),
    heldVmids,
    ...(migrationChecks.length > 0 ? { migrationChecks } : {}),
  }
}

/**
 * PVE's migration precondition check (qemu-server / pve-container migrate_vm_precondition) of each guest that
 * sits on another allowlisted node than its manifest's `spec.node`: what PVE would refuse is known at plan time
 * (kinds/guest/migrate.ts). A container has the check from PVE 9 on; on PVE 8 plan() reads its config instead.
 */
async function readMigrationChecks(ctx: ReadContext, guests: readonly LiveGuest[]): Promise<MigrationCheck[]> {
  const wanted = ctx.options.guestNodes
  if (!wanted) return []
  const away = guests.filter((g) => {
    const node = wanted[g.vmid]
    return node !== undefined && node !== g.node && ctx.allowed(node) && !g.template
  })
  const lxcCheck = !/^[0-8]\./.test(ctx.pveVersion)
  const precondition = ctx.reader.migratePrecondition.bind(ctx.reader)
  return Promise.all(
    away.map(async (g): Promise<MigrationCheck> => {
      if (g.type === 'lxc' && !lxcCheck) return { vmid: g.vmid, node: g.node }
      try {
        return {
          vmid: g.vmid,
          node: g.node,
          check: { known: await ctx.read(() => precondition(g.node, g.type, g.vmid)) },
        }
      } catch (error) {
        ctx.options.signal?.throwIfAborted()
        return { vmid: g.vmid, node: g.node, check: { unreadable: errorText(error) } }
      }
    }),
  )
}

function byGuest(
  a: { vmid: number; node: string; type: string },
  b: { vmid: number; node: string; type: string },
): number {
  return a.vmid - b.vmid || compare(a.node, b.node) || compare(a.type, b.type)
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
    ...(ref.resource?.hastate === 'error' || status?.haState === 'error' ? { haError: true as const } : {}),
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
