/**
 * What a plan needs from the API token before anything is written, and what is left of the plan once the
 * token's privileges are known (docs/getting-started.md "A least-privilege token"). The needs follow PVE's own
 * checks: each route's `permissions` entry in the API schema, plus what qemu-server
 * (`$check_vm_modify_config_perm`: option groups, `startup` also Sys.Modify on `/`; `$check_storage_access`;
 * `check_bridge_access`), pve-container (`check_ct_modify_config_perm`, privileged containers) and pve-storage
 * (`check_volume_access`) check in code. Options PVE reserves for root@pam cannot be granted to any token.
 */
import { splitList } from '@proxops/pve-client/wire'
import { readDrive } from './kinds/guest/drives.js'
import { parsePS } from './kinds/guest/fields.js'
import { volumeKindOf } from './kinds/guest/volumes.js'
import { compareAnomalies, compareSkips, summaryOf } from './plan/order.js'
import type { Action, Anomaly, Plan, PlanParams, PveRequest, Skip } from './plan-types.js'

/** One way to satisfy a need: every privilege in `privs` on `path`. */
export interface Grant {
  path: string
  privs: readonly string[]
}

export type PrivilegeNeed =
  | {
      /** the action that needs it */
      action: string
      /** the PVE config key (or request parameter) it is for; absent for the call itself */
      key?: string
      /** satisfied when any one alternative is */
      anyOf: readonly Grant[]
    }
  | { action: string; key: string; rootOnly: string }

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

const one = (path: string, ...privs: string[]): Grant[] => [{ path, privs }]
const anyOf = (path: string, ...privs: string[]): Grant[] => privs.map((p) => ({ path, privs: [p] }))

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

const str = (params: PlanParams, k: string): string | undefined =>
  typeof params[k] === 'string' ? params[k] : typeof params[k] === 'number' ? String(params[k]) : undefined
const deletes = (params: PlanParams): string[] => splitList(str(params, 'delete'))

function requestNeeds(r: PveRequest, action: Action): { key?: string; need: Grant[] | string }[] {
  const out: { key?: string; need: Grant[] | string }[] = []
  const push = (key: string | undefined, list: (Grant[] | string)[]): void => {
    for (const need of list) out.push(key === undefined ? { need } : { key, need })
  }
  switch (r.call) {
    case 'createGuest': {
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
    }
    case 'updateConfig': {
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
        push(
          k,
          r.guest === 'qemu' ? qemuKey(k, undefined, r.vmid, false, undefined) : lxcKey(k, undefined, r.vmid, true),
        )
      return out
    }
    case 'resizeDisk':
      return [{ key: r.disk, need: one(`/vms/${r.vmid}`, 'VM.Config.Disk') }]
    case 'moveDisk':
      // qemu-server move_vm_disk / pve-container move_volume: VM.Config.Disk on the guest, and
      // Datastore.AllocateSpace on the target storage
      return [
        { key: r.disk, need: one(`/vms/${r.vmid}`, 'VM.Config.Disk') },
        { key: r.disk, need: one(`/storage/${r.storage}`, 'Datastore.AllocateSpace') },
      ]
    case 'cloneGuest': {
      const newid = Number(r.params.newid)
      push(undefined, [one(`/vms/${r.vmid}`, 'VM.Clone'), one(`/vms/${newid}`, 'VM.Allocate')])
      const storage = str(r.params, 'storage')
      if (storage !== undefined) push('storage', [one(`/storage/${storage}`, 'Datastore.AllocateSpace')])
      return out
    }
    case 'start':
    case 'stop':
    case 'shutdown':
    case 'reboot':
      return [{ need: one(`/vms/${r.vmid}`, 'VM.PowerMgmt') }]
    case 'markTemplate':
    case 'deleteGuest':
      return [{ need: one(`/vms/${r.vmid}`, 'VM.Allocate') }]
    case 'snapshot':
      // qemu-server / pve-container snapshot and delsnapshot: VM.Snapshot on /vms/<vmid>; the list needs VM.Audit
      return [{ need: one(`/vms/${r.vmid}`, 'VM.Snapshot') }, { need: one(`/vms/${r.vmid}`, 'VM.Audit') }]
    case 'firewall':
      // pve-firewall rules_modify_permissions / set_options for a guest: VM.Config.Network on /vms/<vmid>
      return [{ need: one(`/vms/${r.vmid}`, 'VM.Config.Network') }]
    case 'haWrite':
      // PVE::API2::HA::Resources / Groups / Rules: every write checks Sys.Console on /
      return [{ need: one('/', 'Sys.Console') }]
    case 'createPool':
    case 'deletePool':
      // PVE::API2::Pool create_pool / delete_pool: Pool.Allocate on the pool's own path
      return [{ need: one(`/pool/${r.call === 'deletePool' ? r.poolid : String(r.params.poolid)}`, 'Pool.Allocate') }]
    case 'updatePool': {
      // update_pool: Pool.Allocate on the pool, check_perm_modify on every member it adds or removes, and
      // Pool.Allocate on the pool a guest leaves with allow-move (the plan's `spec.pool` diff names it)
      push(undefined, [one(`/pool/${String(r.params.poolid)}`, 'Pool.Allocate')])
      for (const vmid of splitList(str(r.params, 'vms')))
        push('vms', [anyOf(`/vms/${vmid}`, 'Permissions.Modify', 'VM.Allocate')])
      const left = action.diffs.find((d) => d.field === 'spec.pool')?.before
      if (r.params['allow-move'] !== undefined && typeof left === 'string')
        push('allow-move', [one(`/pool/${left}`, 'Pool.Allocate')])
      return out
    }
    case 'downloadUrl':
      return [
        { need: one(`/storage/${r.storage}`, 'Datastore.AllocateTemplate') },
        {
          need: [
            { path: '/', privs: ['Sys.Audit', 'Sys.Modify'] },
            { path: `/nodes/${r.node}`, privs: ['Sys.AccessNetwork'] },
          ],
        },
      ]
    // PVE::API2::Backup: Sys.Modify on /, then (assert_param_permission_create/update) Datastore.Allocate on the
    // target storage and VM.Backup on a selected pool
    case 'createBackupJob':
    case 'updateBackupJob': {
      push(undefined, [one('/', 'Sys.Modify')])
      const storage = str(r.params, 'storage')
      if (storage !== undefined) push('storage', [one(`/storage/${storage}`, 'Datastore.Allocate')])
      const pool = str(r.params, 'pool')
      if (pool !== undefined) push('pool', [one(`/pool/${pool}`, 'VM.Backup')])
      return out
    }
    case 'deleteBackupJob':
      return [{ need: one('/', 'Sys.Modify') }]
    case 'migrate': {
      // qemu-server / pve-container migrate_vm: VM.Migrate on the guest, and with a storage map
      // (check_storage_access_migrate) Datastore.AllocateSpace on each target storage
      push(undefined, [one(`/vms/${r.vmid}`, 'VM.Migrate')])
      const map = str(r.params, r.guest === 'qemu' ? 'targetstorage' : 'target-storage')
      for (const pair of splitList(map)) {
        const to = pair.includes(':') ? pair.slice(pair.indexOf(':') + 1) : pair
        push('targetstorage', [one(`/storage/${to}`, 'Datastore.AllocateSpace')])
      }
      return out
    }
  }
}

/** Every privilege the plan's actions need, in plan order (pure). */
export function privilegeNeeds(plan: Plan): PrivilegeNeed[] {
  const out: PrivilegeNeed[] = []
  for (const a of plan.actions) {
    for (const r of a.requests) {
      for (const n of requestNeeds(r, a)) {
        if (typeof n.need === 'string') out.push({ action: a.id, key: n.key ?? r.call, rootOnly: n.need })
        else out.push({ action: a.id, ...(n.key !== undefined ? { key: n.key } : {}), anyOf: n.need })
      }
    }
  }
  return out
}

/** The ACL paths whose privileges decide the needs, sorted (one `GET /access/permissions?path=` each). */
export function neededPaths(needs: readonly PrivilegeNeed[]): string[] {
  const paths = new Set<string>()
  for (const n of needs) if ('anyOf' in n) for (const g of n.anyOf) paths.add(g.path)
  return [...paths].sort()
}

/** The built-in role that grants a privilege with the least else (none for the root-group Sys.* privileges). */
const GRANTING_ROLE: Readonly<Record<string, string>> = {
  'VM.Audit': 'PVEAuditor',
  'VM.PowerMgmt': 'PVEVMUser',
  'VM.Config.CDROM': 'PVEVMUser',
  'VM.Config.Cloudinit': 'PVEVMUser',
  'Datastore.AllocateSpace': 'PVEDatastoreUser',
  'Datastore.Audit': 'PVEAuditor',
  'Datastore.Allocate': 'PVEDatastoreAdmin',
  'Datastore.AllocateTemplate': 'PVEDatastoreAdmin',
  'SDN.Use': 'PVESDNUser',
  'Sys.Audit': 'PVEAuditor',
  'Mapping.Use': 'PVEMappingUser',
}
const roleFor = (priv: string): string | undefined =>
  GRANTING_ROLE[priv] ?? (priv.startsWith('VM.') ? 'PVEVMAdmin' : undefined)

/** the `pveum` command that grants `privs` on `path` to the token (and its user: a privsep token gets the intersection) */
export function pveumGrant(actor: string, path: string, privs: readonly string[]): string {
  const i = actor.lastIndexOf('!')
  const who = i > 0 ? `--users ${actor.slice(0, i)} --tokens '${actor}'` : `--users ${actor}`
  const roles = [...new Set(privs.map(roleFor))]
  if (roles.length === 1 && roles[0] !== undefined) return `pveum acl modify ${path} ${who} --roles ${roles[0]}`
  const role = `ProxOps-${privs.join('-')}`
  return `pveum role add ${role} --privs ${privs.join(',')} && pveum acl modify ${path} ${who} --roles ${role}`
}

/** privileges on a path: a set, or `all` (root@pam) */
export type Privileges = ReadonlyMap<string, ReadonlySet<string>>

const describeAction = (a: Action): string => `${a.type} of ${a.address}`

/**
 * The plan with every action whose privileges are missing taken out (and the actions that depend on it),
 * each missing privilege reported as a `missing-privilege` anomaly with the pveum line that grants it.
 * `actor`: the token id (`user@realm!name`) or, for a ticket, the user. root@pam itself may do everything.
 */
export function checkPrivileges(plan: Plan, needs: readonly PrivilegeNeed[], granted: Privileges, actor: string): Plan {
  if (actor === 'root@pam') return plan
  const byId = new Map(plan.actions.map((a) => [a.id, a]))
  const anomalies: Anomaly[] = []
  const blocked = new Set<string>()
  const seen = new Set<string>()
  const has = (g: Grant): boolean => g.privs.every((p) => granted.get(g.path)?.has(p) ?? false)
  for (const n of needs) {
    const a = byId.get(n.action)
    if (!a) continue
    const field = n.key === undefined ? undefined : (a.diffs.find((d) => d.key === n.key)?.field ?? n.key)
    let message: string
    if ('rootOnly' in n) {
      message = `${describeAction(a)}: ${n.rootOnly}; ${actor} cannot do it (PVE checks the caller is root@pam itself, which no API token is)`
    } else {
      if (n.anyOf.some(has)) continue
      const first = n.anyOf[0] as Grant
      const missing = first.privs.filter((p) => !(granted.get(first.path)?.has(p) ?? false))
      const alt =
        n.anyOf.length > 1
          ? ` (or ${n.anyOf
              .slice(1)
              .map((g) => `${g.privs.join('+')} on ${g.path}`)
              .join(', or ')})`
          : ''
      message = `${describeAction(a)}: ${actor} lacks ${missing.join(', ')} on ${first.path}${alt}${n.key !== undefined ? ` (for ${n.key})` : ''}; grant it with: ${pveumGrant(actor, first.path, missing)}`
    }
    blocked.add(a.id)
    if (seen.has(message)) continue
    seen.add(message)
    anomalies.push({
      code: 'missing-privilege',
      address: a.address,
      kind: a.kind,
      ...(field !== undefined ? { field } : {}),
      message,
    })
  }
  if (blocked.size === 0) return plan
  // dependants of a blocked action cannot succeed either: same object (dependsOn) or a prerequisite (requires)
  const skips: Skip[] = []
  for (let grew = true; grew;) {
    grew = false
    const blockedAddresses = new Set(plan.actions.filter((a) => blocked.has(a.id)).map((a) => a.address))
    for (const a of plan.actions) {
      if (blocked.has(a.id)) continue
      const cause = a.dependsOn.find((d) => blocked.has(d)) ?? a.requires.find((r) => blockedAddresses.has(r))
      if (cause === undefined) continue
      blocked.add(a.id)
      grew = true
      skips.push({
        code: 'missing-privilege',
        address: a.address,
        kind: a.kind,
        node: a.node,
        ...(a.vmid !== undefined ? { vmid: a.vmid } : {}),
        message: `${describeAction(a)} waits for ${cause}, which the token lacks privileges for`,
      })
    }
  }
  const actions = plan.actions.filter((a) => !blocked.has(a.id))
  const allAnomalies = [...plan.anomalies, ...anomalies].sort(compareAnomalies)
  const allSkips = [...plan.skips, ...skips].sort(compareSkips)
  return {
    ...plan,
    actions,
    anomalies: allAnomalies,
    skips: allSkips,
    summary: summaryOf(actions, allAnomalies, allSkips, plan.pending),
  }
}
