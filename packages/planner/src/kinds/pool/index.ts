/** The pool kind: resource pools (`Pool` manifests) and a guest's membership (`spec.pool`). */
import { isPool, namedPools } from '../../desired.js'
import { defineKind } from '../../kit/kind.js'
import { needs, one, str, anyOf } from '../../kit/privileges.js'
import { sanitiseName } from '../../kit/names.js'
import { splitList } from '@proxops/pve-client/wire'
import { adoptPools, poolMemberships } from './adopt.js'
import { confirmPool } from './confirm.js'
import { poolAddress } from '../../kit/draft.js'
import { planPools } from './plan.js'
import { readPools } from './read.js'
import { poolRunners } from './run.js'

/** PVE::API2::Pool create_pool / delete_pool: Pool.Allocate on the pool's own path */
const allocate = (poolid: string) => [{ need: one(`/pool/${poolid}`, 'Pool.Allocate') }]

export const pool = defineKind({
  name: 'pool',
  manifests: ['Pool'],
  addresses: (m) => (isPool(m) ? [poolAddress(m.spec.id)] : []),
  observe: (desired, policy) => ({
    // pools are read member by member only where the desired state names them (the rest from /cluster/resources)
    pools: namedPools(desired),
    // ... and the pools this entry marked (its prune candidates); other entries' and tools' pools cost nothing
    ownership: {
      ownershipTag: policy.ownershipTag,
      ...(policy.clusterEntry !== undefined ? { clusterEntry: policy.clusterEntry } : {}),
    },
  }),
  read: readPools,
  plan: planPools,
  // after the guests: delete_pool refuses a pool that still has members
  pruneOrder: 2,
  run: poolRunners,
  privileges: {
    createPool: (r) => allocate(String(r.params.poolid)),
    deletePool: (r) => allocate(r.poolid),
    updatePool: (r, action) => {
      // update_pool: Pool.Allocate on the pool, check_perm_modify on every member it adds or removes, and
      // Pool.Allocate on the pool a guest leaves with allow-move (the plan's `spec.pool` diff names it)
      const { out, push } = needs()
      push(undefined, [one(`/pool/${String(r.params.poolid)}`, 'Pool.Allocate')])
      for (const vmid of splitList(str(r.params, 'vms')))
        push('vms', [anyOf(`/vms/${vmid}`, 'Permissions.Modify', 'VM.Allocate')])
      const left = action.diffs.find((d) => d.field === 'spec.pool')?.before
      if (r.params['allow-move'] !== undefined && typeof left === 'string')
        push('allow-move', [one(`/pool/${left}`, 'Pool.Allocate')])
      return out
    },
  },
  confirm: confirmPool,
  summary: { join: 'update', create: 'create', update: 'update', delete: 'delete' },
  adopt: {
    // the pools (selectForAdoption keeps them only without a guest filter); guests name theirs in spec.pool
    order: 4,
    run(live, ctx) {
      const memberships = poolMemberships(live)
      if (memberships.warning) ctx.collect.warnings.push(memberships.warning)
      ctx.files.push(
        ...adoptPools(live, ctx.options.cluster, ctx.options.poolManifests, ctx.claim, sanitiseName, ctx.tag),
      )
      for (const { guest, file } of ctx.guestFiles.values()) {
        const poolid = memberships.of.get(guest.vmid)
        if (poolid !== undefined) (file.document.spec as Record<string, unknown>).pool = poolid
      }
    },
  },
})
