/**
 * Planning backup jobs (pure): create what is missing, update owned options that differ (per field), delete
 * owned jobs git no longer declares, under the same guards as guests: only jobs carrying this cluster entry's
 * ownership marker (`managed-by=<tag>.<entry>`, plan/ownership.ts commentOwner) are ever deleted, within the
 * cycle's remaining prune budget, never all of a kind by an empty push, never more than the ratio limit. A
 * declared job id that exists without a marker, or with the bare `managed-by=<tag>`, is claimed by the update
 * (declaring the id is the explicit claim, as declaring a guest's PVE name is); one marked for another entry is
 * never taken over nor pruned. docs/safety.md#backup-jobs
 */
import { PlanInputError } from '../../errors.js'
import type { Draft } from '../../plan/order.js'
import type { Anomaly, FieldDiff, Policy, Skip } from '../../plan-types.js'
import { commentMarker, commentOwner, commentWord } from '../../plan/ownership.js'
import { SELECTION_KEYS, desiredFields, liveValue } from './fields.js'
import type { BackupJobManifest } from '@proxops/schema'
import type { LiveBackupJob } from './types.js'

export const backupAddress = (id: string): string => `BackupJob/${id}`

export interface BackupPlanInput {
  desired: readonly BackupJobManifest[]
  /** undefined: `/cluster/backup` could not be read this cycle (the reason) */
  live: readonly LiveBackupJob[] | { unreadable: string }
  policy: Policy
  /** deletions still allowed this cycle after the guests' prunes */
  budget: number
  levelOf: (m: BackupJobManifest) => number
}

export interface BackupPlanResult {
  drafts: Draft[]
  anomalies: Anomaly[]
  skips: Skip[]
}

const KIND = 'BackupJob' as const

export function planBackupJobs(input: BackupPlanInput): BackupPlanResult {
  const { desired, policy } = input
  const out: BackupPlanResult = { drafts: [], anomalies: [], skips: [] }
  const marker = commentMarker(policy)
  const owner = (j: LiveBackupJob) => commentOwner(j.values.comment, policy)
  const ids = new Map<string, string>()
  for (const m of desired) {
    const other = ids.get(m.spec.id)
    if (other !== undefined)
      throw new PlanInputError(
        'PLAN_DUPLICATE',
        `declares PVE job id ${m.spec.id}, as BackupJob/${other} does`,
        `BackupJob/${m.metadata.name}`,
      )
    ids.set(m.spec.id, m.metadata.name)
  }
  if (!Array.isArray(input.live)) {
    const reason = (input.live as { unreadable: string }).unreadable
    for (const m of desired)
      out.skips.push({
        code: 'unknown',
        address: backupAddress(m.spec.id),
        kind: KIND,
        node: '',
        message: `backup jobs could not be read this cycle (${reason}); no create, update or delete`,
      })
    return out
  }
  const live = new Map((input.live as readonly LiveBackupJob[]).map((j) => [j.id, j]))

  for (const m of [...desired].sort((a, b) => (a.spec.id < b.spec.id ? -1 : a.spec.id > b.spec.id ? 1 : 0))) {
    const id = m.spec.id
    const address = backupAddress(id)
    const base = {
      resource: `BackupJob/${m.metadata.name}`,
      address,
      kind: KIND,
      name: m.metadata.name,
      node: '',
      disruption: 'none' as const,
      tier: 0 as const,
      level: input.levelOf(m),
    }
    const fields = desiredFields(m.spec, policy)
    const job = live.get(id)
    if (!job) {
      const params: Record<string, string> = { id }
      for (const f of fields) params[f.key] = f.value
      out.drafts.push({
        ...base,
        type: 'create',
        reason: `${address}: not on PVE; will create`,
        diffs: fields.map((f) => ({ field: f.field, key: f.key, after: f.value })),
        requests: [{ call: 'createBackupJob', params }],
      })
      continue
    }
    if (owner(job) === 'other') {
      out.anomalies.push({
        code: 'owned-elsewhere',
        address,
        kind: KIND,
        message: `backup job ${id} carries another cluster entry's marker (${commentWord(job.values.comment)}); BackupJob/${m.metadata.name} does not take it over`,
      })
      continue
    }
    const diffs: FieldDiff[] = []
    const params: Record<string, string> = {}
    for (const f of fields) {
      const before = liveValue(job, f.key)
      if (before === f.value) continue
      params[f.key] = f.value
      diffs.push({ field: f.field, key: f.key, ...(before === undefined ? {} : { before }), after: f.value })
    }
    const owned = new Set(fields.map((f) => f.key))
    const del: string[] = []
    for (const key of SELECTION_KEYS) {
      const before = liveValue(job, key)
      if (owned.has(key) || before === undefined) continue
      del.push(key)
      diffs.push({ field: 'spec.selection', key, before })
    }
    if (diffs.length === 0) continue
    if (del.length > 0) params.delete = del.join(',')
    const claimed = owner(job) !== 'self'
    out.drafts.push({
      ...base,
      type: 'update',
      reason: `${address}: ${claimed ? `claimed (declared, no ${marker} marker yet); ` : ''}drift (${diffs.map((d) => d.key).join(', ')})`,
      diffs,
      requests: [{ call: 'updateBackupJob', id, params }],
    })
  }

  // prunes: undeclared jobs with this entry's marker; the others are listed, never touched
  const owned = [...live.values()].filter((j) => owner(j) === 'self')
  const candidates = owned.filter((j) => !ids.has(j.id)).sort((a, b) => (a.id < b.id ? -1 : 1))
  const skip = (code: Skip['code'], j: LiveBackupJob, message: string) =>
    out.skips.push({ code, address: backupAddress(j.id), kind: KIND, node: '', message })
  for (const j of [...live.values()].sort((a, b) => (a.id < b.id ? -1 : 1))) {
    if (ids.has(j.id)) continue
    const o = owner(j)
    if (o === 'unmarked')
      skip(
        'unmarked',
        j,
        `marked ${commentMarker({ ownershipTag: policy.ownershipTag })} without a cluster entry and absent in git; not pruned (it may be another entry's): write ${marker} in its comment to let this entry prune it, or delete it by hand`,
      )
    else if (o === 'other') skip('owned-elsewhere', j, "another cluster entry's backup job; never touched")
    else if (o === 'none') skip('untagged', j, `backup job without the ${marker} marker in its comment; never touched`)
  }
  if (candidates.length === 0) return out
  const deferred = (code: Skip['code'], message: string, jobs: readonly LiveBackupJob[]) => {
    for (const j of jobs) out.skips.push({ code, address: backupAddress(j.id), kind: KIND, node: '', message })
  }
  const allowEmpty = (policy.allowEmpty as readonly string[]).includes(KIND)
  if (desired.length === 0 && !allowEmpty) {
    out.anomalies.push({
      code: 'empty-desired',
      kind: KIND,
      message: `0 desired ${KIND} but ${candidates.length} owned live job(s) would be pruned: probable bad push; no ${KIND} is pruned this cycle (pass --allow-empty ${KIND} to accept)`,
    })
    deferred('prune-guard', 'prune deferred (empty-desired or ratio guard)', candidates)
    return out
  }
  const selected = candidates.slice(0, Math.max(0, input.budget))
  deferred(
    'prune-budget',
    `prune deferred (budget ${String(policy.pruneBudget)} per cycle)`,
    candidates.slice(selected.length),
  )
  if (!allowEmpty && selected.length > policy.pruneRatioLimit * owned.length) {
    out.anomalies.push({
      code: 'prune-ratio',
      kind: KIND,
      message: `this cycle would prune ${selected.length} of ${owned.length} owned ${KIND} (more than ${Math.round(policy.pruneRatioLimit * 100)}%): probable bad push; no ${KIND} is pruned this cycle`,
    })
    deferred('prune-guard', 'prune deferred (empty-desired or ratio guard)', selected)
    return out
  }
  for (const j of selected)
    out.drafts.push({
      id: `${backupAddress(j.id)}#delete`,
      address: backupAddress(j.id),
      kind: KIND,
      node: '',
      type: 'delete',
      reason: `present on PVE (${marker} marker) but absent in git`,
      diffs: [],
      disruption: 'none',
      tier: 9,
      level: 0,
      requests: [{ call: 'deleteBackupJob', id: j.id }],
    })
  return out
}
