/**
 * PVE's privilege groups and the built-in roles derived from them, per version, as pve-access-control
 * `PVE::AccessControl` defines them (`$privgroups`, `create_roles`). PVE 8.4 ships pve-access-control 8.2,
 * whose VM group still has VM.Monitor and lacks VM.Replicate and the VM.GuestAgent.* privileges.
 */
import type { PveVersion } from '../apidoc/load.js'

interface PrivGroup {
  root: string[]
  admin: string[]
  user: string[]
  audit: string[]
}

function vmGroup(version: PveVersion): PrivGroup {
  if (version === '8.4') {
    return {
      root: [],
      admin: [
        'VM.Config.Disk',
        'VM.Config.CPU',
        'VM.Config.Memory',
        'VM.Config.Network',
        'VM.Config.HWType',
        'VM.Config.Options',
        'VM.Allocate',
        'VM.Clone',
        'VM.Migrate',
        'VM.Monitor',
        'VM.Snapshot',
        'VM.Snapshot.Rollback',
      ],
      user: ['VM.Config.CDROM', 'VM.Config.Cloudinit', 'VM.Console', 'VM.Backup', 'VM.PowerMgmt'],
      audit: ['VM.Audit'],
    }
  }
  return {
    root: [],
    admin: [
      'VM.Config.Disk',
      'VM.Config.CPU',
      'VM.Config.Memory',
      'VM.Config.Network',
      'VM.Config.HWType',
      'VM.Config.Options',
      'VM.Allocate',
      'VM.Clone',
      'VM.GuestAgent.Unrestricted',
      'VM.Migrate',
      'VM.Replicate',
      'VM.Snapshot',
      'VM.Snapshot.Rollback',
    ],
    user: [
      'VM.Config.CDROM',
      'VM.Config.Cloudinit',
      'VM.Console',
      'VM.Backup',
      'VM.GuestAgent.FileRead',
      'VM.GuestAgent.FileSystemMgmt',
      'VM.GuestAgent.FileWrite',
      'VM.PowerMgmt',
    ],
    audit: ['VM.Audit', 'VM.GuestAgent.Audit'],
  }
}

function privGroups(version: PveVersion): Record<string, PrivGroup> {
  return {
    VM: vmGroup(version),
    Sys: {
      root: ['Sys.PowerMgmt', 'Sys.Modify', 'Sys.Incoming', 'Sys.AccessNetwork'],
      admin: ['Sys.Console', 'Sys.Syslog'],
      user: [],
      audit: ['Sys.Audit'],
    },
    Datastore: {
      root: [],
      admin: ['Datastore.Allocate', 'Datastore.AllocateTemplate'],
      user: ['Datastore.AllocateSpace'],
      audit: ['Datastore.Audit'],
    },
    SDN: { root: [], admin: ['SDN.Allocate', 'SDN.Audit'], user: ['SDN.Use'], audit: ['SDN.Audit'] },
    User: {
      root: ['Realm.Allocate'],
      admin: ['User.Modify', 'Group.Allocate', 'Realm.AllocateUser'],
      user: [],
      audit: [],
    },
    Pool: { root: [], admin: ['Pool.Allocate'], user: ['Pool.Audit'], audit: ['Pool.Audit'] },
    Mapping: { root: [], admin: ['Mapping.Modify'], user: ['Mapping.Use'], audit: ['Mapping.Audit'] },
  }
}

export interface Privileges {
  /** every valid privilege name (Administrator holds all of them) */
  valid: ReadonlySet<string>
  /** the built-in ("special") roles: name -> privileges */
  builtinRoles: ReadonlyMap<string, ReadonlySet<string>>
}

const cache = new Map<PveVersion, Privileges>()

/** create_roles: PVE<cat>Admin, PVE<cat>User, PVEAdmin, PVEAuditor, PVETemplateUser, NoAccess, Administrator */
export function privilegesOf(version: PveVersion): Privileges {
  const hit = cache.get(version)
  if (hit) return hit
  const valid = new Set<string>(['Permissions.Modify'])
  const roles = new Map<string, Set<string>>()
  const add = (role: string, priv: string): void => {
    let set = roles.get(role)
    if (!set) roles.set(role, (set = new Set()))
    set.add(priv)
  }
  for (const [cat, g] of Object.entries(privGroups(version))) {
    for (const p of [...g.root, ...g.admin, ...g.user, ...g.audit]) valid.add(p)
    for (const p of [...g.admin, ...g.user, ...g.audit]) {
      add(`PVE${cat}Admin`, p)
      add('PVEAdmin', p)
    }
    if (g.user.length > 0) for (const p of [...g.user, ...g.audit]) add(`PVE${cat}User`, p)
    for (const p of g.audit) add('PVEAuditor', p)
  }
  // only Administrator, root@pam and PVEMappingAdmin may modify mappings
  roles.get('PVEAdmin')?.delete('Mapping.Modify')
  roles.set('PVETemplateUser', new Set(['VM.Clone', 'VM.Audit']))
  roles.set('NoAccess', new Set())
  roles.set('Administrator', valid)
  const out: Privileges = { valid, builtinRoles: roles }
  cache.set(version, out)
  return out
}
