/**
 * What the guest kind's requests need from the API token, following PVE's own checks: each route's `permissions`
 * entry in the API schema, plus what qemu-server (`$check_vm_modify_config_perm`: option groups, `startup` also
 * Sys.Modify on `/`; `$check_storage_access`; `check_bridge_access`), pve-container
 * (`check_ct_modify_config_perm`, privileged containers) and pve-storage (`check_volume_access`) check in code.
 * Options PVE reserves for root@pam cannot be granted to any token.
 */
import { splitList } from '@proxops/pve-client/wire'
import { anyOf, deletes, needs, one, str, type Grant, type Privileges } from '../../kit/privileges.js'
import { readDrive } from './drives.js'
import { parsePS } from './fields.js'
import { volumeKindOf } from './volumes.js'

const QEMU_CPU = new Set(['cores', 'cpu', 'cpulimit', 'cpuunits', 'numa', 'sockets', 'vcpus', 'affinity'])
const QEMU_MEMORY = new Set(['memory', 'balloon', 'shares', 'allow-ksm'])
const QEMU_HWTYPE = new Set([
  'acpi',
  'hotplug',
  'kvm',
  'machine',
  'scsihw',
  'smbios1',
  'tablet',
  'vga',
  'watchdog',
  'audio0',
  'rng0',
])
const QEMU_OPTIONS = new Set([
  'agent',
  'autostart',
  'bios',
  'description',
  'keyboard',
  'localtime',
  'migrate_downtime',
  'migrate_speed',
  'name',
  'onboot',
  'ostype',
  'protection',
  'reboot',
  'startdate',
  'startup',
  'tdf',
  'template',
  'tags',
])
const QEMU_DISKOPT = new Set(['boot', 'bootdisk', 'vmstatestorage'])
const QEMU_CLOUDINIT = new Set([
  'cicustom',
  'cipassword',
  'citype',
  'ciuser',
  'ciupgrade',
  'nameserver',
  'searchdomain',
  'sshkeys',
])
/** request parameters of create/update that are not config options */
const QEMU_META = new Set(['vmid', 'storage', 'pool', 'start', 'digest', 'delete', 'revert', 'unique', 'force'])
const LXC_META = new Set([
  'vmid',
  'storage',
  'pool',
  'start',
  'digest',
  'delete',
  'revert',
  'unique',
  'force',
  'ostemplate',
  'password',
  'ssh-public-keys',
  'unprivileged',
  'restore',
])
const NEW_DISK = /^(?:([^/:\s]+):)?(\d+(?:\.\d+)?)$/

/** A request value's tokens through the planner's one property-string reader; `defaultKey` holds a bare head. */
const tokensOf = (v: string, defaultKey?: string): Record<string, string> => parsePS(v, defaultKey) ?? {}

/** pve-storage check_volume_access for `storage:volname` (ISOs, templates, import images, another guest's disk) */
function volumeGrants(volid: string, vmid: number): Grant[][] {
  const i = volid.indexOf(':')
  if (i <= 0) return []
  const sid = volid.slice(0, i)
  const name = volid.slice(i + 1)
  const allocate = { path: `/storage/${sid}`, privs: ['Datastore.Allocate'] }
  if (/^(?:iso|vztmpl|import)\//.test(name))
    return [[allocate, ...anyOf(`/storage/${sid}`, 'Datastore.AllocateSpace', 'Datastore.Audit')]]
  const owner = /(?:^|\/)(?:vm|base|subvol)-(\d+)-/.exec(name)?.[1]
  if (owner !== undefined && Number(owner) === vmid) return []
  // another guest's disk: Datastore.Audit on the storage and VM.Config.Disk on the owner (or Allocate alone)
  if (owner !== undefined)
    return [
      [allocate, { path: `/storage/${sid}`, privs: ['Datastore.Audit'] }],
      [allocate, { path: `/vms/${owner}`, privs: ['VM.Config.Disk'] }],
    ]
  return [[allocate]]
}

/** GuestHelpers::check_vnet_access: SDN.Use on the bridge (zone localnetwork without SDN), per VLAN with a tag */
function bridgeGrants(net: string): Grant[][] {
  const kv = tokensOf(net, 'model')
  if (kv.bridge === undefined) return []
  const base = `/sdn/zones/localnetwork/${kv.bridge}`
  const out: Grant[][] = []
  if (kv.tag) out.push(one(`${base}/${kv.tag}`, 'SDN.Use'))
  for (const t of (kv.trunks ?? '').split(';').filter(Boolean))
    out.push(one(`${base}/${t.split('-')[0] as string}`, 'SDN.Use'))
  if (!kv.tag && !kv.trunks) out.push(one(base, 'SDN.Use'))
  return out
}

function qemuKey(
  key: string,
  value: string | undefined,
  vmid: number,
  create: boolean,
  defaultStorage: string | undefined,
): (Grant[] | string)[] {
  const vms = `/vms/${vmid}`
  if (volumeKindOf('qemu', key, value ?? '') !== undefined) {
    const out: (Grant[] | string)[] = []
    if (value === undefined) return create ? [] : [one(vms, 'VM.Config.Disk')]
    // what the drive is, read as plan() reads it (qemu-server's drive_is_cdrom, drive_is_cloudinit)
    const drive = readDrive(value)
    const file = drive?.file ?? ''
    const cdrom = drive?.props.media === 'cdrom'
    const cloudinit = drive?.kind === 'cloud-init'
    if (!create)
      out.push(
        cloudinit
          ? one(vms, 'VM.Config.Cloudinit', 'VM.Config.CDROM')
          : cdrom || file === 'none'
            ? one(vms, 'VM.Config.CDROM')
            : one(vms, 'VM.Config.Disk'),
      )
    if (file.startsWith('/')) out.push('an absolute path as a drive is for root@pam only')
    else if (!cloudinit && !cdrom && NEW_DISK.test(file)) {
      const sid = NEW_DISK.exec(file)?.[1] ?? defaultStorage
      if (sid !== undefined) out.push(one(`/storage/${sid}`, 'Datastore.AllocateSpace'))
    } else if (!cloudinit && file !== 'none' && file !== 'cdrom') out.push(...volumeGrants(file, vmid))
    const src = drive?.props['import-from']
    if (src !== undefined) {
      if (src.startsWith('/')) out.push('an absolute import-from path is for root@pam only')
      else {
        const owner = /^[^:]+:(?:\d+\/)?(?:vm|base)-(\d+)-/.exec(src)?.[1]
        out.push(...(owner !== undefined ? [one(`/vms/${owner}`, 'VM.Clone')] : volumeGrants(src, vmid)))
      }
    }
    return out
  }
  if (/^unused\d+$/.test(key)) return [one(vms, 'VM.Config.Disk')]
  if (QEMU_CPU.has(key) || /^numa\d+$/.test(key)) return [one(vms, 'VM.Config.CPU')]
  if (QEMU_MEMORY.has(key)) return [one(vms, 'VM.Config.Memory')]
  if (QEMU_HWTYPE.has(key)) return [one(vms, 'VM.Config.HWType')]
  if (key === 'startup') return [one(vms, 'VM.Config.Options'), one('/', 'Sys.Modify')]
  if (QEMU_OPTIONS.has(key)) return [one(vms, 'VM.Config.Options')]
  if (QEMU_DISKOPT.has(key)) return [one(vms, 'VM.Config.Disk')]
  if (/^net\d+$/.test(key)) return [one(vms, 'VM.Config.Network'), ...(value === undefined ? [] : bridgeGrants(value))]
  if (QEMU_CLOUDINIT.has(key) || /^ipconfig\d+$/.test(key))
    return [anyOf(vms, 'VM.Config.Cloudinit', 'VM.Config.Network')]
  if (/^serial\d+$/.test(key))
    return value === undefined || value === 'socket'
      ? [one(vms, 'VM.Config.HWType')]
      : [`a real serial device (${key}) is for root@pam only`]
  if (/^usb\d+$/.test(key) || /^hostpci\d+$/.test(key)) {
    const kv = value === undefined ? {} : tokensOf(value, 'host')
    const mapping = kv.mapping
    if (value !== undefined && mapping === undefined && !/^spice$/i.test(kv.host ?? '')) {
      return [
        `a ${key.startsWith('usb') ? 'USB' : 'PCI'} device without a resource mapping (${key}) is for root@pam only`,
      ]
    }
    const kind = key.startsWith('usb') ? 'usb' : 'pci'
    return [
      one(vms, 'VM.Config.HWType'),
      ...(mapping !== undefined ? [one(`/mapping/${kind}/${mapping}`, 'Mapping.Use')] : []),
    ]
  }
  return [`'${key}' is set by root@pam only (outside every qemu-server option group)`]
}

function lxcKey(key: string, value: string | undefined, vmid: number, unprivileged: boolean): (Grant[] | string)[] {
  const vms = `/vms/${vmid}`
  if (key === 'cores' || key === 'cpuunits' || key === 'cpulimit') return [one(vms, 'VM.Config.CPU')]
  if (key === 'rootfs' || /^mp\d+$/.test(key)) {
    if (value === undefined) return [one(vms, 'VM.Config.Disk')]
    const vol = tokensOf(value, 'volume').volume ?? ''
    if (vol.startsWith('/'))
      return [`a ${vol.startsWith('/dev/') ? 'device' : 'bind'} mount (${key}) is for root@pam only`]
    const nd = NEW_DISK.exec(vol)
    return [
      one(vms, 'VM.Config.Disk'),
      ...(nd?.[1] !== undefined ? [one(`/storage/${nd[1]}`, 'Datastore.AllocateSpace')] : volumeGrants(vol, vmid)),
    ]
  }
  if (key === 'memory' || key === 'swap') return [one(vms, 'VM.Config.Memory')]
  if (/^net\d+$/.test(key)) return [one(vms, 'VM.Config.Network'), ...(value === undefined ? [] : bridgeGrants(value))]
  if (key === 'hostname' || key === 'nameserver' || key === 'searchdomain') return [one(vms, 'VM.Config.Network')]
  if (key === 'features') {
    if (!unprivileged) return ['feature flags of a privileged container are for root@pam only']
    const names = Object.keys(tokensOf(value ?? '')).filter((f) => f !== 'nesting')
    return names.length > 0
      ? [`feature flags other than nesting (${names.join(', ')}) are for root@pam only`]
      : [one(vms, 'VM.Allocate')]
  }
  if (/^dev\d+$/.test(key)) return [`device passthrough (${key}) is for root@pam only`]
  if (key === 'hookscript') return ['a hookscript is for root@pam only']
  return [one(vms, 'VM.Config.Options')]
}

const power = ({ vmid }: { vmid: number }) => [{ need: one(`/vms/${vmid}`, 'VM.PowerMgmt') }]
const allocate = ({ vmid }: { vmid: number }) => [{ need: one(`/vms/${vmid}`, 'VM.Allocate') }]

export const guestPrivileges = {
  createGuest: (r) => {
    const { out, push } = needs()
    const vmid = Number(r.params.vmid)
    const storage = str(r.params, 'storage')
    push(undefined, [one(`/vms/${vmid}`, 'VM.Allocate')])
    if (r.params.start === 1 || r.params.start === '1') push('start', [one(`/vms/${vmid}`, 'VM.PowerMgmt')])
    if (r.guest === 'qemu') {
      if (storage !== undefined) push('storage', [one(`/storage/${storage}`, 'Datastore.AllocateSpace')])
      for (const k of Object.keys(r.params)
        .filter((x) => !QEMU_META.has(x))
        .sort())
        push(k, qemuKey(k, str(r.params, k), vmid, true, storage))
    } else {
      const unprivileged = str(r.params, 'unprivileged') !== '0'
      if (!unprivileged) push('unprivileged', [one('/', 'Sys.Modify')])
      const tmpl = str(r.params, 'ostemplate')
      if (tmpl !== undefined) push('ostemplate', volumeGrants(tmpl, vmid))
      if (r.params.rootfs === undefined)
        push('storage', [one(`/storage/${storage ?? 'local'}`, 'Datastore.AllocateSpace')])
      for (const k of Object.keys(r.params)
        .filter((x) => !LXC_META.has(x))
        .sort())
        push(k, lxcKey(k, str(r.params, k), vmid, unprivileged))
    }
    return out
  },
  updateConfig: (r) => {
    const { out, push } = needs()
    const vms = `/vms/${r.vmid}`
    push(undefined, [
      anyOf(
        vms,
        ...(r.guest === 'qemu'
          ? [
              'VM.Config.Disk',
              'VM.Config.CDROM',
              'VM.Config.CPU',
              'VM.Config.Memory',
              'VM.Config.Network',
              'VM.Config.HWType',
              'VM.Config.Options',
              'VM.Config.Cloudinit',
            ]
          : ['VM.Config.Disk', 'VM.Config.CPU', 'VM.Config.Memory', 'VM.Config.Network', 'VM.Config.Options']),
      ),
    ])
    const keys = Object.keys(r.params)
      .filter((x) => !(r.guest === 'qemu' ? QEMU_META : LXC_META).has(x))
      .sort()
    for (const k of keys)
      push(
        k,
        r.guest === 'qemu'
          ? qemuKey(k, str(r.params, k), r.vmid, false, undefined)
          : lxcKey(k, str(r.params, k), r.vmid, true),
      )
    for (const k of deletes(r.params))
      push(k, r.guest === 'qemu' ? qemuKey(k, undefined, r.vmid, false, undefined) : lxcKey(k, undefined, r.vmid, true))
    return out
  },
  resizeDisk: (r) => [{ key: r.disk, need: one(`/vms/${r.vmid}`, 'VM.Config.Disk') }],
  // qemu-server move_vm_disk / pve-container move_volume: VM.Config.Disk on the guest, and Datastore.AllocateSpace
  // on the target storage
  moveDisk: (r) => [
    { key: r.disk, need: one(`/vms/${r.vmid}`, 'VM.Config.Disk') },
    { key: r.disk, need: one(`/storage/${r.storage}`, 'Datastore.AllocateSpace') },
  ],
  cloneGuest: (r) => {
    const { out, push } = needs()
    const newid = Number(r.params.newid)
    push(undefined, [one(`/vms/${r.vmid}`, 'VM.Clone'), one(`/vms/${newid}`, 'VM.Allocate')])
    const storage = str(r.params, 'storage')
    if (storage !== undefined) push('storage', [one(`/storage/${storage}`, 'Datastore.AllocateSpace')])
    return out
  },
  start: power,
  stop: power,
  shutdown: power,
  reboot: power,
  markTemplate: allocate,
  deleteGuest: allocate,
  // qemu-server / pve-container snapshot and delsnapshot: VM.Snapshot on /vms/<vmid>; the list needs VM.Audit
  snapshot: (r) => [{ need: one(`/vms/${r.vmid}`, 'VM.Snapshot') }, { need: one(`/vms/${r.vmid}`, 'VM.Audit') }],
  migrate: (r) => {
    // qemu-server / pve-container migrate_vm: VM.Migrate on the guest, and with a storage map
    // (check_storage_access_migrate) Datastore.AllocateSpace on each target storage
    const { out, push } = needs()
    push(undefined, [one(`/vms/${r.vmid}`, 'VM.Migrate')])
    const map = str(r.params, r.guest === 'qemu' ? 'targetstorage' : 'target-storage')
    for (const pair of splitList(map)) {
      const to = pair.includes(':') ? pair.slice(pair.indexOf(':') + 1) : pair
      push('targetstorage', [one(`/storage/${to}`, 'Datastore.AllocateSpace')])
    }
    return out
  },
} satisfies Privileges
