/**
 * Planning resource pools (pure): the `Pool` kind (create, comment drift, prune) and the pool membership
 * `spec.pool` declares for a guest (pve-manager PVE::API2::Pool create_pool / update_pool / delete_pool).
 *
 * Ownership (docs/safety.md#pools): ProxOps writes the marker `managed-by=<tag>` (`managed-by=<tag>.<entry>`
 * with a cluster entry) as the first word of a pool's comment, as backup jobs have it (kit/ownership.ts
 * commentOwner). Declaring a pool id claims it (the update writes the marker); only a pool carrying this
 * entry's marker is ever deleted, within the cycle's remaining prune budget and the empty-desired and ratio
 * guards, and never while it holds anything this plan does not take out of it first: a storage, a sub-pool
 * that stays, or a guest that is neither pruned nor moved to another pool in the same plan (the delete then
 * waits for those actions).
 *
 * Membership: a new guest gets `pool=` on its create or clone (create_vm / clone_vm add it at the end of the
 * worker); an existing one joins through update_pool (`vms=<vmid>`, `allow-move=1` when it is in another
 * pool). `spec.pool` absent leaves a guest's membership alone.
 */
import type { ContainerManifest, PoolManifest, QemuManifest } from '@proxops/schema'
import { poolNeeded } from '@proxops/schema'
import { known, type LivePool, type Observed } from '../../inventory.js'
import type { Anomaly, FieldDiff, Policy, PveRequest, Skip } from '../../plan-types.js'
import { clusterObjectBase, poolAddress, skipOn, type Draft, type DraftBase } from '../../kit/draft.js'
import { commentMarker, commentOwner, commentWord } from '../../kit/ownership.js'
import {
  emptyPlan,
  type KindContext,
  type KindPlan,
  type PlanContext,
  type PruneCandidate,
  type PruneGroup,
} from '../../kit/kind.js'

type Guest = QemuManifest | ContainerManifest
type Base = DraftBase

const KIND = 'Pool' as const

/** the comment a Pool's PVE object must carry */
export const poolComment = (m: PoolManifest, policy: Pick<Policy, 'ownershipTag' | 'clusterEntry'>): string =>
  m.spec.comment === undefined || m.spec.comment === ''
    ? commentMarker(policy)
    : `${commentMarker(policy)} ${m.spec.comment}`

/** The pools a plan can name: on PVE or declared; `known` false when the pools could not be read. */
export interface PoolIndex {
  known: boolean
  has(poolid: string): boolean
  /** the marker of another cluster entry when the live pool carries one (a guest of this entry never joins it) */
  otherOwner(poolid: string): string | undefined
}

export function poolIndex(ctx: PlanContext): PoolIndex {
  const declared = new Set(ctx.desired.manifests.flatMap((m) => (m.kind === 'Pool' ? [m.spec.id] : [])))
  const live = known(ctx.live.pools)
  const byId = new Map(live?.map((p) => [p.poolid, p]))
  return {
    known: live !== undefined,
    has: (id) => byId.has(id) || declared.has(id),
    otherOwner: (id) => {
      const comment = byId.get(id)?.comment
      return commentOwner(comment, ctx.policy) === 'other' ? commentWord(comment) : undefined
    },
  }
}

/**
 * `pool=` for a new guest's create or clone, or why it cannot be created (create_vm would fail on
 * check_pool_exist; a pool of another cluster entry is never joined). Unknown pools: the create carries `pool=`
 * and PVE checks it.
 */
export function poolForCreate(m: Guest, pools: PoolIndex): { pool?: string } | { missing: MissingPool } {
  const pool = m.spec.pool
  if (pool === undefined) return {}
  if (pools.known && !pools.has(pool)) return { missing: missingPool(pool) }
  const other = pools.otherOwner(pool)
  if (other !== undefined) return { missing: othersPool(pool, other) }
  return { pool }
}

type MissingPool = Omit<Anomaly, 'address' | 'kind'>
const missingPool = (pool: string): MissingPool => ({
  code: 'pool-missing',
  field: 'spec.pool',
  message: `spec.pool names pool ${JSON.stringify(pool)}, which is not on PVE (or not visible to this token: Pool.Audit) and no Pool of this cluster declares; declare it as a Pool or create it`,
})

/**
 * A pool marked for another cluster entry: joining it would change that entry's pool (and put the guest under
 * its backup jobs and permissions).
 */
const othersPool = (pool: string, marker: string): MissingPool => ({
  code: 'owned-elsewhere',
  field: 'spec.pool',
  message: `spec.pool names pool ${JSON.stringify(pool)}, which carries another cluster entry's marker (${marker}); the guest does not join it: choose a pool this entry owns`,
})

/**
 * The pool kind: creates and comment updates of the declared pools, the membership of every planned guest that
 * exists (after its other actions), and the deletes of owned pools git no longer declares (prune stage).
 */
export function planPools(ctx: KindContext): KindPlan {
  const out = emptyPlan()
  const planner = new PoolPlanner({
    desired: ctx.desired.manifests.filter((m): m is PoolManifest => m.kind === 'Pool'),
    named: new Set(ctx.desired.manifests.flatMap((m) => poolNeeded(m)?.id ?? [])),
    live: ctx.live.pools,
    policy: ctx.policy,
    levelOf: (m) => ctx.levelOf(`Pool/${m.metadata.name}`),
    ...out,
  })
  for (const g of ctx.guests)
    if (g.live && g.m.spec.pool !== undefined) planner.membership(g.m, g.base, ctx.actionsOf(g.base.address))
  planner.planDeclared()
  out.prunes = planner.prunes()
  return out
}

interface PoolEnv {
  /** the Pool manifests of this cluster */
  desired: readonly PoolManifest[]
  /** pool ids the desired manifests need (schema's poolNeeded: spec.pool, a backup job's pool, a parent) */
  named: ReadonlySet<string>
  live: Observed<readonly LivePool[]>
  policy: Policy
  levelOf: (m: PoolManifest) => number
  drafts: Draft[]
  anomalies: Anomaly[]
  skips: Skip[]
}

const byId = (a: { poolid: string }, b: { poolid: string }): number =>
  a.poolid < b.poolid ? -1 : a.poolid > b.poolid ? 1 : 0

class PoolPlanner {
  private readonly live = new Map<string, LivePool>()
  /** vmid -> the pool it is in (user.cfg's `vms` map: at most one) */
  private readonly memberOf = new Map<number, string>()
  private readonly declared = new Map<string, PoolManifest>()
  /** vmid -> the membership action planned for it this cycle */
  private readonly moves = new Map<number, string>()
  private readonly unreadable: string | undefined

  constructor(private readonly env: PoolEnv) {
    for (const m of env.desired) this.declared.set(m.spec.id, m)
    const live = env.live
    if ('unreadable' in live) this.unreadable = live.unreadable
    else
      for (const p of live.known) {
        this.live.set(p.poolid, p)
        for (const vmid of p.vmids) this.memberOf.set(vmid, p.poolid)
      }
  }

  private get known(): boolean {
    return this.unreadable === undefined
  }

  /** the membership of a guest that exists: join `spec.pool` when it is elsewhere or in no pool */
  membership(m: Guest, base: Base, after: readonly string[]): void {
    const pool = m.spec.pool
    if (pool === undefined) return
    if (!this.known) {
      const why = `spec.pool: the pools could not be read this cycle (${this.unreadable}); membership not planned`
      this.env.skips.push(skipOn(base, m.spec.vmid, 'unknown', why))
      return
    }
    const current = this.memberOf.get(m.spec.vmid)
    if (current === pool) return
    if (!this.live.has(pool) && !this.declared.has(pool)) {
      this.env.anomalies.push({ ...missingPool(pool), address: base.address, kind: m.kind })
      return
    }
    const comment = this.live.get(pool)?.comment
    if (commentOwner(comment, this.env.policy) === 'other') {
      this.env.anomalies.push({ ...othersPool(pool, commentWord(comment)), address: base.address, kind: m.kind })
      return
    }
    const id = `${base.address}#pool`
    this.moves.set(m.spec.vmid, id)
    this.env.drafts.push({
      ...base,
      kind: 'Pool',
      id,
      type: 'join',
      reason: `${base.resource}: ${current === undefined ? 'in no pool' : `in pool ${current}`}; will join pool ${pool}`,
      diffs: [{ field: 'spec.pool', key: 'pool', ...(current !== undefined ? { before: current } : {}), after: pool }],
      disruption: 'none',
      requests: [
        {
          call: 'updatePool',
          params: { poolid: pool, vms: String(m.spec.vmid), ...(current !== undefined ? { 'allow-move': 1 } : {}) },
        },
      ],
      after: [...after],
    })
  }

  /** creates and comment updates of the declared pools */
  planDeclared(): void {
    const { policy } = this.env
    for (const m of [...this.env.desired].sort((a, b) => byId({ poolid: a.spec.id }, { poolid: b.spec.id }))) {
      const id = m.spec.id
      const address = poolAddress(id)
      const base = clusterObjectBase(KIND, m.metadata.name, address, this.env.levelOf(m))
      if (!this.known) {
        this.env.skips.push({
          code: 'unknown',
          address,
          kind: KIND,
          node: '',
          message: `the pools could not be read this cycle (${this.unreadable}); no create, update or delete`,
        })
        continue
      }
      const comment = poolComment(m, policy)
      const live = this.live.get(id)
      if (!live) {
        const parent = poolNeeded(m)?.id
        if (parent !== undefined && !this.live.has(parent) && !this.declared.has(parent)) {
          this.env.anomalies.push({
            code: 'pool-missing',
            address,
            kind: KIND,
            field: 'spec.id',
            message: `the parent pool ${JSON.stringify(parent)} is not on PVE and no Pool of this cluster declares it; create_pool needs it first`,
          })
          continue
        }
        this.env.drafts.push({
          ...base,
          type: 'create',
          reason: `${address}: not on PVE; will create`,
          diffs: [
            { field: 'spec.comment', key: 'comment', after: comment },
            { field: 'spec.id', key: 'poolid', after: id },
          ],
          requests: [{ call: 'createPool', params: { poolid: id, comment } }],
        })
        continue
      }
      const owner = commentOwner(live.comment, policy)
      if (owner === 'other') {
        this.env.anomalies.push({
          code: 'owned-elsewhere',
          address,
          kind: KIND,
          message: `pool ${id} carries another cluster entry's marker (${commentWord(live.comment)}); Pool/${m.metadata.name} does not take it over`,
        })
        continue
      }
      if (live.comment === comment) continue
      const diff: FieldDiff = {
        field: 'spec.comment',
        key: 'comment',
        ...(live.comment !== undefined ? { before: live.comment } : {}),
        after: comment,
      }
      this.env.drafts.push({
        ...base,
        type: 'update',
        reason: `${address}: ${owner === 'self' ? '' : `claimed (declared, no ${commentMarker(policy)} marker yet); `}drift (comment)`,
        diffs: [diff],
        requests: [{ call: 'updatePool', params: { poolid: id, comment } }],
      })
    }
  }

  /**
   * Deletes of owned pools git no longer declares, for the prune stage. A pool goes only once nothing stays in
   * it: its members are pruned in this plan (a guest's destroy takes it out of its pool, remove_vm_access) or
   * moved to another pool, and its sub-pools go first.
   */
  prunes(): PruneGroup {
    const { policy } = this.env
    const owned = [...this.live.values()].filter((p) => commentOwner(p.comment, policy) === 'self').length
    return {
      guarded: true,
      owner: 'owned',
      noun: 'live pool(s)',
      owned: new Map([[KIND, owned]]),
      desired: new Map([[KIND, this.env.desired.length]]),
      candidates: (chosen) => this.candidates(chosen),
    }
  }

  private candidates(chosen: readonly Draft[]): { candidates: PruneCandidate[]; skips: Skip[]; anomalies: Anomaly[] } {
    const found: PruneCandidate[] = []
    const skips: Skip[] = []
    const skip = (code: Skip['code'], p: LivePool, message: string) =>
      skips.push({ code, address: poolAddress(p.poolid), kind: KIND, node: '', message })
    if (!this.known) return { candidates: found, skips, anomalies: [] }
    const { policy } = this.env
    const tag = policy.ownershipTag
    const leaving = new Map<number, string>(this.moves)
    for (const d of chosen)
      if (d.vmid !== undefined && d.type === 'delete') leaving.set(d.vmid, d.id ?? `${d.address}#${d.type}`)
    const named = this.env.named

    const candidates: LivePool[] = []
    for (const p of [...this.live.values()].sort(byId)) {
      const owner = commentOwner(p.comment, policy)
      if (this.declared.has(p.poolid)) continue
      if (owner === 'self') candidates.push(p)
      else if (owner === 'unmarked')
        skip(
          'unmarked',
          p,
          `marked ${commentMarker({ ownershipTag: tag })} without a cluster entry and absent in git; not pruned (it may be another entry's): write ${commentMarker(policy)} in its comment to let this entry prune it, or delete it by hand`,
        )
      else if (owner === 'other') skip('owned-elsewhere', p, "another cluster entry's pool; never touched")
      else skip('untagged', p, `pool without the ${commentMarker(policy)} marker in its comment; never touched`)
    }
    // what each candidate still holds once this plan has run; children first (deepest ids sort after parents)
    const deletes = new Map<string, string>()
    for (const p of candidates.sort((a, b) => b.poolid.split('/').length - a.poolid.split('/').length || byId(a, b))) {
      const after: string[] = []
      const waitsFor: string[] = []
      const blockers: string[] = []
      if (named.has(p.poolid)) blockers.push('a declared guest, backup job or pool needs it')
      for (const child of this.live.keys()) {
        if (!child.startsWith(`${p.poolid}/`) || child.slice(p.poolid.length + 1).includes('/')) continue
        const d = deletes.get(child)
        if (d !== undefined) {
          after.push(d)
          waitsFor.push(d)
        } else blockers.push(`it contains pool ${child}`)
      }
      if (p.storages.length > 0) blockers.push(`it contains storage ${p.storages.join(', ')}`)
      const staying = p.vmids.filter((vmid) => !leaving.has(vmid))
      for (const vmid of p.vmids) {
        const d = leaving.get(vmid)
        if (d !== undefined) after.push(d)
      }
      if (staying.length > 0)
        blockers.push(
          `it contains guest${staying.length === 1 ? '' : 's'} ${staying.join(', ')}, which this plan does not prune or move`,
        )
      if (blockers.length > 0) {
        skip('prune-guard', p, `owned and absent in git, but not deleted: ${blockers.join('; ')}`)
        continue
      }
      const id = `${poolAddress(p.poolid)}#delete`
      deletes.set(p.poolid, id)
      found.push({
        kind: KIND,
        waitsFor,
        draft: {
          id,
          address: poolAddress(p.poolid),
          kind: KIND,
          node: '',
          type: 'delete',
          reason: `present on PVE (${commentMarker(policy)} marker) but absent in git`,
          diffs: [],
          disruption: 'none',
          tier: 9,
          level: 0,
          requests: [{ call: 'deletePool', poolid: p.poolid } satisfies PveRequest],
          after: [...new Set(after)].sort(),
        },
      })
    }
    return { candidates: found, skips, anomalies: [] }
  }
}
