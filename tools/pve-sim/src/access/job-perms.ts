/**
 * The privilege checks the job handlers make in code: pve-manager PVE::API2::Backup (create_job, update_job:
 * assert_param_permission_common / _create / _update and `VM.Backup` on a job's pool) and, on 9.x,
 * PVE::API2::ReplicationConfig (`VM.Replicate` on the job's guest for create and delete, `VM.Audit` for read).
 * root@pam passes them all; its tokens do not. A job the handler will not find is left to the handler's own error.
 */
import { PveHttpError } from '../model/errors.js'
import { AccessState } from './state.js'

type Params = Record<string, unknown>

const given = (v: unknown): boolean => v !== undefined && v !== null
const truthy = (v: unknown): boolean => given(v) && v !== false && v !== 0 && v !== '' && v !== '0'

/** PVE::VZDump get_storage_param: none with a dumpdir, else the storage or `local` */
function storageParam(p: Params): string | undefined {
  if (truthy(p.dumpdir)) return undefined
  return truthy(p.storage) ? String(p.storage) : 'local'
}

/** the `storage` of a backup-fleecing property string (`[enabled=]<1|0>[,storage=<id>]`) */
function fleecingStorage(v: unknown): string | undefined {
  for (const part of String(v).split(',')) {
    const m = /^storage=(.+)$/.exec(part.trim())
    if (m) return m[1]
  }
  return undefined
}

/** assert_param_permission_common over set (or, with `isDelete`, deleted) options */
function common(a: AccessState, actor: string, p: Params, isDelete: boolean): void {
  for (const key of ['tmpdir', 'dumpdir', 'script', 'job-id']) {
    if (key in p)
      throw new PveHttpError(400, 'Parameter verification failed.', { [key]: 'Only root may set this option.' })
  }
  if (['bwlimit', 'ionice', 'performance'].some((k) => given(p[k]))) a.check(actor, '/', ['Sys.Modify'])
  if (truthy(p.fleecing) && !isDelete) {
    const storage = fleecingStorage(p.fleecing)
    if (storage) a.check(actor, `/storage/${storage}`, ['Datastore.AllocateSpace'])
  }
}

/** `if (my $pool = $param->{pool})`: VM.Backup on the pool, once check_pool_exist (the model's) found it */
function poolCheck(a: AccessState, actor: string, p: Params): void {
  if (!truthy(p.pool)) return
  const pool = String(p.pool)
  if (a.poolMembers().some((m) => m.poolid === pool)) a.check(actor, `/pool/${pool}`, ['VM.Backup'])
}

/** create_job: assert_param_permission_create, then the pool */
export function backupCreateCheck(a: AccessState, actor: string, params: Params): void {
  common(a, actor, params, false)
  const storage = storageParam(params)
  if (storage) a.check(actor, `/storage/${storage}`, ['Datastore.Allocate'])
  poolCheck(a, actor, params)
}

/**
 * update_job: assert_param_permission_update without the job (set and deleted options; deleting `storage` falls
 * back to `local`), the pool, then again with the job as stored: a `dumpdir` job is root@pam's, otherwise its
 * storage needs Datastore.Allocate
 */
export function backupUpdateCheck(a: AccessState, actor: string, params: Params): void {
  const { id, delete: del, ...update } = params
  const deleted: Params = Object.fromEntries(
    String(del ?? '')
      .split(/[,;\s]+/)
      .filter((k) => k !== '')
      .map((k) => [k, 1]),
  )
  common(a, actor, update, false)
  common(a, actor, deleted, true)
  if (truthy(update.storage)) a.check(actor, `/storage/${String(update.storage)}`, ['Datastore.Allocate'])
  else if (deleted.storage) a.check(actor, '/storage/local', ['Datastore.Allocate'])
  poolCheck(a, actor, update)
  const current = a.backupJob(String(id))
  if (!current) return
  if (current.dumpdir) throw new PveHttpError(500, "only root@pam may edit jobs with a 'dumpdir' option.")
  const storage = storageParam(current)
  if (storage) a.check(actor, `/storage/${storage}`, ['Datastore.Allocate'])
}

/** the guest of a replication job id (`<guest>-<jobnum>`) */
const guestOf = (id: unknown): string => String(Number(/^(\d+)-/.exec(String(id))?.[1] ?? 0))

/** ReplicationConfig read: VM.Audit on the job's guest, once the job is found */
export function replicationReadCheck(a: AccessState, actor: string, params: Params): void {
  if (a.replicationJobExists(String(params.id))) a.check(actor, `/vms/${guestOf(params.id)}`, ['VM.Audit'])
}

/** ReplicationConfig create and delete (9.x, close #2809): VM.Replicate on the guest the id names */
export function replicationWriteCheck(a: AccessState, actor: string, params: Params): void {
  if (a.version === '9.1') a.check(actor, `/vms/${guestOf(params.id)}`, ['VM.Replicate'])
}
