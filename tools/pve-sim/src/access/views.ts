/**
 * What handlers check in code for reads and single objects, and how lists are cut to what the caller may
 * see (never a 403): pve-manager API2/Cluster.pm `resources` (VM.Audit per guest, Datastore.Audit per
 * storage), qemu-server/pve-container `vmlist` (VM.Audit), pve-storage API2/Storage/Status.pm `index`
 * (Datastore.Audit or AllocateSpace) and Content.pm `index` (`check_volume_access` per volume), pve-manager
 * API2/Tasks.pm (own tasks, or Sys.Audit / Sys.Modify on the node), pve-manager API2/Pool.pm (index: Pool.Audit per
 * pool; update_pool: check_perm_modify per member, Pool.Allocate on the pool a guest is moved from),
 * pve-access-control API2/Group.pm index (User.Modify, Sys.Audit or Group.Allocate per group), pve-manager
 * API2/ReplicationConfig.pm index (VM.Audit per guest), the job handlers' own checks (job-perms.ts) and qemu-server /
 * pve-container migrate_vm's storage map checks.
 */
import { PveHttpError } from '../model/errors.js'
import { WithTotal } from '../api/envelope.js'
import { parseIdmap, type IdMap } from '../apidoc/formats.js'
import { checkVolumeAccess } from './guest-perms.js'
import { backupCreateCheck, backupUpdateCheck, replicationReadCheck, replicationWriteCheck } from './job-perms.js'
import { AccessState, splitTokenId } from './state.js'

type Item = Record<string, unknown>

/** Tasks.pm $check_task_user: the task's user or token, or (for a token's task) its user */
function ownsTask(actor: string, taskUser: string): boolean {
  return actor === taskUser || splitTokenId(taskUser)?.[0] === actor
}

function taskUserOf(upid: string): string {
  // UPID:node:pid:pstart:starttime:type:id:user:
  return upid.split(':')[7] ?? ''
}

/** the 403 (or 500) a handler raises before it does anything, or undefined */
export function handlerCheck(
  a: AccessState,
  actor: string,
  method: string,
  template: string,
  params: Item,
): PveHttpError | undefined {
  if (actor === 'root@pam') return undefined
  try {
    const node = String(params.node ?? '')
    if (template === '/nodes/{node}/tasks/{upid}/status' || template === '/nodes/{node}/tasks/{upid}/log') {
      if (!ownsTask(actor, taskUserOf(String(params.upid ?? '')))) a.check(actor, `/nodes/${node}`, ['Sys.Audit'])
    } else if (template === '/nodes/{node}/tasks/{upid}' && method === 'DELETE') {
      if (!ownsTask(actor, taskUserOf(String(params.upid ?? '')))) a.check(actor, `/nodes/${node}`, ['Sys.Modify'])
    } else if ((template === '/pools' || template === '/pools/{poolid}') && method === 'PUT') {
      // API2::Pool update_pool, guest by guest: check_perm_modify, then for a guest moved from another pool
      // (allow-move) Pool.Allocate on that pool too; the first guest the model refuses ends the checks there,
      // as PVE dies on it before looking at the next. Then check_perm_modify on every storage.
      const list = (v: unknown) => (typeof v === 'string' ? v.split(/[,;\s]+/).filter((x) => x !== '') : [])
      const flag = (v: unknown) => v === true || v === 1 || v === '1'
      const poolid = String(params.poolid ?? '')
      const poolOf = new Map(a.poolMembers().flatMap((p) => p.vms.map((vmid) => [vmid, p.poolid] as const)))
      for (const vmid of list(params.vms)) {
        a.checkPermModify(actor, `/vms/${vmid}`)
        const existing = poolOf.get(Number(vmid))
        if (flag(params.delete)) {
          if (existing !== poolid) return undefined
        } else if (existing !== undefined) {
          if (existing === poolid || !flag(params['allow-move'])) return undefined
          a.check(actor, `/pool/${existing}`, ['Pool.Allocate'])
        }
      }
      for (const sid of list(params.storage)) a.checkPermModify(actor, `/storage/${sid}`)
    } else if (
      (template === '/nodes/{node}/qemu/{vmid}/migrate' || template === '/nodes/{node}/lxc/{vmid}/migrate') &&
      method === 'POST'
    ) {
      migrateStorageCheck(a, actor, params)
    } else if (template === '/cluster/backup' && method === 'POST') {
      backupCreateCheck(a, actor, params)
    } else if (template === '/cluster/backup/{id}' && method === 'PUT') {
      backupUpdateCheck(a, actor, params)
    } else if (template === '/cluster/replication/{id}' && method === 'GET') {
      replicationReadCheck(a, actor, params)
    } else if (
      (template === '/cluster/replication' && method === 'POST') ||
      (template === '/cluster/replication/{id}' && method === 'DELETE')
    ) {
      replicationWriteCheck(a, actor, params)
    } else if (template === '/nodes/{node}/storage/{storage}/content/{volume}') {
      const volume = String(params.volume ?? '')
      const volid = volume.includes(':') ? volume : `${String(params.storage ?? '')}:${volume}`
      if (method === 'GET') checkVolumeAccess(a, actor, undefined, volid)
      else if (method === 'DELETE') {
        const sid = volid.slice(0, volid.indexOf(':'))
        const backupOwner = /:backup\/vzdump-(?:qemu|lxc|openvz)-(\d+)-/.exec(volid)?.[1]
        if (!(
          backupOwner !== undefined &&
          a.check(actor, `/storage/${sid}`, ['Datastore.AllocateSpace'], true) &&
          a.check(actor, `/vms/${backupOwner}`, ['VM.Backup'], true)
        )) {
          a.check(actor, `/storage/${sid}`, ['Datastore.Allocate'])
        }
      }
    }
  } catch (err) {
    if (err instanceof PveHttpError) return err
    throw err
  }
  return undefined
}

/**
 * migrate_vm (qemu-server `targetstorage`, pve-container `target-storage`): a map that is not the identity needs
 * VM.Config.Disk on the guest, and every storage it sends volumes to Datastore.AllocateSpace
 * ($check_storage_access_migrate); a map that does not parse is the handler's 400
 */
function migrateStorageCheck(a: AccessState, actor: string, params: Item): void {
  const text = params.targetstorage ?? params['target-storage']
  let map: IdMap | undefined
  try {
    map = parseIdmap(String(text ?? ''), 'pve-storage-id')
  } catch {
    return
  }
  if (!map) return
  if (!map.identity) a.check(actor, `/vms/${String(params.vmid ?? '')}`, ['VM.Config.Disk'])
  const targets = new Set([...map.entries.values(), ...(map.default !== undefined ? [map.default] : [])])
  for (const sid of targets) a.check(actor, `/storage/${sid}`, ['Datastore.AllocateSpace'])
}

function canSeeVolume(a: AccessState, actor: string, volid: string): boolean {
  try {
    checkVolumeAccess(a, actor, undefined, volid)
    return true
  } catch (err) {
    if (err instanceof PveHttpError) return false
    throw err
  }
}

function keep(a: AccessState, actor: string, template: string, params: Item, item: Item): boolean {
  switch (template) {
    case '/cluster/resources':
      if (item.type === 'qemu' || item.type === 'lxc') {
        if (!a.check(actor, `/vms/${String(item.vmid)}`, ['VM.Audit'], true)) return false
        // a guest's pool shows only to who may audit the pool
        if (typeof item.pool === 'string' && !a.check(actor, `/pool/${item.pool}`, ['Pool.Audit'], true))
          delete item.pool
        return true
      }
      if (item.type === 'storage') return a.check(actor, `/storage/${String(item.storage)}`, ['Datastore.Audit'], true)
      if (item.type === 'pool') return a.check(actor, `/pool/${String(item.pool)}`, ['Pool.Audit'], true)
      if (item.type === 'sdn') return a.check(actor, `/sdn/zones/${String(item.sdn)}`, ['SDN.Audit'], true)
      if (item.type === 'node') hideNodeStats(a, actor, item)
      return true
    case '/nodes':
      hideNodeStats(a, actor, item)
      return true
    case '/nodes/{node}/qemu':
    case '/nodes/{node}/lxc':
      return a.check(actor, `/vms/${String(item.vmid)}`, ['VM.Audit'], true)
    case '/storage': // pve-storage PVE::API2::Storage::Config index
    case '/nodes/{node}/storage':
      return a.checkAny(actor, `/storage/${String(item.storage)}`, ['Datastore.Audit', 'Datastore.AllocateSpace'], true)
    case '/nodes/{node}/storage/{storage}/content':
      return canSeeVolume(a, actor, String(item.volid))
    case '/pools': // API2::Pool index without poolid: the pools the caller may audit
      return params.poolid !== undefined || a.check(actor, `/pool/${String(item.poolid)}`, ['Pool.Audit'], true)
    case '/access/groups':
      return a.checkAny(
        actor,
        `/access/groups/${String(item.groupid)}`,
        ['User.Modify', 'Sys.Audit', 'Group.Allocate'],
        true,
      )
    case '/cluster/replication':
      return a.check(actor, `/vms/${String(item.guest)}`, ['VM.Audit'], true)
    case '/nodes/{node}/tasks':
      // the UPID carries the full actor (user!token); the item names them apart
      return (
        ownsTask(actor, taskUserOf(String(item.upid))) ||
        a.check(actor, `/nodes/${String(params.node)}`, ['Sys.Audit'], true)
      )
    default:
      return true
  }
}

/** extract_node_stats with $exclude_stats: without Sys.Audit on the node, a node is listed without its figures */
function hideNodeStats(a: AccessState, actor: string, item: Item): void {
  if (a.check(actor, `/nodes/${String(item.node)}`, ['Sys.Audit'], true)) return
  for (const k of ['uptime', 'cpu', 'mem', 'disk', 'maxcpu', 'maxmem', 'maxdisk']) delete item[k]
}

const FILTERED = new Set([
  '/nodes',
  '/cluster/resources',
  '/storage',
  '/nodes/{node}/qemu',
  '/nodes/{node}/lxc',
  '/nodes/{node}/storage',
  '/nodes/{node}/storage/{storage}/content',
  '/nodes/{node}/tasks',
  '/pools',
  '/access/groups',
  '/cluster/replication',
])

/** a GET list as the caller may see it */
export function filterList(
  a: AccessState,
  actor: string,
  method: string,
  template: string,
  params: Item,
  result: unknown,
): unknown {
  if (actor === 'root@pam' || method !== 'GET' || !FILTERED.has(template)) return result
  const cut = (v: unknown): unknown =>
    Array.isArray(v) ? v.filter((item: Item) => keep(a, actor, template, params, item)) : v
  return result instanceof WithTotal ? new WithTotal(cut(result.data), result.total) : cut(result)
}
