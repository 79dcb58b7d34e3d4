import { createHash } from 'node:crypto'
import type { Cluster, Guest } from './cluster.js'
import { driveVolid, isCdrom, parseVolumeProps, volumeKindOf } from './disks.js'
import { fail400, fail500 } from './errors.js'
import { isLxcMountKey, isQemuVolumeKey } from './options.js'
import { splitVolid, volumeOwner } from './storage.js'

/**
 * Storage replication jobs (`/etc/pve/replication.cfg`), as far as a guest's destroy needs them: pve-guest-common
 * PVE::ReplicationConfig (the `local` plugin, check_for_existing_jobs, remove_vmid_jobs) behind pve-manager
 * PVE::API2::ReplicationConfig index, read, create and delete. No job ever replicates anything; a job marked for
 * removal (`remove_job`) leaves the config at the next run of pvescheduler's replication runner, which runs on
 * every full minute.
 */

export interface ReplicationJob {
  type: 'local'
  target: string
  guest: number
  jobnum: number
  /** set on create to the guest's node (`$param->{source} //= $source`) */
  source: string
  schedule?: string
  rate?: string
  comment?: string
  disable?: boolean
  remove_job?: 'local' | 'full'
}

/** the option keys in the order the section is written */
const OPTION_KEYS = ['comment', 'disable', 'rate', 'remove_job', 'schedule', 'source', 'target'] as const

/** parse_replication_job_id: `<guest>-<jobnum>` with the numbers as integers */
function parseJobId(id: string): { guest: number; jobnum: number; id: string } {
  const m = /^(\d+)-(\d+)$/.exec(id)
  if (!m) throw fail500(`invalid replication job id '${id}'`)
  const guest = Number(m[1])
  const jobnum = Number(m[2])
  if (guest < 100) throw fail500(`invalid replication job id '${id}' (guest IDs < 100 are reserved)`)
  return { guest, jobnum, id: `${guest}-${jobnum}` }
}

export class ReplicationJobs {
  readonly jobs = new Map<string, ReplicationJob>()
  /** job id -> when it was marked for removal (ms) */
  private readonly marked = new Map<string, number>()

  constructor(private readonly c: Cluster) {}

  /** the replication runner: jobs marked for removal are gone once a full minute has begun after the mark */
  settle(): void {
    const now = this.c.now()
    for (const [id, at] of this.marked) {
      if (now >= (Math.floor(at / 60_000) + 1) * 60_000) {
        this.jobs.delete(id)
        this.marked.delete(id)
      }
    }
  }

  /** the SHA-1 of replication.cfg as written */
  digest(): string {
    let text = ''
    for (const id of [...this.jobs.keys()].sort()) {
      const j = this.jobs.get(id) as ReplicationJob
      text += `${j.type}: ${id}\n`
      for (const k of OPTION_KEYS) {
        const v = j[k]
        if (v !== undefined) text += `\t${k} ${v === true ? 1 : String(v)}\n`
      }
      text += '\n'
    }
    return createHash('sha1').update(text).digest('hex')
  }

  /** a job as index and read return it: the section's options, `guest`, `jobnum`, `id` */
  item(id: string): Record<string, unknown> {
    const j = this.jobs.get(id)
    if (!j) throw fail500(`no such replication job '${id}'`)
    const out: Record<string, unknown> = { id, type: j.type, guest: j.guest, jobnum: j.jobnum }
    for (const k of OPTION_KEYS) {
      const v = j[k]
      if (v !== undefined) out[k] = v === true ? 1 : v
    }
    return out
  }

  /** index: sorted by id (the caller's VM.Audit filter is the access layer's) */
  list(): Record<string, unknown>[] {
    return [...this.jobs.keys()].sort().map((id) => this.item(id))
  }

  /** read: the job and the file's digest */
  read(id: string): Record<string, unknown> {
    return { ...this.item(id), digest: this.digest() }
  }

  /** API2::ReplicationConfig create (`type` is the schema's enum: only `local`) */
  create(params: Record<string, unknown>): null {
    const { guest, jobnum, id } = parseJobId(String(params.id))
    const target = String(params.target)
    const g = this.c.guests.get(guest)
    if (!g) throw fail500(`Guest '${guest}' does not exist.`)
    if (!this.c.nodes.has(target)) throw fail500(`Target '${target}' does not exist.`)
    const source = params.source === undefined ? g.node : String(params.source)
    if (source !== g.node)
      throw fail500(`Source '${source}' does not match current node of guest '${guest}' (${g.node})`)
    if (target === source) throw fail500('Source and target must not be identical')
    if (replicatableVolumes(this.c, g).length === 0) throw fail500('No replicatable volumes found')
    if (this.jobs.has(id)) throw fail500(`replication job '${id}' already exists`)
    // write_config: one job per guest and target
    if ([...this.jobs.values()].some((j) => j.guest === guest && j.target === target))
      throw fail500(`replication job for guest '${guest}' to target 'local/${target}' already exists`)
    const job: ReplicationJob = { type: 'local', target, guest, jobnum, source }
    if (params.schedule !== undefined) job.schedule = String(params.schedule)
    if (params.rate !== undefined) job.rate = String(params.rate)
    if (params.comment !== undefined) job.comment = String(params.comment)
    if (params.disable === true) job.disable = true
    if (params.remove_job !== undefined) job.remove_job = String(params.remove_job) === 'full' ? 'full' : 'local'
    this.jobs.set(id, job)
    return null
  }

  /**
   * API2::ReplicationConfig delete: `force` drops the entry at once (no error when there is none); otherwise the
   * job is marked `remove_job` (`full`, or `local` with `keep`) and the runner removes it.
   */
  remove(idParam: string, keep: boolean, force: boolean): null {
    const { id } = parseJobId(idParam)
    if (force) {
      if (keep) throw fail400({ keep: "conflicts with parameter 'force'" })
      this.jobs.delete(id)
      this.marked.delete(id)
      return null
    }
    const j = this.jobs.get(id)
    if (!j) throw fail500(`no such job '${id}'`)
    j.remove_job = keep ? 'local' : 'full'
    if (!this.marked.has(id)) this.marked.set(id, this.c.now())
    return null
  }

  /** ReplicationConfig check_for_existing_jobs: the destroy of a guest with jobs needs `purge` */
  existingJobError(vmid: number): string | undefined {
    const id = [...this.jobs.keys()].sort().find((k) => this.jobs.get(k)?.guest === vmid)
    return id === undefined
      ? undefined
      : `There is a replication job '${id}' for guest '${vmid}' - Please remove that first.`
  }

  /** ReplicationConfig remove_vmid_jobs (destroy with `purge`): the guest's jobs go at once */
  removeVmid(vmid: number): void {
    for (const [id, j] of [...this.jobs]) {
      if (j.guest !== vmid) continue
      this.jobs.delete(id)
      this.marked.delete(id)
    }
  }
}

/**
 * get_replicatable_volumes (qemu-server QemuConfig, pve-container LXC::Config), without cleanup or noerr: the
 * guest's own image volumes on unshared storages, each of which must support replication (only zfspool has the
 * `replicate` feature); cdroms, `replicate=0` volumes and volumes owned by another guest are skipped.
 */
function replicatableVolumes(c: Cluster, g: Guest): string[] {
  const lxc = g.type === 'lxc'
  const pending = g.conf.pending()
  const keys = [...new Set([...g.conf.keys(), ...Object.keys(pending)])].sort()
  const out = new Set<string>()
  for (const key of keys) {
    const unused = /^unused\d+$/.test(key)
    if (!unused && !(lxc ? isLxcMountKey(key) : isQemuVolumeKey(key))) continue
    const value = g.conf.get(key) ?? pending[key]
    if (value === undefined) continue
    const kind = volumeKindOf(key, lxc)
    const props = unused ? {} : parseVolumeProps(key, value, kind)
    if (!lxc && isCdrom(props)) continue
    const replicate = props.replicate !== '0'
    const volid = unused ? value : driveVolid(value, kind)
    const path = unused ? value : (props[lxc ? 'volume' : 'file'] ?? '')
    if (!volid) {
      if (!path.startsWith('/') || !replicate) continue
      // pve-container classify_mountpoint: a path under /dev is a device mount, any other path a bind mount
      const mptype = path.startsWith('/dev/') ? 'device' : 'bind'
      throw fail500(
        lxc ? `unable to replicate mountpoint type '${mptype}'` : `unable to replicate local file/device '${path}'`,
      )
    }
    if (!replicate) continue
    const [sid, volname] = splitVolid(volid) ?? ['', '']
    const def = c.storage.get(sid)
    if (!def || def.shared) continue
    if (volumeOwner(volname) !== g.vmid) continue
    if (def.type !== 'zfspool') throw fail500(`missing replicate feature on volume '${volid}'`)
    out.add(volid)
  }
  return [...out]
}
