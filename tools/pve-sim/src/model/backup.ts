import type { Cluster } from './cluster.js'
import { fail400, fail500 } from './errors.js'
import {
  BACKUP_FLEECING_FORMAT,
  BACKUP_PERFORMANCE_FORMAT,
  PRUNE_BACKUPS_FORMAT,
  splitList,
  type HashFormat,
} from '../apidoc/formats.js'
import { parsePropertyString } from '../apidoc/validate.js'
import { computeNextEvent, parseCalendarEvent } from '../apidoc/calendar-event.js'

/**
 * Backup jobs: the `vzdump` sections of `/etc/pve/jobs.cfg` behind pve-manager's PVE::API2::Backup
 * (create_job, read_job, update_job, delete_job, index), PVE::VZDump::verify_vzdump_parameters and the job
 * registry (pve-common PVE::Job::Registry, pve-guest-common PVE::VZDump::JobBase). The legacy `vzdump.cron`
 * jobs are not modelled; the caller's privileges are checked in src/access/views.ts (docs/gaps/simulator-model.md).
 *
 * A job is kept as the section's options with their file values (strings); reads decode them as the registry
 * does: `enabled` defaults to 1, the property strings (`prune-backups`, `fleecing`, `performance`) become
 * objects, booleans and integers read as numbers like every other simulator read.
 */

/** json_config_properties of PVE::VZDump::Common plus the registry's own options: what a job may hold */
const REGISTRY_OPTIONS = new Set(['enabled', 'schedule', 'comment', 'repeat-missed'])
/** VZDump options PVE::VZDump::option_exists knows (the vzdump confdesc), as apidoc lists them for create_job */
const VZDUMP_OPTIONS = new Set([
  'all',
  'bwlimit',
  'compress',
  'dumpdir',
  'exclude',
  'exclude-path',
  'fleecing',
  'ionice',
  'lockwait',
  'mailnotification',
  'mailto',
  'maxfiles',
  'mode',
  'node',
  'notes-template',
  'notification-mode',
  'pbs-change-detection-mode',
  'performance',
  'pigz',
  'pool',
  'protected',
  'prune-backups',
  'quiet',
  'remove',
  'script',
  'stdexcludes',
  'stop',
  'stopwait',
  'storage',
  'tmpdir',
  'vmid',
  'zstd',
])
const BOOLEANS = new Set(['all', 'enabled', 'protected', 'quiet', 'remove', 'repeat-missed', 'stdexcludes', 'stop'])
const INTEGERS = new Set(['bwlimit', 'ionice', 'lockwait', 'maxfiles', 'pigz', 'stopwait', 'zstd'])
/** PVE::VZDump::Common's PROPERTY_STRINGS: stored printed, read (decode_value) as objects */
const PROPERTY_STRINGS = new Map<string, HashFormat>([
  ['prune-backups', PRUNE_BACKUPS_FORMAT],
  ['fleecing', BACKUP_FLEECING_FORMAT],
  ['performance', BACKUP_PERFORMANCE_FORMAT],
])
const ALL_DAYS = 'mon,tue,wed,thu,fri,sat,sun'

export type JobOptions = Record<string, string>

const truthy = (v: string | undefined): boolean => v !== undefined && v !== '' && v !== '0'

/** a decoded API parameter as the file text PVE writes (booleans 0/1, arrays \0-joined like the CLI) */
function fileValue(v: unknown): string {
  if (v === true) return '1'
  if (v === false) return '0'
  if (Array.isArray(v)) return v.map(String).join('\0')
  return String(v)
}

/** print_property_string: keys sorted */
function printPropertyString(h: Record<string, string>): string {
  return Object.keys(h)
    .sort()
    .map((k) => `${k}=${h[k] as string}`)
    .join(',')
}

/** $verify_notes_template (PVE::VZDump): one line, escapes `\n` and `\\`, variables cluster/guestname/node/vmid */
export function notesTemplateProblems(template: string): string | undefined {
  if (template.includes('\n')) return 'contains a line feed'
  const problems: string[] = []
  for (const m of template.matchAll(/\\(.)/gs)) {
    const ch = m[1] as string
    if (!/^[n\\]$/.test(ch)) problems.push(`escape sequence '\\${ch}' at char ${m.index}`)
  }
  for (const m of template.matchAll(/\{\{([^\s{}]+)\}\}/g)) {
    const v = m[1] as string
    // pos() after the match minus the name's length, as the Perl loop reports it
    if (!/^(cluster|guestname|node|vmid)$/.test(v))
      problems.push(`variable '${v}' at char ${m.index + m[0].length - v.length}`)
  }
  return problems.length ? `found unknown: ${problems.join(', ')}` : undefined
}

/**
 * verify_vzdump_parameters: selection conflicts, the property strings parsed (and so written back normalised by
 * JobBase encode_value), notes-template, exclude => all
 */
function verifyVzdumpParameters(p: JobOptions, checkMissing: boolean): void {
  if (truthy(p.all) && p.vmid) throw fail400({ all: "option conflicts with option 'vmid'" })
  if (p.exclude && p.vmid) throw fail400({ exclude: "option conflicts with option 'vmid'" })
  if (p.pool && p.vmid) throw fail400({ pool: "option conflicts with option 'vmid'" })
  for (const [key, format] of PROPERTY_STRINGS) {
    const v = p[key]
    if (v !== undefined) p[key] = printPropertyString(parsePropertyString(format, v, key))
  }
  const notes = p['notes-template']
  if (notes) {
    const problem = notesTemplateProblems(notes)
    // raise_param_exc({ 'notes-template' => $@ }): the die text keeps its newline
    if (problem) throw fail400({ 'notes-template': `${problem}\n` })
  }
  if (p.exclude !== undefined && !p.pool) p.all = '1'
  if (!checkMissing) return
  if (!(truthy(p.all) || truthy(p.stop) || p.pool) && !p.vmid) throw fail400({ vmid: 'property is missing' })
}

/** $schedule_param_check: `starttime` (+ `dow`) becomes `schedule`; both at once is an error */
function scheduleParamCheck(p: JobOptions, required: boolean): void {
  if (p.schedule !== undefined) {
    if (p.starttime !== undefined) throw fail400({ starttime: "'starttime' and 'schedule' cannot both be set" })
  } else if (p.starttime === undefined) {
    if (required) throw fail400({ schedule: "neither 'starttime' nor 'schedule' were set" })
  } else {
    const dow = p.dow === undefined ? '' : splitList(p.dow).join(',')
    p.schedule = dow === '' || dow === ALL_DAYS ? p.starttime : `${dow} ${p.starttime}`
  }
  delete p.starttime
  delete p.dow
}

export class BackupJobs {
  /** job id -> options, in creation order (jobs.cfg's section order) */
  readonly jobs = new Map<string, JobOptions>()

  constructor(private readonly c: Cluster) {}

  /** a job as read_job/index return it */
  item(id: string): Record<string, unknown> {
    const job = this.jobs.get(id)
    if (!job) throw fail400({ id: `No such job '${id}'` })
    const out: Record<string, unknown> = { id, type: 'vzdump', enabled: 1 }
    for (const [k, v] of Object.entries(job)) {
      const format = PROPERTY_STRINGS.get(k)
      if (format) {
        // parse_property_string leaves integers as the text it read; check_type turns booleans into 1/0 numbers
        const h: Record<string, unknown> = parsePropertyString(format, v, k)
        for (const [key, s] of Object.entries(format)) if (s.type === 'boolean' && key in h) h[key] = Number(h[key])
        out[k] = h
      } else if (BOOLEANS.has(k) || INTEGERS.has(k)) out[k] = Number(v)
      else if (k === 'exclude-path') out[k] = v.split('\0')
      else out[k] = v
    }
    return out
  }

  /**
   * index: every job, and for one with a schedule its `next-run`, computed from now as PVE does (the jobs are
   * cluster-wide, so no last run is looked up); `enabled` plays no part
   */
  list(): Record<string, unknown>[] {
    const now = Math.floor(this.c.now() / 1000)
    return [...this.jobs.keys()].map((id) => {
      const item = this.item(id)
      const event = typeof item.schedule === 'string' ? parseCalendarEvent(item.schedule.trim()) : null
      const next = event ? computeNextEvent(event, now) : undefined
      if (next !== undefined) item['next-run'] = next
      return item
    })
  }

  /** create_job and update_job: `if (my $pool = $param->{pool})` the pool must exist (check_pool_exist, a 403) */
  private checkPool(p: JobOptions): void {
    if (p.pool) this.c.pools.requireExists(p.pool)
  }

  /** POST /cluster/backup (create_job) */
  create(params: Record<string, unknown>): null {
    const p = this.options(params)
    this.checkPool(p)
    scheduleParamCheck(p, true)
    if (p.enabled === undefined) p.enabled = '1'
    const id = p.id ?? this.c.rng.uuid()
    delete p.id
    if (this.jobs.has(id)) throw fail500(`Job '${id}' already exists`)
    verifyVzdumpParameters(p, true)
    this.jobs.set(id, p)
    return null
  }

  /** PUT /cluster/backup/{id} (update_job) */
  update(params: Record<string, unknown>): null {
    const p = this.options(params)
    const id = p.id as string
    delete p.id
    const del = p.delete === undefined ? [] : splitList(p.delete)
    delete p.delete
    this.checkPool(p)
    scheduleParamCheck(p, false)
    if (Object.keys(p).length === 0 && del.length === 0) throw fail500('no options specified')
    verifyVzdumpParameters(p, false)
    const current = this.jobs.get(id)
    if (!current) throw fail500('no such vzdump job')
    const job: JobOptions = { ...current }
    for (const k of del) {
      if (!VZDUMP_OPTIONS.has(k) && k !== 'comment' && k !== 'repeat-missed')
        throw fail400({ delete: `unknown option '${k}'` })
      delete job[k]
    }
    Object.assign(job, p)
    if (job.exclude !== undefined && job.pool === undefined) job.all = '1'
    if (p.vmid !== undefined) {
      delete job.all
      delete job.exclude
      delete job.pool
    } else if (truthy(p.all)) {
      delete job.vmid
      delete job.pool
    } else if (job.pool) {
      delete job.vmid
      delete job.all
      delete job.exclude
    }
    verifyVzdumpParameters(job, true)
    this.jobs.set(id, job)
    return null
  }

  /** DELETE /cluster/backup/{id} (delete_job) */
  remove(id: string): null {
    if (!this.jobs.delete(id)) throw fail400({ id: `No such job '${id}'` })
    return null
  }

  /**
   * pve-guest-common PVE::VZDump::Plugin::remove_vmid_from_backup_jobs (a guest destroyed with `purge`): a job
   * listing guests loses the vmid and is deleted when none is left; otherwise the vmid leaves its `exclude` list
   * (the key goes when it empties). The lists are rewritten `,`-joined (remove_vmid_from_list), whether or not
   * they named the guest.
   */
  removeVmid(vmid: number): void {
    const without = (list: string) =>
      splitList(list)
        .filter((v) => v !== String(vmid))
        .join(',')
    for (const id of [...this.jobs.keys()].sort()) {
      const job = this.jobs.get(id) as JobOptions
      if (job.vmid !== undefined) {
        const list = without(job.vmid)
        if (list) job.vmid = list
        else this.jobs.delete(id)
      } else if (job.exclude !== undefined) {
        const list = without(job.exclude)
        if (list) job.exclude = list
        else delete job.exclude
      }
    }
  }

  /** the handler's parameters as file values; the schema layer has checked them already */
  private options(params: Record<string, unknown>): JobOptions {
    const p: JobOptions = {}
    for (const [k, v] of Object.entries(params)) {
      if (v === undefined || v === null) continue
      if (
        k !== 'id' &&
        k !== 'delete' &&
        k !== 'starttime' &&
        k !== 'dow' &&
        !REGISTRY_OPTIONS.has(k) &&
        !VZDUMP_OPTIONS.has(k)
      )
        continue
      p[k] = fileValue(v)
    }
    return p
  }
}
