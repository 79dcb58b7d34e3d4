/**
 * Planning backup jobs (pure): create what is missing, update owned options that differ (per field), delete
 * owned jobs git no longer declares, under the same guards as guests: only jobs carrying this cluster entry's
 * ownership marker (`managed-by=<tag>.<entry>`, kit/ownership.ts commentOwner) are ever deleted, within the
 * cycle's remaining prune budget, never all of a kind by an empty push, never more than the ratio limit. A
 * declared job id that exists without a marker, or with the bare `managed-by=<tag>`, is claimed by the update
 * (declaring the id is the explicit claim, as declaring a guest's PVE name is); one marked for another entry is
 * never taken over nor pruned. docs/safety.md#backup-jobs
 */
import type { FieldDiff, Skip } from '../../plan-types.js'
import { commentMarker, commentOwner, commentWord } from '../../kit/ownership.js'
import { SELECTION_KEYS, desiredFields, liveValue } from './fields.js'
import { requiresOf, withRequired } from '@proxops/schema'
import type { LiveBackupJob } from './types.js'
import { isBackupJob } from '../../desired.js'
import { emptyPlan, type KindContext, type KindPlan } from '../../kit/kind.js'
import { managedGuests } from '../../kit/managed.js'
import { selectionVerdict } from './selection.js'
import { backupAddress, clusterObjectBase } from '../../kit/draft.js'

const KIND = 'BackupJob' as const

export function planBackupJobs(ctx: KindContext): KindPlan {
  const { policy } = ctx
  const desired = ctx.desired.manifests.filter(isBackupJob)
  const out = emptyPlan()
  const marker = commentMarker(policy)
  const owner = (j: LiveBackupJob) => commentOwner(j.values.comment, policy)
  const ids = new Map(desired.map((m) => [m.spec.id, m.metadata.name]))
  const observed = ctx.live.backupJobs
  if ('unreadable' in observed) {
    const reason = observed.unreadable
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
  const live = new Map(observed.known.map((j) => [j.id, j]))
  const managed = managedGuests(ctx)

  for (const m of [...desired].sort((a, b) => (a.spec.id < b.spec.id ? -1 : a.spec.id > b.spec.id ? 1 : 0))) {
    const id = m.spec.id
    const address = backupAddress(id)
    const base = clusterObjectBase(KIND, m.metadata.name, address, ctx.levelOf(`BackupJob/${m.metadata.name}`))
    const fields = desiredFields(m.spec, policy)
    const job = live.get(id)
    if (job && owner(job) === 'other') {
      out.anomalies.push({
        code: 'owned-elsewhere',
        address,
        kind: KIND,
        message: `backup job ${id} carries another cluster entry's marker (${commentWord(job.values.comment)}); BackupJob/${m.metadata.name} does not take it over`,
      })
      continue
    }
    // a job stops, suspends or snapshots every guest it selects: it may reach only what this entry manages
    const verdict = selectionVerdict(m.spec, ctx, managed)
    if ('unknown' in verdict) {
      out.skips.push({
        code: 'unknown',
        address,
        kind: KIND,
        node: '',
        message: `${verdict.unknown}; what the selection reaches is not known, so the job is not written`,
      })
      continue
    }
    if ('blocked' in verdict) {
      out.anomalies.push({
        code: 'unmanaged-selection',
        address,
        kind: KIND,
        field: 'spec.selection',
        message: `${verdict.blocked}; a backup job may select guests this entry manages, a pool it owns, or all guests but another entry's (docs/safety.md#backup-jobs); not ${job ? 'changed' : 'created'}${job ? ' (the job on PVE runs as it is until the selection is fixed)' : ''}`,
      })
      continue
    }
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
    // PVE checks `requires` on the request, not on the merged job: a changed notes-template goes with the storage
    const sent = withRequired(
      requiresOf('PUT /cluster/backup/{id}'),
      params,
      Object.fromEntries(fields.map((f) => [f.key, f.value])),
    )
    if (del.length > 0) sent.delete = del.join(',')
    const claimed = owner(job) !== 'self'
    out.drafts.push({
      ...base,
      type: 'update',
      reason: `${address}: ${claimed ? `claimed (declared, no ${marker} marker yet); ` : ''}drift (${diffs.map((d) => d.key).join(', ')})`,
      diffs,
      requests: [{ call: 'updateBackupJob', id, params: sent }],
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
  out.prunes = {
    guarded: true,
    owner: 'owned',
    noun: 'live job(s)',
    owned: new Map([[KIND, owned.length]]),
    desired: new Map([[KIND, desired.length]]),
    candidates: () => ({
      candidates: candidates.map((j) => ({
        kind: KIND,
        draft: {
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
        },
      })),
      skips: [],
      anomalies: [],
    }),
  }
  return out
}
