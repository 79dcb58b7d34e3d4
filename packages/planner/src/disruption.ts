/**
 * Disruption classes from PVE's hotplug rules (pve-api.md 5.2/5.3): what a write does to a running guest.
 * A stopped guest takes every write at once (`none`).
 */
import type { GuestType } from './ports.js'
import type { DisruptionClass, DisruptionPolicy } from './plan-types.js'

/** Options PVE applies at once even on a running guest. */
const FAST = new Set(['name', 'hostname', 'description', 'tags', 'onboot', 'protection', 'startup'])
/** Cloud-init data is written at once; the guest reads it at its next boot. */
const CLOUD_INIT = /^(ciuser|cipassword|sshkeys|nameserver|searchdomain|ipconfig\d+|citype|ciupgrade|cicustom)$/

export interface GuestRuntime {
  type: GuestType
  running: boolean
  /** qemu `hotplug` option as a set */
  hotplug: ReadonlySet<string>
  numa: boolean
}

export function classify(key: string, newSlot: boolean, g: GuestRuntime): DisruptionClass {
  if (!g.running || FAST.has(key)) return 'none'
  if (g.type === 'qemu') {
    if (CLOUD_INIT.test(key)) return 'none'
    if (/^net\d+$/.test(key)) return g.hotplug.has('network') ? 'hotplug' : 'reboot'
    if (/^(scsi|virtio)\d+$/.test(key) && newSlot) return g.hotplug.has('disk') ? 'hotplug' : 'reboot'
    if (key === 'memory') return g.hotplug.has('memory') && g.numa ? 'hotplug' : 'reboot'
    return 'reboot'
  }
  if (key === 'nameserver' || key === 'searchdomain') return 'reboot'
  if (['memory', 'swap', 'cores', 'cpulimit', 'cpuunits'].includes(key) || /^net\d+$/.test(key)) return 'hotplug'
  if (/^mp\d+$/.test(key) && newSlot) return 'hotplug'
  return 'reboot'
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

const POLICIES = new Set(['allow', 'none', 'hotplug', 'reboot', 'stop'])
export function isDisruptionPolicy(v: string): v is DisruptionPolicy {
  return POLICIES.has(v)
}
