/**
 * Which guests a backup job's selection reaches (pve-manager PVE::VZDump get_included_guests), and whether this
 * cluster entry may write it (docs/safety.md#backup-jobs). A job runs every guest it selects through vzdump in its
 * `mode`, `stop` included, so it may select only what this entry manages:
 *   - `vmids`: guests this entry manages (kit/managed.ts);
 *   - `pool`: a pool this entry owns (declared here, not marked for another entry) whose guests it all manages;
 *   - `all`: the cluster-wide form. It reaches every guest of the cluster (of `node`, when set) but `exclude`,
 *     hand-made ones included, which is what an admin who writes it asks for; it is refused when it reaches a
 *     guest marked for another cluster entry (exclude it), or nodes this entry cannot see (outside its allowlist:
 *     set `node`).
 * Pure.
 */
import type { BackupJobSpec } from '@proxops/schema'
import { known } from '../../inventory.js'
import { commentOwner, commentWord, ownerOf } from '../../kit/ownership.js'
import type { ManagedGuests } from '../../kit/managed.js'
import type { KindContext } from '../../kit/kind.js'

export type SelectionVerdict =
  /** the selection reaches only what this entry manages */
  | { ok: true }
  /** it reaches something else: why (the job is not written) */
  | { blocked: string }
  /** what it reaches cannot be told this cycle (the pools were not read) */
  | { unknown: string }

const list = (items: readonly string[]): string => items.join(', ')

export function selectionVerdict(spec: BackupJobSpec, ctx: KindContext, managed: ManagedGuests): SelectionVerdict {
  const s = spec.selection
  const unmanaged = (vmids: readonly number[]): string[] =>
    vmids.flatMap((vmid) => {
      const why = managed(vmid)
      return why === undefined ? [] : [`${vmid} (${why})`]
    })
  if ('vmids' in s) {
    const bad = unmanaged(s.vmids)
    return bad.length === 0 ? { ok: true } : { blocked: `it names guests this entry does not manage: ${list(bad)}` }
  }
  if ('pool' in s) {
    const declared = ctx.desired.manifests.some((m) => m.kind === 'Pool' && m.spec.id === s.pool)
    if (!declared)
      return { blocked: `it selects pool ${s.pool}, which no Pool of this cluster declares (a pool it owns)` }
    const pools = known(ctx.live.pools)
    if (pools === undefined) return { unknown: 'the pools could not be read this cycle' }
    const pool = pools.find((p) => p.poolid === s.pool)
    if (pool === undefined) return { ok: true }
    if (commentOwner(pool.comment, ctx.policy) === 'other')
      return {
        blocked: `it selects pool ${s.pool}, which carries another entry's marker (${commentWord(pool.comment)})`,
      }
    const bad = unmanaged(pool.vmids)
    return bad.length === 0
      ? { ok: true }
      : { blocked: `pool ${s.pool} holds guests this entry does not manage: ${list(bad)}` }
  }
  // `all`: every guest of the cluster, or of `node`, but the excluded ones
  const unseen = (ctx.live.nodesOutside ?? []).filter((n) => spec.node === undefined || n === spec.node)
  if (unseen.length > 0)
    return {
      blocked: `all: true reaches the guests of ${list(unseen)}, outside this entry's node allowlist, where it cannot tell whose they are: set node to a node of the allowlist`,
    }
  const excluded = new Set(s.exclude)
  const others = [...ctx.live.guests, ...ctx.live.unknownGuests]
    .filter((g) => !excluded.has(g.vmid) && (spec.node === undefined || g.node === spec.node))
    .flatMap((g) => {
      const o = ownerOf(g.tags, ctx.policy)
      return o.kind === 'other' ? [{ vmid: g.vmid, why: `${g.vmid} (owned by cluster entry ${list(o.entries)})` }] : []
    })
    .sort((a, b) => a.vmid - b.vmid)
  return others.length === 0
    ? { ok: true }
    : { blocked: `all: true reaches guests of another cluster entry: ${list(others.map((o) => o.why))}; exclude them` }
}
