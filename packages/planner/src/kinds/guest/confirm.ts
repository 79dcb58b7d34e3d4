/**
 * Read-back of a guest action: the executor does not call an action done because a task said OK, it reads the
 * guest again and checks what the action was meant to achieve (values are not compared: PVE rewrites many of
 * them, e.g. disks and MACs; the next plan compares them field by field):
 *   - a created/cloned/updated guest exists on its node; every key written is set (applied or pending); every
 *     key deleted is gone (or pending delete); a resized disk is set; a moved disk names a volume on its target
 *     storage, no key names the source volume any more, and no lock is left
 *   - the power state the last power request asked for; `template: 1` after mark-template
 *   - a deleted guest is no longer listed on its node
 *   - a new guest created with `pool=` is a member of that pool
 * Every check reads what PVE wrote before the action's last wait ended: tasks are awaited to their end, HA power
 * changes until the guest is in the state, an LXC template conversion until its worker ends (run.ts), each
 * bounded by the task timeout. No check relies on the few read-back attempts (`confirmAttempts`); they only absorb
 * a reader that answers from a cache.
 */
import { isTrue, splitList } from '@proxops/pve-client/wire'
import type { Action, PveRequest } from '../../plan-types.js'
import type { LiveReader } from '../../ports.js'
import { splitPending } from './read.js'
import { checkMember } from '../pool/confirm.js'
import { guestTarget } from './run.js'
import { sizeBytes, volumeBytes } from './volumes.js'

export async function confirmGuest(action: Action, reader: LiveReader): Promise<string | undefined> {
  // the snapshot request itself read the snapshot back (listed, complete) and the config around it
  if (action.type === 'snapshot') return undefined
  if (action.type === 'migrate') return confirmMigration(action, reader)
  const target = guestTarget(action)
  if (!target) return undefined
  const { node, guest, vmid } = target
  const label = `${guest} ${vmid} on ${node}`

  if (action.requests.some((r) => r.call === 'deleteGuest')) {
    const present = (await reader.nodeGuests(node, guest)).some((g) => g.vmid === vmid)
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
    if (r.call === 'moveDisk') {
      // the slot names a volume on the target storage, and (with `delete`) nothing names the source any more
      const value = config[r.disk]
      const head = value === undefined ? undefined : (/^(?:(?:file|volume)=)?([^,]+)/.exec(value)?.[1] ?? '')
      if (head === undefined) problems.push(`disk ${r.disk} is not set`)
      else if (!head.startsWith(`${r.storage}:`))
        problems.push(`disk ${r.disk} is ${head}, not on storage ${r.storage}`)
      for (const [key, v] of Object.entries(config))
        if (key !== r.disk && v.split(',')[0] === r.volume) problems.push(`${key} still names ${r.volume}`)
      if (config.lock !== undefined) problems.push(`still locked (${config.lock})`)
    }
  }
  if (action.requests.some((r) => r.call === 'markTemplate') && config.template !== '1' && status.template !== true)
    problems.push('not marked as a template')

  const power = expectedPower(action.requests)
  if (power && status.status !== power) problems.push(`power state is ${status.status}, expected ${power}`)
  const first = action.requests[0]
  if ((first?.call === 'createGuest' || first?.call === 'cloneGuest') && first.params.pool !== undefined) {
    const problem = await checkMember(reader, String(first.params.pool), vmid)
    if (problem) problems.push(problem)
  }
  return problems.length > 0 ? `${label}: ${[...new Set(problems)].join('; ')}` : undefined
}

/**
 * A migration is done when the target node lists the guest without the `migrate` lock (PVE::AbstractMigrate
 * phase3 moved its config and final_cleanup cleared the lock) and it runs again if it ran (an online migration
 * keeps it running, a restart migration starts it on the target).
 */
async function confirmMigration(action: Action, reader: LiveReader): Promise<string | undefined> {
  const r = action.requests.find((x) => x.call === 'migrate')
  if (r?.call !== 'migrate') return undefined
  const label = `${r.guest} ${r.vmid}`
  const listed = (await reader.nodeGuests(r.target, r.guest)).find((g) => g.vmid === r.vmid)
  if (!listed) return `${label} is not on node ${r.target} after the migration`
  if (listed.lock === 'migrate') return `${label} on ${r.target} still carries the migrate lock`
  const ran = isTrue(r.params.online) || isTrue(r.params.restart)
  if (ran && listed.status !== 'running') return `${label} on ${r.target} is ${listed.status}, expected running`
  return undefined
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
