/**
 * The guest config options the model knows, with the JSON type PVE's `check_type` gives them on read:
 * booleans and integers become numbers, `number` options stay strings, formatted
 * strings (including qemu `memory` since 8.1) stay strings. Indexed keys (`scsi[n]`) are matched by prefix.
 */

export type OptType = 'boolean' | 'integer' | 'number' | 'string'
export type GuestType = 'qemu' | 'lxc'

const QEMU_BOOL = [
  'acpi',
  'allow-ksm',
  'autostart',
  'ciupgrade',
  'freeze',
  'keephugepages',
  'kvm',
  'localtime',
  'numa',
  'onboot',
  'protection',
  'reboot',
  'tablet',
  'tdf',
  'template',
]
const QEMU_INT = ['balloon', 'cores', 'cpuunits', 'migrate_speed', 'shares', 'smp', 'sockets', 'vcpus']
const QEMU_NUM = ['cpulimit', 'migrate_downtime']
const QEMU_STR = [
  'affinity',
  'agent',
  'amd-sev',
  'arch',
  'args',
  'audio0',
  'bios',
  'boot',
  'bootdisk',
  'cicustom',
  'cipassword',
  'citype',
  'ciuser',
  'cpu',
  'description',
  'efidisk0',
  'hookscript',
  'hotplug',
  'hugepages',
  'intel-tdx',
  'ivshmem',
  'keyboard',
  'lock',
  'machine',
  'memory',
  'meta',
  'name',
  'nameserver',
  'ostype',
  'rng0',
  'scsihw',
  'searchdomain',
  'smbios1',
  'spice_enhancements',
  'sshkeys',
  'startdate',
  'startup',
  'tags',
  'tpmstate0',
  'vga',
  'vmgenid',
  'vmstatestorage',
  'watchdog',
  'parent',
  'runningmachine',
  'runningcpu',
  'vmstate',
]
/** indexed qemu keys and their index ranges */
export const QEMU_INDEXED: Record<string, number> = {
  ide: 3,
  sata: 5,
  scsi: 30,
  virtio: 15,
  net: 31,
  ipconfig: 31,
  unused: 255,
  hostpci: 15,
  usb: 14,
  serial: 3,
  parallel: 2,
  numa: 7,
  virtiofs: 9,
}

const LXC_BOOL = ['console', 'debug', 'onboot', 'protection', 'template', 'unprivileged']
const LXC_INT = ['cores', 'cpuunits', 'memory', 'swap', 'tty']
const LXC_NUM = ['cpulimit']
const LXC_STR = [
  'arch',
  'cmode',
  'description',
  'entrypoint',
  'env',
  'features',
  'hookscript',
  'hostname',
  'lock',
  'nameserver',
  'ostype',
  'rootfs',
  'searchdomain',
  'startup',
  'tags',
  'timezone',
  'parent',
]
export const LXC_INDEXED: Record<string, number> = { mp: 255, net: 31, unused: 255, dev: 255 }

function table(b: string[], i: string[], n: string[], s: string[]): Map<string, OptType> {
  const m = new Map<string, OptType>()
  for (const k of b) m.set(k, 'boolean')
  for (const k of i) m.set(k, 'integer')
  for (const k of n) m.set(k, 'number')
  for (const k of s) m.set(k, 'string')
  return m
}

const QEMU = table(QEMU_BOOL, QEMU_INT, QEMU_NUM, QEMU_STR)
const LXC = table(LXC_BOOL, LXC_INT, LXC_NUM, LXC_STR)

/** `scsi12` -> ['scsi', 12] when scsi is an indexed key and 12 is in range */
export function splitIndexed(type: GuestType, key: string): [string, number] | undefined {
  const m = /^([a-z]+)(\d+)$/.exec(key)
  if (!m || !m[1] || !m[2]) return undefined
  const max = (type === 'qemu' ? QEMU_INDEXED : LXC_INDEXED)[m[1]]
  if (max === undefined || (m[2].length > 1 && m[2].startsWith('0'))) return undefined
  const n = Number(m[2])
  return n <= max ? [m[1], n] : undefined
}

export function optionType(type: GuestType, key: string): OptType | undefined {
  const t = (type === 'qemu' ? QEMU : LXC).get(key)
  if (t) return t
  return splitIndexed(type, key) ? 'string' : undefined
}

export function isKnownOption(type: GuestType, key: string): boolean {
  return optionType(type, key) !== undefined
}

/** The JSON value PVE returns for a stored config value. */
export function typedValue(type: GuestType, key: string, value: string): string | number {
  const t = optionType(type, key)
  if (t === 'boolean' || t === 'integer') {
    const n = Number(value)
    return Number.isFinite(n) ? n : value
  }
  return value
}

export const QEMU_DISK_BUSES = ['ide', 'sata', 'scsi', 'virtio'] as const

export function isQemuDiskKey(key: string): boolean {
  const s = splitIndexed('qemu', key)
  return !!s && (QEMU_DISK_BUSES as readonly string[]).includes(s[0])
}

/** the disk buses in valid_drive_names order (also the order the boot disk is picked in) */
export const QEMU_DRIVE_BUS_ORDER = ['ide', 'scsi', 'virtio', 'sata'] as const

/** the drive keys among `keys` in qemu-server valid_drive_names order, as foreach_volume walks them */
export function qemuVolumeKeysInOrder(keys: Iterable<string>): string[] {
  const rank = (k: string): [number, number] => {
    if (k === 'efidisk0') return [QEMU_DRIVE_BUS_ORDER.length, 0]
    if (k === 'tpmstate0') return [QEMU_DRIVE_BUS_ORDER.length + 1, 0]
    const [bus, index] = splitIndexed('qemu', k) as [string, number]
    return [(QEMU_DRIVE_BUS_ORDER as readonly string[]).indexOf(bus), index]
  }
  return [...keys]
    .filter(isQemuVolumeKey)
    .map((k) => ({ k, r: rank(k) }))
    .sort((a, b) => a.r[0] - b.r[0] || a.r[1] - b.r[1])
    .map((x) => x.k)
}

/** drive keys including efidisk0/tpmstate0 */
export function isQemuVolumeKey(key: string): boolean {
  return isQemuDiskKey(key) || key === 'efidisk0' || key === 'tpmstate0'
}

export function isLxcMountKey(key: string): boolean {
  return key === 'rootfs' || splitIndexed('lxc', key)?.[0] === 'mp'
}

export const CLOUDINIT_KEYS = [
  'ciuser',
  'cipassword',
  'citype',
  'ciupgrade',
  'cicustom',
  'sshkeys',
  'nameserver',
  'searchdomain',
]

/** options a running qemu guest takes at once (`$fast_plug_option` in qemu-server plus cloud-init keys) */
export const QEMU_FAST = [
  'name',
  'description',
  'tags',
  'onboot',
  'protection',
  'startup',
  'hookscript',
  'migrate_downtime',
  'migrate_speed',
  'vmstatestorage',
  'shares',
  'lock',
]
