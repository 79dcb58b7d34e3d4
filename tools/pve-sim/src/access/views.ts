/**
 * What handlers check in code for reads and single objects, and how lists are cut to what the caller may
 * see (never a 403): pve-manager API2/Cluster.pm `resources` (VM.Audit per guest, Datastore.Audit per
 * storage), qemu-server/pve-container `vmlist` (VM.Audit), pve-storage API2/Storage/Status.pm `index`
 * (Datastore.Audit or AllocateSpace) and Content.pm `index` (`check_volume_access` per volume), pve-manager
 * API2/Tasks.pm (own tasks, or Sys.Audit / Sys.Modify on the node).
 */
import { PveHttpError } from '../http/types.js'
import { WithTotal } from '../api/envelope.js'
import { checkVolumeAccess } from './guest-perms.js'
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
      if (item.type === 'qemu' || item.type === 'lxc')
        return a.check(actor, `/vms/${String(item.vmid)}`, ['VM.Audit'], true)
      if (item.type === 'storage') return a.check(actor, `/storage/${String(item.storage)}`, ['Datastore.Audit'], true)
      if (item.type === 'pool') return a.check(actor, `/pool/${String(item.pool)}`, ['Pool.Audit'], true)
      if (item.type === 'sdn') return a.check(actor, `/sdn/zones/${String(item.sdn)}`, ['SDN.Audit'], true)
      return true
    case '/nodes/{node}/qemu':
    case '/nodes/{node}/lxc':
      return a.check(actor, `/vms/${String(item.vmid)}`, ['VM.Audit'], true)
    case '/storage': // pve-storage PVE::API2::Storage::Config index
    case '/nodes/{node}/storage':
      return a.checkAny(actor, `/storage/${String(item.storage)}`, ['Datastore.Audit', 'Datastore.AllocateSpace'], true)
    case '/nodes/{node}/storage/{storage}/content':
      return canSeeVolume(a, actor, String(item.volid))
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

const FILTERED = new Set([
  '/cluster/resources',
  '/storage',
  '/nodes/{node}/qemu',
  '/nodes/{node}/lxc',
  '/nodes/{node}/storage',
  '/nodes/{node}/storage/{storage}/content',
  '/nodes/{node}/tasks',
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
