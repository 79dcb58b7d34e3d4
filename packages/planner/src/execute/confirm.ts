/**
 * Read-back after an action: the executor does not call an action done because a task said OK, it reads
 * the object again and checks what the action was meant to achieve. Returns a problem text, or undefined.
 *
 * What is checked (values are not compared: PVE rewrites many of them, e.g. disks and MACs; the next plan
 * compares them field by field):
 *   - a created/cloned/updated guest exists on its node; every key written is set (applied or pending);
 *     every key deleted is gone (or pending delete); a resized disk is set
 *   - the power state the last power request asked for; `template: 1` after mark-template
 * Every check reads what PVE wrote before the action's last wait ended: tasks are awaited to their end, HA power
 * changes until the guest is in the state, an LXC template conversion until its worker ends (run-action.ts), each
 * bounded by the task timeout. No check relies on the few read-back attempts (`confirmAttempts`); they only absorb
 * a reader that answers from a cache.
 *   - a deleted guest is no longer listed on its node
 *   - a downloaded file is listed in its storage
 *   - a converged firewall needs no further write
 */
import { isTrue, splitList } from '@proxops/pve-client/wire'
import type { Action, PveRequest } from '../plan-types.js'
import type { LiveReader } from '../ports.js'
import { splitPending } from '../observe/observe.js'
import { sizeBytes, volumeBytes } from '../kinds/guest/volumes.js'
import { guestTarget, type ActionContext } from './run-action.js'
import { firewallWrites, liveFirewall } from '../kinds/firewall/canon.js'

export async function confirmAction(
  action: Action,
  ctx: Pick<ActionContext, 'reader' | 'confirmAttempts' | 'confirmDelayMs' | 'sleep'>,
): Promise<string | undefined> {
  const attempts = Math.max(1, ctx.confirmAttempts)
  let problem: string | undefined
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (attempt > 0) await ctx.sleep(ctx.confirmDelayMs)
    try {
      problem = await check(action, ctx.reader)
    } catch (error) {
      problem = `read failed: ${error instanceof Error ? error.message : String(error)}`
    }
    if (problem === undefined) return undefined
  }
  return problem
}

async function check(action: Action, reader: LiveReader): Promise<string | undefined> {
  const download = action.requests.find(
    (r): r is Extract<PveRequest, { call: 'downloadUrl' }> => r.call === 'downloadUrl',
  )
  if (download) {
    const content = String(download.params.content ?? '')
    const filename = String(download.params.filename ?? '')
    // the one content type: an unfiltered listing would run qemu-img info on every disk image of the storage
    const items = await reader.storageContent(download.node, download.storage, content || undefined)
    const found = items.some(
      (i) =>
        (content === '' || i.content === content) &&
        (i.volid.endsWith(`/${filename}`) || i.volid.endsWith(`:${filename}`)),
    )
    return found ? undefined : `${filename} is not listed in storage ${download.storage} on ${download.node}`
  }

  if (action.type === 'ha-create' || action.type === 'ha-update' || action.type === 'ha-delete')
    return checkHa(action, reader)
  if (action.kind === 'Pool' || action.type === 'pool') return checkPool(action, reader)

  // the snapshot request itself read the snapshot back (listed, complete) and the config around it
  if (action.type === 'snapshot') return undefined
  const target = guestTarget(action)
  if (!target) return undefined
  const { node, guest, vmid } = target
  const label = `${guest} ${vmid} on ${node}`

  if (action.requests.some((r) => r.call === 'deleteGuest')) {
    const present = reader.nodeGuests
      ? (await reader.nodeGuests(node, guest)).some((g) => g.vmid === vmid)
      : (await reader.clusterResources('vm')).some((r) => r.vmid === vmid && r.node === node)
    return present ? `${label} is still listed after delete` : undefined
  }

  const [rows, status] = await Promise.all([
    reader.guestPending(node, guest, vmid),
    reader.guestStatus(node, guest, vmid),
  ])
  const { config, pending, pendingDeletes } = splitPending(rows)
  const isSet = (key: string): boolean =>
    (config[key] !== undefined && !pendingDeletes.includes(key)) || pending[key] !== undefined
  const problems: string[] = []

  for (const r of action.requests) {
    if (r.call === 'updateConfig') {
      const deleted = splitList(String(r.params.delete ?? ''))
      for (const key of Object.keys(r.params)) {
        if (key === 'delete' || key === 'revert' || r.onlyIfAbsent?.includes(key)) continue
        if (!isSet(key)) problems.push(`${key} is not set`)
      }
      for (const key of deleted)
        if (config[key] !== undefined && !pendingDeletes.includes(key) && pending[key] === undefined)
          problems.push(`${key} was not deleted`)
      for (const key of r.onlyIfAbsent ?? []) if (!isSet(key)) problems.push(`${key} is not set`)
    }
    if (r.call === 'resizeDisk') {
      const value = pending[r.disk] ?? config[r.disk]
      if (value === undefined) problems.push(`disk ${r.disk} is not set`)
      else {
        // an absolute target size (`40G`) can be checked; a relative one (`+2G`) only by the next plan
        const wanted = /^\d/.test(r.size) ? sizeBytes(r.size) : undefined
        const live = volumeBytes(r.guest, r.disk, value)
        if (wanted !== undefined && live !== undefined && live < wanted)
          problems.push(`disk ${r.disk} is ${live} bytes, expected at least ${wanted}`)
      }
    }
  }
  if (action.requests.some((r) => r.call === 'markTemplate') && config.template !== '1' && status.template !== true)
    problems.push('not marked as a template')

  for (const r of action.requests) {
    if (r.call !== 'firewall' || !reader.guestFirewall) continue
    const left = firewallWrites(liveFirewall(await reader.guestFirewall(node, guest, vmid)), r.desired)
    if (left.length > 0) problems.push(`firewall not converged (${left.map((w) => w.op).join(', ')} still needed)`)
  }
  const power = expectedPower(action.requests)
  if (power && status.status !== power) problems.push(`power state is ${status.status}, expected ${power}`)
  const first = action.requests[0]
  if ((first?.call === 'createGuest' || first?.call === 'cloneGuest') && first.params.pool !== undefined) {
    const problem = await checkMember(reader, String(first.params.pool), vmid)
    if (problem) problems.push(problem)
  }
  return problems.length > 0 ? `${label}: ${[...new Set(problems)].join('; ')}` : undefined
}

/** The power state the action's last power-relevant request asks for. */
function expectedPower(requests: readonly PveRequest[]): 'running' | 'stopped' | undefined {
  let power: 'running' | 'stopped' | undefined
  for (const r of requests) {
    if (r.call === 'start' || r.call === 'reboot') power = 'running'
    else if (r.call === 'stop' || r.call === 'shutdown' || r.call === 'markTemplate') power = 'stopped'
    else if (r.call === 'createGuest') power = isTrue(r.params.start) ? 'running' : 'stopped'
    else if (r.call === 'cloneGuest') power = 'stopped'
  }
  return power
}

/** a Pool action: the pool exists with the comment written, or is gone; a membership action: the guest is in */
async function checkPool(action: Action, reader: LiveReader): Promise<string | undefined> {
  const r = action.requests[0]
  if (!r || !reader.pools) return undefined
  if (r.call === 'deletePool')
    return (await reader.pools()).some((p) => p.poolid === r.poolid) ? `pool ${r.poolid} is still listed` : undefined
  if (r.call !== 'createPool' && r.call !== 'updatePool') return undefined
  const poolid = String(r.params.poolid)
  if (action.type === 'pool' && action.vmid !== undefined) return checkMember(reader, poolid, action.vmid)
  const live = (await reader.pools()).find((p) => p.poolid === poolid)
  if (!live) return `pool ${poolid} is not listed`
  const comment = r.params.comment
  return comment !== undefined && (live.comment ?? '') !== String(comment)
    ? `pool ${poolid} has the comment ${JSON.stringify(live.comment ?? '')}, not ${JSON.stringify(String(comment))}`
    : undefined
}

async function checkMember(reader: LiveReader, poolid: string, vmid: number): Promise<string | undefined> {
  if (!reader.pool) return undefined
  const members = (await reader.pool(poolid)).members
  return members.some((m) => m.vmid === vmid) ? undefined : `guest ${vmid} is not a member of pool ${poolid}`
}

/** an HA action: the resource is there (with the requested state) or gone */
async function checkHa(action: Action, reader: LiveReader): Promise<string | undefined> {
  const write = action.requests.find(
    (r): r is Extract<PveRequest, { call: 'haWrite' }> => r.call === 'haWrite' && r.object === 'resources',
  )
  if (!write || !reader.haConfig) return undefined
  const item = (await reader.haConfig('resources')).find((r) => r.sid === write.id)
  if (write.method === 'DELETE') return item ? `HA resource ${write.id} is still configured` : undefined
  if (!item) return `HA resource ${write.id} is not configured`
  const state = write.params.state
  if (state !== undefined && (item.state ?? 'started') !== String(state))
    return `HA resource ${write.id} requests ${item.state ?? 'started'}, not ${String(state)}`
  return undefined
}
