/**
 * What each guest kind's live config keys are to ProxOps, beside what the field builders (qemu.ts, lxc.ts) own
 * for one manifest: PVE's own bookkeeping (never reported), the keys that change what a guest executes (called
 * out when nobody declares them), and every other live key, which is unmanaged: listed, never written.
 * plan() and adopt() both read these lists.
 */
import type { GuestType } from '@proxops/pve-client/wire'
import { isDerivedBoot } from './drives.js'

/** qemu-server's NIC models (`$nic_model_list`): the key of a `netN` value written `<model>=<mac>`. */
export const QEMU_NIC_MODELS: readonly string[] = [
  'e1000',
  'e1000-82540em',
  'e1000-82544gc',
  'e1000-82545em',
  'e1000e',
  'i82551',
  'i82557b',
  'i82559er',
  'ne2k_isa',
  'ne2k_pci',
  'pcnet',
  'rtl8139',
  'virtio',
  'vmxnet3',
]

/** Keys PVE writes or derives itself (identity, locks, snapshots, creation metadata). */
const BOOKKEEPING: Record<GuestType, ReadonlySet<string>> = {
  qemu: new Set([
    'digest',
    'meta',
    'vmgenid',
    'lock',
    'template',
    'parent',
    'snaptime',
    'vmstate',
    'runningmachine',
    'runningcpu',
  ]),
  // pve-container sets arch and ostype from the template at create
  lxc: new Set(['digest', 'lock', 'template', 'parent', 'snaptime', 'ostype', 'arch', 'ostemplate']),
}

/**
 * Values pve-container's create_vm writes when the request leaves the key out (`swap: 512`, the schema's
 * default, which create_vm stores): an undeclared key holding it is PVE's default, not a choice to report.
 */
const LXC_CREATE_DEFAULTS: Readonly<Record<string, string>> = { swap: '512' }

/**
 * Whether PVE wrote the key of `config` itself: `smbios1` only while it holds nothing but the uuid PVE
 * generated, `boot` only while it is the order qemu-server derives and maintains (drives.ts isDerivedBoot), a
 * container's create default while it holds that default.
 */
export function isBookkeeping(type: GuestType, key: string, config: Readonly<Record<string, string>>): boolean {
  if (BOOKKEEPING[type].has(key)) return true
  if (type !== 'qemu') return LXC_CREATE_DEFAULTS[key] !== undefined && config[key] === LXC_CREATE_DEFAULTS[key]
  if (key === 'smbios1') return /^uuid=[^,]*$/.test((config.smbios1 ?? '').trim())
  return key === 'boot' && isDerivedBoot(config)
}

/** Keys that change what runs on the host or in the guest, by what they do (a device, a hook, raw options). */
const EXECUTES: Record<GuestType, readonly [RegExp, string][]> = {
  qemu: [
    [/^hookscript$/, 'a hook script the host runs at every power change'],
    [/^args$/, 'raw arguments added to the QEMU command line'],
    [/^(usb|hostpci)\d+$/, 'a host device passed to the guest'],
    [/^(serial|parallel)\d+$/, 'a host device or socket connected to the guest'],
    [/^virtiofs\d+$/, 'a host directory shared with the guest'],
    [/^ivshmem$/, 'host memory shared with the guest'],
    [/^cicustom$/, 'cloud-init snippets the guest runs at boot'],
  ],
  lxc: [
    [/^hookscript$/, 'a hook script the host runs at every power change'],
    [/^dev\d+$/, 'a host device passed to the container'],
    [/^lxc$/, 'raw lxc.* lines (not modelled: a gap)'],
  ],
}

/** What an executing key does, or undefined for an ordinary key. */
export function executes(type: GuestType, key: string): string | undefined {
  return EXECUTES[type].find(([re]) => re.test(key))?.[1]
}

/** The note of an unmanaged live key in a plan's gaps. */
export function unmanagedNote(type: GuestType, key: string): string {
  const what = executes(type, key)
  return what === undefined
    ? 'unmanaged: set on PVE, not declared; proxops leaves it as it is'
    : `unmanaged, changes what the guest executes (${what}); proxops leaves it as it is: review it`
}
