/**
 * The one field table of a BackupJob: manifest field -> PVE job option, and how both sides print, so that a
 * create, a per-field compare and adopt all read the same facts (PVE::API2::Backup, PVE::VZDump options).
 */
import type { BackupJobSpec } from '@proxops/schema'
import type { Policy } from '../../plan-types.js'
import { commentMarker, commentText } from '../../kit/ownership.js'
import type { LiveBackupJob } from './types.js'

const vmidList = (ids: readonly number[]): string => [...ids].sort((a, b) => a - b).join(',')

/** A PVE vmid list (`100,101` / `100 101` / `100;101`) in the form vmidList prints. */
export const canonicalVmids = (text: string): string =>
  vmidList(
    text
      .split(/[\s,;]+/)
      .filter((x) => x !== '')
      .map(Number),
  )

/** `keep-daily=7,keep-last=3`: keys sorted, as print_property_string writes jobs.cfg */
export const printPrune = (h: Readonly<Partial<Record<string, number | string>>>): string =>
  Object.keys(h)
    .sort()
    .map((k) => `${k}=${String(h[k])}`)
    .join(',')

/** One owned option: the manifest field it comes from and its PVE value. */
export interface JobField {
  field: string
  key: string
  value: string
}

/** PVE's selection keys: whichever the desired form does not use is removed */
export const SELECTION_KEYS = ['vmid', 'pool', 'all', 'exclude'] as const

/**
 * Every option ProxOps owns for this job, in a fixed order; the comment starts with this cluster entry's
 * ownership marker (kit/ownership.ts commentMarker).
 */
export function desiredFields(spec: BackupJobSpec, policy: Pick<Policy, 'ownershipTag' | 'clusterEntry'>): JobField[] {
  const out: JobField[] = []
  const add = (field: string, key: string, value: string | undefined) => {
    if (value !== undefined) out.push({ field: `spec.${field}`, key, value })
  }
  add('schedule', 'schedule', spec.schedule)
  add('storage', 'storage', spec.storage)
  const s = spec.selection
  if ('vmids' in s) add('selection.vmids', 'vmid', vmidList(s.vmids))
  else if ('pool' in s) add('selection.pool', 'pool', s.pool)
  else {
    add('selection.all', 'all', '1')
    if (s.exclude.length > 0) add('selection.exclude', 'exclude', vmidList(s.exclude))
  }
  add('mode', 'mode', spec.mode)
  add('compress', 'compress', spec.compress)
  add('prune-backups', 'prune-backups', spec['prune-backups'] && printPrune(spec['prune-backups']))
  add('notes-template', 'notes-template', spec['notes-template'])
  add('enabled', 'enabled', spec.enabled ? '1' : '0')
  add('node', 'node', spec.node)
  const marker = commentMarker(policy)
  add('comment', 'comment', spec.comment === undefined ? marker : `${marker} ${spec.comment}`)
  return out
}

/** A live option in the form desiredFields prints (vmid lists sorted), undefined when unset. */
export function liveValue(job: LiveBackupJob, key: string): string | undefined {
  const v = job.values[key]
  if (v === undefined) return key === 'enabled' ? '1' : undefined
  if (key === 'vmid' || key === 'exclude') return canonicalVmids(v)
  return v
}

/** The options desiredFields writes: every other option of a live job is an adopt gap (kept on PVE as it is). */
export const OWNED_OPTIONS: ReadonlySet<string> = new Set([
  'schedule',
  'storage',
  ...SELECTION_KEYS,
  'mode',
  'compress',
  'prune-backups',
  'notes-template',
  'enabled',
  'node',
  'comment',
])

const vmidsOf = (text: string): number[] =>
  canonicalVmids(text) === '' ? [] : canonicalVmids(text).split(',').map(Number)

/**
 * desiredFields read backwards, for adopt: the spec (in the shape a user writes) whose fields print as the live
 * job's options, and the options it cannot hold. A selection PVE would refuse (none, or `exclude` without `all`)
 * is left out, so the schema names what is missing.
 */
export function adoptSpec(
  job: LiveBackupJob,
  ownershipTag: string,
): { spec: Record<string, unknown>; unmodelled: { key: string; value: string }[] } {
  const v = job.values
  const spec: Record<string, unknown> = {}
  const set = (field: string, value: unknown) => {
    if (value !== undefined) spec[field] = value
  }
  set('schedule', v.schedule)
  set('storage', v.storage)
  if (v.vmid !== undefined) spec.selection = { vmids: vmidsOf(v.vmid) }
  else if (v.pool !== undefined) spec.selection = { pool: v.pool }
  const all = v.vmid === undefined && v.pool === undefined && v.all !== undefined && v.all !== '0'
  if (all) spec.selection = { all: true, ...(v.exclude !== undefined ? { exclude: vmidsOf(v.exclude) } : {}) }
  set('mode', v.mode)
  set('compress', v.compress)
  if (v['prune-backups'] !== undefined) {
    const prune: Record<string, number | boolean> = {}
    for (const token of v['prune-backups'].split(',')) {
      const [key = '', value = ''] = token.split('=')
      if (key === '') continue
      prune[key] = key === 'keep-all' ? value === '1' : Number(value)
    }
    spec['prune-backups'] = prune
  }
  set('notes-template', v['notes-template'])
  if (v.enabled === '0') spec.enabled = false
  set('node', v.node)
  set('comment', commentText(v.comment, ownershipTag))
  const unmodelled = Object.keys(v)
    .filter((key) => !OWNED_OPTIONS.has(key) || (key === 'exclude' && !all))
    .sort()
    .map((key) => ({ key, value: v[key] as string }))
  return { spec, unmodelled }
}
