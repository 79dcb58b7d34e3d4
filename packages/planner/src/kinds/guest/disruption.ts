/**
 * Disruption classes from PVE's hotplug rules: what a write does to a running guest.
 * A stopped guest takes every write at once (`none`).
 */
import type { GuestType } from '@proxops/pve-client/wire'
import { DISRUPTION_POLICIES } from '@proxops/schema'
import type { DisruptionClass, DisruptionPolicy } from '../../plan-types.js'
import { isCdrom } from './drives.js'
import { qemuNic } from './nics.js'
import { fieldRow } from './table.js'

export interface GuestRuntime {
  type: GuestType
  running: boolean
  /** qemu `hotplug` option as a set */
  hotplug: ReadonlySet<string>
  numa: boolean
}

/** The live value and the value written, when the class depends on what changes inside a property string. */
export interface ValueChange {
  before: string | undefined
  after: string | undefined
}

/**
 * The class of a write to `key` (the families' keys PVE applies at once, tags and cloud-init data, say so on their
 * field: `Owned.running`, and the rows in the field table).
 */
export function classify(key: string, newSlot: boolean, g: GuestRuntime, change?: ValueChange): DisruptionClass {
  if (!g.running || fieldRow(g.type, key)?.running === 'none') return 'none'
  if (g.type === 'qemu') {
    if (/^net\d+$/.test(key)) return g.hotplug.has('network') || netRelinkOnly(change) ? 'hotplug' : 'reboot'
    // vmconfig_update_disk: a CD drive that stays a CD drive gets its medium changed live (change_medium),
    // whatever `hotplug` says
    if (isCdrom(change?.before) && isCdrom(change?.after)) return 'hotplug'
    if (/^(scsi|virtio)\d+$/.test(key) && newSlot) return g.hotplug.has('disk') ? 'hotplug' : 'reboot'
    if (key === 'memory') return g.hotplug.has('memory') && g.numa ? 'hotplug' : 'reboot'
    return 'reboot'
  }
  if (key === 'nameserver' || key === 'searchdomain') return 'reboot'
  if (['memory', 'swap', 'cores', 'cpulimit', 'cpuunits'].includes(key) || /^net\d+$/.test(key)) return 'hotplug'
  if (/^mp\d+$/.test(key) && newSlot) return 'hotplug'
  return 'reboot'
}

/**
 * vmconfig_update_net: a NIC that keeps its model, MAC, queues and MTU and stays on a bridge is re-linked to
 * its tap device live (bridge, VLAN tag, trunks, firewall, rate, link_down) without `network` hotplug.
 */
function netRelinkOnly(change: ValueChange | undefined): boolean {
  if (change?.before === undefined || change.after === undefined) return false
  const a = qemuNic(change.before)
  const b = qemuNic(change.after)
  if (!a || !b) return false
  const num = (v: string | undefined) => (v === undefined ? undefined : Number(v))
  return (
    a.model === b.model &&
    (a.mac ?? '').toLowerCase() === (b.mac ?? '').toLowerCase() &&
    num(a.props.queues) === num(b.props.queues) &&
    num(a.props.mtu) === num(b.props.mtu) &&
    a.props.bridge !== undefined &&
    b.props.bridge !== undefined
  )
}

const RANK: Record<DisruptionClass, number> = { none: 0, hotplug: 1, reboot: 2, stop: 3 }

export function maxClass(classes: Iterable<DisruptionClass>): DisruptionClass {
  let best: DisruptionClass = 'none'
  for (const c of classes) if (RANK[c] > RANK[best]) best = c
  return best
}

/** Whether a change of class `c` may be carried out under `policy` (`allow` = everything). */
export function allowed(c: DisruptionClass, policy: DisruptionPolicy): boolean {
  return RANK[c] <= (policy === 'allow' ? RANK.stop : RANK[policy])
}

export function isDisruptionPolicy(v: string): v is DisruptionPolicy {
  return (DISRUPTION_POLICIES as readonly string[]).includes(v)
}
