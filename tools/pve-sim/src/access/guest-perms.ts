/**
 * The privilege checks qemu-server and pve-container make in code, beyond the apidoc `permissions` entry:
 * qemu-server API2/Qemu.pm `create_vm` / `update_vm_api` (`$check_vm_modify_config_perm` with its option groups,
 * `startup` also needing Sys.Modify on /, `$check_storage_access`, `check_hostpci_perm`, `check_usb_perm`,
 * QemuServer `check_bridge_access`), pve-container API2/LXC.pm `create_vm` and LXC.pm
 * `check_ct_modify_config_perm`, pve-guest-common GuestHelpers `check_vnet_access` and pve-storage
 * `check_volume_access`. The root@pam-only rules stay in http/root-only.ts; this runs after them.
 * A create's `pool` counts as the VM.Allocate alternative; ACLs on a pool do not reach its members' /vms paths,
 * and tag privileges (`user-tag-access`) are not modelled.
 */
import { PveHttpError } from '../model/errors.js'
import { AccessState, permError } from './state.js'
import { CLOUDINIT, CPU, DISKOPT, GENERAL, HWTYPE, MEMORY, QEMU_DRIVE_RE, QEMU_META } from './qemu-options.js'

/** PVE::QemuServer::Drive::NEW_DISK_RE (also pve-container's) */
const NEW_DISK_RE = /^(?:([^/:\s]+):)?(\d+(?:\.\d+)?)$/

const LXC_CREATE_META = new Set([
  'node',
  'vmid',
  'ignore-unpack-errors',
  'bwlimit',
  'start',
  'ha-managed',
  'unprivileged',
  'restore',
  'unique',
  'force',
  'password',
  'ssh-public-keys',
  'pool',
  'ostemplate',
  'storage',
])
const LXC_UPDATE_META = new Set(['node', 'vmid', 'digest', 'delete', 'revert'])

function props(v: string): { head: string; kv: Record<string, string> } {
  const kv: Record<string, string> = {}
  let head = ''
  v.split(',').forEach((part, i) => {
    const eq = part.indexOf('=')
    if (eq > 0) kv[part.slice(0, eq)] = part.slice(eq + 1)
    else if (i === 0) head = part
  })
  return { head, kv }
}

/**
 * RPCEnvironment check_vm_perm as create_vm calls it with `pool`: privileges on /pool/<pool> are tried first for
 * every /vms/<vmid> check (the guest is not a member yet, so pool ACLs do not reach its path)
 */
function withPool(a: AccessState, vmid: number, pool: unknown): AccessState {
  if (typeof pool !== 'string' || pool === '') return a
  const vmPath = `/vms/${vmid}`
  const scoped = Object.create(a) as AccessState
  scoped.check = (actor, path, privs, noerr = false) =>
    (path === vmPath && a.check(actor, `/pool/${pool}`, privs, true)) || a.check(actor, path, privs, noerr)
  scoped.checkAny = (actor, path, privs, noerr = false) =>
    (path === vmPath && a.checkAny(actor, `/pool/${pool}`, privs, true)) || a.checkAny(actor, path, privs, noerr)
  return scoped
}

function vmCheck(a: AccessState, actor: string, vmid: number, privs: string[], any = false): void {
  if (any) a.checkAny(actor, `/vms/${vmid}`, privs)
  else a.check(actor, `/vms/${vmid}`, privs)
}

/** pve-storage check_volume_access for a `storage:volname` volume (absolute paths are root-only elsewhere) */
export function checkVolumeAccess(a: AccessState, actor: string, vmid: number | undefined, volid: string): void {
  const i = volid.indexOf(':')
  if (i <= 0) return
  const sid = volid.slice(0, i)
  const volname = volid.slice(i + 1)
  if (a.check(actor, `/storage/${sid}`, ['Datastore.Allocate'], true)) return
  const owner =
    /(?:^|\/)(?:vm|base|subvol|basevol)-(\d+)-/.exec(volname)?.[1] ??
    /^backup\/vzdump-(?:qemu|lxc|openvz)-(\d+)-/.exec(volname)?.[1]
  const vtype = /^(iso|vztmpl|import|backup|snippets)\//.exec(volname)?.[1] ?? 'images'
  if (vtype === 'iso' || vtype === 'vztmpl' || vtype === 'import') {
    a.checkAny(actor, `/storage/${sid}`, ['Datastore.AllocateSpace', 'Datastore.Audit'])
  } else if (owner !== undefined && vmid !== undefined && Number(owner) === vmid) {
    // the guest's own volume
  } else if (vtype === 'backup' && owner !== undefined) {
    a.check(actor, `/storage/${sid}`, ['Datastore.AllocateSpace'])
    a.check(actor, `/vms/${owner}`, ['VM.Backup'])
  } else if (vtype === 'images' && owner !== undefined) {
    a.check(actor, `/storage/${sid}`, ['Datastore.Audit'])
    a.check(actor, `/vms/${owner}`, ['VM.Config.Disk'])
  } else {
    throw new PveHttpError(500, `missing privileges to access ${volid}`)
  }
}

/** GuestHelpers::check_vnet_access for a net[n] value: SDN.Use on the bridge (no SDN: zone localnetwork), or per VLAN */
export function checkBridge(a: AccessState, actor: string, net: string | undefined): void {
  if (!net) return
  const { kv } = props(net)
  const bridge = kv.bridge
  if (bridge === undefined) return
  const base = `/sdn/zones/localnetwork/${bridge}`
  if (kv.tag) a.check(actor, `${base}/${kv.tag}`, ['SDN.Use'])
  if (kv.trunks) {
    const tags = new Set<number>()
    for (const t of kv.trunks.split(';')) {
      const [lo, hi] = t.split('-').map(Number) as [number, number | undefined]
      if (hi !== undefined && hi > lo) for (let x = lo; x <= hi; x++) tags.add(x)
      else tags.add(lo)
    }
    for (const t of [...tags].map(String).sort()) a.check(actor, `${base}/${t}`, ['SDN.Use'])
  }
  if (!kv.tag && !kv.trunks) a.check(actor, base, ['SDN.Use'])
}

const isCloudinit = (file: string): boolean =>
  file === 'cloudinit' || /:(?:.*\/)?vm-\d+-cloudinit(?:\.\w+)?$/.test(file) || file.endsWith(':cloudinit')

/** qemu-server $check_storage_access over the drives of a request */
function qemuStorageAccess(a: AccessState, actor: string, vmid: number, params: Record<string, unknown>): void {
  for (const k of Object.keys(params).sort()) {
    if (!QEMU_DRIVE_RE.test(k)) continue
    const { head, kv } = props(String(params[k]))
    const file = kv.file ?? head
    const cdrom = kv.media === 'cdrom'
    if (!file || file === 'none' || isCloudinit(file)) {
      // nothing to check
    } else if (cdrom && file === 'cdrom') {
      a.check(actor, '/', ['Sys.Console'])
    } else if (!cdrom && NEW_DISK_RE.test(file)) {
      const sid = NEW_DISK_RE.exec(file)?.[1] ?? (typeof params.storage === 'string' ? params.storage : undefined)
      if (sid === undefined) throw new PveHttpError(500, 'no storage ID specified (and no default storage)')
      a.check(actor, `/storage/${sid}`, ['Datastore.AllocateSpace'])
    } else {
      checkVolumeAccess(a, actor, vmid, file)
    }
    const src = kv['import-from']
    if (src !== undefined) {
      const owner = /^[^/:\s]+:(?:\d+\/)?(?:vm|base)-(\d+)-/.exec(src)?.[1]
      if (owner !== undefined) a.check(actor, `/vms/${owner}`, ['VM.Clone'])
      else checkVolumeAccess(a, actor, vmid, src)
    }
  }
  if (typeof params.vmstatestorage === 'string')
    a.check(actor, `/storage/${params.vmstatestorage}`, ['Datastore.AllocateSpace'])
}

/** $check_vm_modify_config_perm for one option (drives, serial, usb, hostpci, tags are checked elsewhere) */
function qemuOptionPerm(a: AccessState, actor: string, vmid: number, opt: string): void {
  if (
    QEMU_DRIVE_RE.test(opt) ||
    opt === 'cdrom' ||
    /^(?:unused|serial|usb|hostpci|virtiofs)\d+$/.test(opt) ||
    opt === 'tags'
  )
    return
  if (CPU.has(opt) || /^numa\d+$/.test(opt)) vmCheck(a, actor, vmid, ['VM.Config.CPU'])
  else if (MEMORY.has(opt)) vmCheck(a, actor, vmid, ['VM.Config.Memory'])
  else if (HWTYPE.has(opt)) vmCheck(a, actor, vmid, ['VM.Config.HWType'])
  else if (GENERAL.has(opt)) {
    vmCheck(a, actor, vmid, ['VM.Config.Options'])
    // startup changes host behaviour (the boot order of the node)
    if (opt === 'startup') a.check(actor, '/', ['Sys.Modify'])
  } else if (opt === 'freeze') vmCheck(a, actor, vmid, ['VM.PowerMgmt'])
  else if (DISKOPT.has(opt)) vmCheck(a, actor, vmid, ['VM.Config.Disk'])
  else if (/^net\d+$/.test(opt) || opt === 'running-nets-host-mtu') vmCheck(a, actor, vmid, ['VM.Config.Network'])
  else if (CLOUDINIT.has(opt) || /^ipconfig\d+$/.test(opt))
    vmCheck(a, actor, vmid, ['VM.Config.Cloudinit', 'VM.Config.Network'], true)
  else if (opt === 'vmstate') vmCheck(a, actor, vmid, ['VM.Config.Disk', 'VM.PowerMgmt'])
  // anything else is root-only, answered by root-only.ts before this runs
}

/** the device checks of create (check_vm_create_serial/usb/hostpci_perm) and of update for new values */
function qemuDevicePerm(a: AccessState, actor: string, vmid: number, opt: string, value: string): void {
  if (/^serial\d+$/.test(opt) && value === 'socket') vmCheck(a, actor, vmid, ['VM.Config.HWType'])
  if (/^usb\d+$/.test(opt)) {
    vmCheck(a, actor, vmid, ['VM.Config.HWType'])
    const m = props(value).kv.mapping
    if (m !== undefined) a.check(actor, `/mapping/usb/${m}`, ['Mapping.Use'])
  }
  if (/^hostpci\d+$/.test(opt)) {
    const m = props(value).kv.mapping
    if (m !== undefined) {
      a.check(actor, `/mapping/pci/${m}`, ['Mapping.Use'])
      vmCheck(a, actor, vmid, ['VM.Config.HWType'])
    }
  }
}

/** update_vm_api's $check_drive_perms */
function qemuDrivePerm(a: AccessState, actor: string, vmid: number, value: string): void {
  const { head, kv } = props(value)
  const file = kv.file ?? head
  if (isCloudinit(file)) vmCheck(a, actor, vmid, ['VM.Config.Cloudinit', 'VM.Config.CDROM'])
  else if (kv.media === 'cdrom' || file === 'cdrom' || file === 'none') vmCheck(a, actor, vmid, ['VM.Config.CDROM'])
  else vmCheck(a, actor, vmid, ['VM.Config.Disk'])
}

function lxcCheck(
  a: AccessState,
  actor: string,
  vmid: number,
  opt: string,
  value: string | undefined,
  old: Record<string, string> | undefined,
  del: boolean,
): void {
  if (opt === 'cores' || opt === 'cpuunits' || opt === 'cpulimit') vmCheck(a, actor, vmid, ['VM.Config.CPU'])
  else if (opt === 'rootfs' || /^mp\d+$/.test(opt)) {
    vmCheck(a, actor, vmid, ['VM.Config.Disk'])
    if (del || value === undefined) return
    const { head, kv } = props(value)
    const vol = kv.volume ?? head
    const nd = NEW_DISK_RE.exec(vol)
    if (nd) a.check(actor, `/storage/${nd[1] ?? ''}`, ['Datastore.AllocateSpace'])
    else checkVolumeAccess(a, actor, vmid, vol)
  } else if (opt === 'memory' || opt === 'swap') vmCheck(a, actor, vmid, ['VM.Config.Memory'])
  else if (/^net\d+$/.test(opt)) {
    vmCheck(a, actor, vmid, ['VM.Config.Network'])
    checkBridge(a, actor, old?.[opt])
    if (!del) checkBridge(a, actor, value)
  } else if (opt === 'nameserver' || opt === 'searchdomain' || opt === 'hostname')
    vmCheck(a, actor, vmid, ['VM.Config.Network'])
  else if (opt === 'features') {
    // only nesting gets here (other flags are root-only): it needs VM.Allocate
    vmCheck(a, actor, vmid, ['VM.Allocate'])
  } else if (opt === 'tags' || /^dev\d+$/.test(opt) || opt === 'hookscript') {
    // tags: user-tag-access 'free' (the default) needs only the route's privilege; devices and hookscript are root-only
  } else vmCheck(a, actor, vmid, ['VM.Config.Options'])
}

export interface GuestPermInput {
  method: string
  template: string
  params: Record<string, unknown>
  actor: string
  currentConfig?: (vmid: number) => Record<string, string> | undefined
}

/** the 403 PVE answers for a missing privilege on a guest create/update/clone/resize, or undefined */
export function guestPrivilegeViolation(access: AccessState, input: GuestPermInput): PveHttpError | undefined {
  const { method, template, params, actor } = input
  const creates = method === 'POST' && (template === '/nodes/{node}/qemu' || template === '/nodes/{node}/lxc')
  const a = creates ? withPool(access, Number(params.vmid), params.pool) : access
  if (actor === 'root@pam') return undefined
  const vmid = Number(params.vmid)
  const deletes =
    typeof params.delete === 'string'
      ? params.delete
          .split(/[,;\s]+/)
          .filter(Boolean)
          .map((d) => (d === 'cdrom' ? 'ide2' : d))
      : []
  try {
    if (template === '/nodes/{node}/qemu' && method === 'POST') {
      if (typeof params.storage === 'string') a.check(actor, `/storage/${params.storage}`, ['Datastore.AllocateSpace'])
      if (params['ha-managed'] === true) a.check(actor, '/', ['Sys.Console'])
      if (params.start === true) vmCheck(a, actor, vmid, ['VM.PowerMgmt'])
      if (!a.check(actor, `/vms/${vmid}`, ['VM.Allocate'], true)) throw permError()
      const keys = Object.keys(params)
        .filter((k) => !QEMU_META.has(k))
        .sort()
      qemuStorageAccess(a, actor, vmid, params)
      for (const k of keys) qemuOptionPerm(a, actor, vmid, k)
      for (const k of keys) qemuDevicePerm(a, actor, vmid, k, String(params[k]))
      for (const k of keys) if (/^net\d+$/.test(k)) checkBridge(a, actor, String(params[k]))
      return undefined
    }
    if (template === '/nodes/{node}/qemu/{vmid}/config' && (method === 'PUT' || method === 'POST')) {
      const keys = Object.keys(params)
        .filter((k) => !QEMU_META.has(k))
        .sort()
      for (const k of deletes) qemuOptionPerm(a, actor, vmid, k)
      for (const k of keys) qemuOptionPerm(a, actor, vmid, k)
      qemuStorageAccess(a, actor, vmid, params)
      for (const k of keys) if (/^net\d+$/.test(k)) checkBridge(a, actor, String(params[k]))
      const old = input.currentConfig?.(vmid) ?? {}
      for (const k of deletes) {
        const val = old[k]
        if (val === undefined) continue
        if (QEMU_DRIVE_RE.test(k)) qemuDrivePerm(a, actor, vmid, val)
        else if (/^unused\d+$/.test(k)) vmCheck(a, actor, vmid, ['VM.Config.Disk'])
        else if (/^net\d+$/.test(k)) checkBridge(a, actor, val)
        else qemuDevicePerm(a, actor, vmid, k, val)
      }
      for (const k of keys) {
        const val = String(params[k])
        if (QEMU_DRIVE_RE.test(k)) {
          if (old[k] !== undefined) qemuDrivePerm(a, actor, vmid, old[k])
          qemuDrivePerm(a, actor, vmid, val)
        } else if (/^net\d+$/.test(k)) checkBridge(a, actor, old[k])
        else {
          if (old[k] !== undefined) qemuDevicePerm(a, actor, vmid, k, old[k])
          qemuDevicePerm(a, actor, vmid, k, val)
        }
      }
      return undefined
    }
    if (template === '/nodes/{node}/lxc' && method === 'POST') {
      if (params.unprivileged === false) a.check(actor, '/', ['Sys.Modify'])
      if (params['ha-managed'] === true) a.check(actor, '/', ['Sys.Console'])
      if (!a.check(actor, `/vms/${vmid}`, ['VM.Allocate'], true)) throw permError()
      for (const k of Object.keys(params)
        .filter((x) => !LXC_CREATE_META.has(x))
        .sort())
        lxcCheck(a, actor, vmid, k, String(params[k]), undefined, false)
      if (typeof params.ostemplate === 'string') checkVolumeAccess(a, actor, vmid, params.ostemplate)
      // the default storage is only used (and checked) when no rootfs is given
      if (params.rootfs === undefined)
        a.check(actor, `/storage/${typeof params.storage === 'string' ? params.storage : 'local'}`, [
          'Datastore.AllocateSpace',
        ])
      return undefined
    }
    if (template === '/nodes/{node}/lxc/{vmid}/config' && method === 'PUT') {
      const old = input.currentConfig?.(vmid)
      for (const k of Object.keys(params)
        .filter((x) => !LXC_UPDATE_META.has(x))
        .sort())
        lxcCheck(a, actor, vmid, k, String(params[k]), old, false)
      for (const k of deletes) lxcCheck(a, actor, vmid, k, undefined, old, true)
      return undefined
    }
    if (/^\/nodes\/\{node\}\/(?:qemu|lxc)\/\{vmid\}\/clone$/.test(template) && method === 'POST') {
      if (typeof params.storage === 'string') a.check(actor, `/storage/${params.storage}`, ['Datastore.AllocateSpace'])
      const old = input.currentConfig?.(vmid) ?? {}
      for (const k of Object.keys(old).sort()) if (/^net\d+$/.test(k)) checkBridge(a, actor, old[k])
      return undefined
    }
    if (
      /^\/nodes\/\{node\}\/(?:qemu\/\{vmid\}\/move_disk|lxc\/\{vmid\}\/move_volume)$/.test(template) &&
      method === 'POST'
    ) {
      // move_vm_disk / move_volume: to a storage, Datastore.AllocateSpace there; to another guest, VM.Config.Disk
      // on it and Datastore.AllocateSpace on the volume's storage (PVE checks that one after its own checks)
      if (typeof params.storage === 'string') a.check(actor, `/storage/${params.storage}`, ['Datastore.AllocateSpace'])
      else if (params['target-vmid'] !== undefined) {
        a.check(actor, `/vms/${String(params['target-vmid'])}`, ['VM.Config.Disk'])
        const key = String(params.disk ?? params.volume ?? '')
        const value = input.currentConfig?.(vmid)?.[key]
        const sid = value ? /^(?:volume=|file=)?([^/:\s,]+):/.exec(value)?.[1] : undefined
        if (sid !== undefined) a.check(actor, `/storage/${sid}`, ['Datastore.AllocateSpace'])
      }
      return undefined
    }
    if (/^\/nodes\/\{node\}\/(?:qemu|lxc)\/\{vmid\}\/resize$/.test(template) && method === 'PUT') {
      const disk = typeof params.disk === 'string' ? input.currentConfig?.(vmid)?.[params.disk] : undefined
      const sid = disk ? /^(?:volume=|file=)?([^/:\s,]+):/.exec(disk)?.[1] : undefined
      if (sid !== undefined) a.check(actor, `/storage/${sid}`, ['Datastore.AllocateSpace'])
      return undefined
    }
  } catch (err) {
    if (err instanceof PveHttpError) return err
    throw err
  }
  return undefined
}
