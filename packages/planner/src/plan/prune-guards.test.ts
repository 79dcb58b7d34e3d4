/**
 * The one prune stage (plan/prune.ts) alone, on hand-built groups: the budget, the empty-desired and ratio guards
 * and their overrides, deferral of a candidate waiting for a deferred one, and the messages an operator reads to
 * learn why a delete did not happen. Pure, without the simulator: these are the tests `pnpm mutate` runs against
 * every mutant of the stage (docs/mutation-testing.md).
 */
import { describe, expect, test } from 'vitest'
import type { Draft } from '../kit/draft.js'
import type { PruneCandidate, PruneGroup } from '../kit/kind.js'
import { DEFAULT_POLICY, type Policy, type Skip } from '../plan-types.js'
import { prune } from './prune.js'

// not the shared fixtures: their imports would cost every mutant's run seconds
const policy = (over: Partial<Policy> = {}): Policy => ({ ...DEFAULT_POLICY, ...over })

const draft = (kind: string, vmid: number, node = 'pve1'): Draft => ({
  id: `${kind}/${node}/${vmid}#delete`,
  address: `${kind}/${node}/${vmid}`,
  kind: kind as Draft['kind'],
  node,
  vmid,
  type: 'delete',
  reason: 'absent in git',
  diffs: [],
  disruption: 'none',
  tier: 9,
  level: 0,
  requests: [],
})

const candidate = (kind: string, vmid: number, over: Partial<PruneCandidate> = {}): PruneCandidate => ({
  kind,
  draft: draft(kind, vmid),
  ...over,
})

const group = (
  candidates: PruneCandidate[],
  counts: { owned?: Record<string, number>; desired?: Record<string, number>; guarded?: boolean } = {},
  found: { skips?: Skip[]; seen?: (chosen: readonly Draft[]) => void } = {},
): PruneGroup => ({
  guarded: counts.guarded ?? true,
  owner: 'proxops-tagged',
  noun: 'live object(s)',
  owned: new Map(Object.entries(counts.owned ?? {})),
  desired: new Map(Object.entries(counts.desired ?? {})),
  candidates: (chosen) => {
    found.seen?.(chosen)
    return { candidates, skips: found.skips ?? [], anomalies: [] }
  },
})

const ids = (drafts: readonly Draft[]) => drafts.map((d) => d.id)

describe('the empty-desired guard', () => {
  test('holds back every candidate of a kind git declares none of, and counts them in its message', () => {
    const r = prune(
      [
        group([candidate('VM', 101), candidate('VM', 102), candidate('LXC', 201)], {
          owned: { VM: 2, LXC: 4 },
          desired: { LXC: 3 },
        }),
      ],
      policy({ pruneBudget: 'unlimited', pruneRatioLimit: 1 }),
    )
    expect(ids(r.drafts)).toEqual(['LXC/pve1/201#delete'])
    expect(r.anomalies).toEqual([
      {
        code: 'empty-desired',
        kind: 'VM',
        message:
          '0 desired VM but 2 proxops-tagged live object(s) would be pruned: probable bad push; no VM is pruned this cycle (pass --allow-empty VM to accept)',
      },
    ])
    expect(r.skips).toEqual(
      [101, 102].map((vmid) => ({
        code: 'prune-guard',
        address: `VM/pve1/${vmid}`,
        kind: 'VM',
        node: 'pve1',
        vmid,
        message: 'prune deferred by the empty-desired or ratio guard (pass --allow-empty VM to accept)',
      })),
    )
  })

  test('counts only the candidates of its own kind', () => {
    const r = prune(
      [
        group([candidate('LXC', 201), candidate('VM', 101), candidate('LXC', 202), candidate('LXC', 203)], {
          owned: { VM: 1, LXC: 3 },
          desired: { VM: 1 },
        }),
      ],
      policy({ pruneBudget: 'unlimited', pruneRatioLimit: 1 }),
    )
    expect(r.anomalies.map((a) => a.message)).toEqual([
      '0 desired LXC but 3 proxops-tagged live object(s) would be pruned: probable bad push; no LXC is pruned this cycle (pass --allow-empty LXC to accept)',
    ])
    expect(ids(r.drafts)).toEqual(['VM/pve1/101#delete'])
  })

  test('one desired object of the kind lets the prunes through', () => {
    const r = prune(
      [group([candidate('VM', 101)], { owned: { VM: 2 }, desired: { VM: 1 } })],
      policy({ pruneRatioLimit: 1 }),
    )
    expect(r.anomalies).toEqual([])
    expect(ids(r.drafts)).toEqual(['VM/pve1/101#delete'])
  })

  test('a held kind takes none of the budget: the next kind in the group gets it', () => {
    const r = prune(
      [group([candidate('VM', 101), candidate('LXC', 201)], { owned: { VM: 1, LXC: 2 }, desired: { LXC: 1 } })],
      policy({ pruneBudget: 1, pruneRatioLimit: 1 }),
    )
    expect(ids(r.drafts)).toEqual(['LXC/pve1/201#delete'])
    expect(r.skips.map((s) => [s.vmid, s.code])).toEqual([[101, 'prune-guard']])
  })

  test('--allow-empty lifts it for the kind it names only', () => {
    const r = prune(
      [group([candidate('VM', 101), candidate('LXC', 201)], { owned: { VM: 1, LXC: 1 } })],
      policy({ allowEmpty: ['VM'], pruneRatioLimit: 1 }),
    )
    expect(ids(r.drafts)).toEqual(['VM/pve1/101#delete'])
    expect(r.anomalies.map((a) => [a.code, a.kind])).toEqual([['empty-desired', 'LXC']])
  })

  test('an unguarded group (a declared guest losing its HA resource) is never held', () => {
    const r = prune(
      [group([candidate('VM', 101)], { owned: { VM: 1 }, guarded: false })],
      policy({ pruneRatioLimit: 0 }),
    )
    expect(ids(r.drafts)).toEqual(['VM/pve1/101#delete'])
    expect(r.anomalies).toEqual([])
    expect(r.skips).toEqual([])
  })
})

describe('the ratio guard', () => {
  test('holds back a kind whose chosen prunes are more than the limit of the owned ones', () => {
    const r = prune(
      [
        group([candidate('VM', 101), candidate('VM', 102), candidate('VM', 103)], {
          owned: { VM: 5 },
          desired: { VM: 2 },
        }),
      ],
      policy({ pruneBudget: 'unlimited', pruneRatioLimit: 0.5 }),
    )
    expect(r.drafts).toEqual([])
    expect(r.anomalies).toEqual([
      {
        code: 'prune-ratio',
        kind: 'VM',
        message:
          'this cycle would prune 3 of 5 proxops-tagged VM (more than 50%): probable bad push; no VM is pruned this cycle (pass --allow-empty VM to accept)',
      },
    ])
    expect(r.skips.map((s) => [s.vmid, s.code, s.message])).toEqual(
      [101, 102, 103].map((v) => [
        v,
        'prune-guard',
        'prune deferred by the empty-desired or ratio guard (pass --allow-empty VM to accept)',
      ]),
    )
  })

  test('counts each kind on its own', () => {
    // one VM of two and one LXC of two: 50% each, though two of four chosen in the group are of either kind
    const r = prune(
      [group([candidate('VM', 101), candidate('LXC', 201)], { owned: { VM: 2, LXC: 2 }, desired: { VM: 1, LXC: 1 } })],
      policy({ pruneBudget: 'unlimited', pruneRatioLimit: 0.5 }),
    )
    expect(r.anomalies).toEqual([])
    expect(ids(r.drafts)).toEqual(['VM/pve1/101#delete', 'LXC/pve1/201#delete'])
  })

  test('exactly the limit passes', () => {
    const r = prune(
      [group([candidate('VM', 101), candidate('VM', 102)], { owned: { VM: 4 }, desired: { VM: 2 } })],
      policy({ pruneBudget: 'unlimited', pruneRatioLimit: 0.5 }),
    )
    expect(r.anomalies).toEqual([])
    expect(ids(r.drafts)).toHaveLength(2)
  })

  test('counts what the budget chose, not every candidate', () => {
    // 3 of 4 would be 75%, but the budget chooses 2 (50%)
    const r = prune(
      [
        group([candidate('VM', 101), candidate('VM', 102), candidate('VM', 103)], {
          owned: { VM: 4 },
          desired: { VM: 1 },
        }),
      ],
      policy({ pruneBudget: 2, pruneRatioLimit: 0.5 }),
    )
    expect(r.anomalies).toEqual([])
    expect(ids(r.drafts)).toEqual(['VM/pve1/101#delete', 'VM/pve1/102#delete'])
  })

  test('a kind the budget chose none of raises no anomaly, and the owned count defaults to none', () => {
    const r = prune(
      [group([candidate('VM', 101)], { desired: { VM: 1 } })],
      policy({ pruneBudget: 0, pruneRatioLimit: 0.5 }),
    )
    expect(r.anomalies).toEqual([])
    // with nothing owned recorded, one prune is more than any ratio of zero
    const held = prune([group([candidate('VM', 101)], { desired: { VM: 1 } })], policy({ pruneRatioLimit: 0.99 }))
    expect(held.anomalies.map((a) => a.message)).toEqual([
      'this cycle would prune 1 of 0 proxops-tagged VM (more than 99%): probable bad push; no VM is pruned this cycle (pass --allow-empty VM to accept)',
    ])
  })

  test('--allow-empty lifts it too', () => {
    const r = prune(
      [group([candidate('VM', 101)], { owned: { VM: 1 }, desired: { VM: 1 } })],
      policy({ pruneRatioLimit: 0.1, allowEmpty: ['VM'] }),
    )
    expect(ids(r.drafts)).toEqual(['VM/pve1/101#delete'])
  })

  test('a kind the ratio guard holds gives its budget back to the next group', () => {
    const r = prune(
      [
        group([candidate('VM', 101), candidate('VM', 102)], { owned: { VM: 2 }, desired: { VM: 1 } }),
        group([candidate('Pool', 1)], { owned: { Pool: 2 }, desired: { Pool: 1 } }),
      ],
      policy({ pruneBudget: 2, pruneRatioLimit: 0.5 }),
    )
    expect(r.anomalies.map((a) => a.code)).toEqual(['prune-ratio'])
    expect(ids(r.drafts)).toEqual(['Pool/pve1/1#delete'])
  })
})

describe('the budget', () => {
  const budgetMessage =
    'prune deferred (budget 2 per cycle: raise it with --prune-budget or reconcile.prune-budget; the daemon also caps it by reconcile.prune-window)'

  test('is one budget for every group, spent in their order; the rest is deferred with a message naming it', () => {
    const first = group([candidate('BackupJob', 1)], { owned: { BackupJob: 1 }, desired: { BackupJob: 1 } })
    let seen: (string | undefined)[] = []
    const second = group(
      [candidate('VM', 101), candidate('VM', 102)],
      { owned: { VM: 4 }, desired: { VM: 1 } },
      { seen: (chosen) => (seen = ids(chosen)) },
    )
    const r = prune([first, second], policy({ pruneBudget: 2, pruneRatioLimit: 1 }))
    expect(ids(r.drafts)).toEqual(['BackupJob/pve1/1#delete', 'VM/pve1/101#delete'])
    // a later group sees what the earlier ones chose (a pool goes once its guests are pruned)
    expect(seen).toEqual(['BackupJob/pve1/1#delete'])
    expect(r.skips).toEqual([
      { code: 'prune-budget', address: 'VM/pve1/102', kind: 'VM', node: 'pve1', vmid: 102, message: budgetMessage },
    ])
  })

  test("a candidate's own message replaces the default one; a skip without a vmid has none", () => {
    const pool: PruneCandidate = {
      kind: 'Pool',
      draft: { ...draft('Pool', 0), id: 'Pool/a#delete', address: 'Pool/a', vmid: undefined },
      overBudget: 'pool a waits for the budget',
    }
    const r = prune(
      [group([candidate('VM', 101), pool], { owned: { VM: 1, Pool: 1 }, desired: { VM: 1, Pool: 1 } })],
      policy({ pruneBudget: 1, pruneRatioLimit: 1 }),
    )
    expect(r.skips).toEqual([
      { code: 'prune-budget', address: 'Pool/a', kind: 'Pool', node: 'pve1', message: 'pool a waits for the budget' },
    ])
    expect(Object.keys(r.skips[0] as object)).not.toContain('vmid')
  })

  test('a candidate waiting for a deferred one is deferred with it, even with budget left', () => {
    const r = prune(
      [
        group(
          [
            candidate('VM', 101),
            candidate('VM', 102),
            candidate('VM', 103, { waitsFor: ['VM/pve1/102#delete'] }),
            candidate('VM', 104, { waitsFor: ['VM/pve1/101#delete'] }),
          ],
          { owned: { VM: 4 }, desired: { VM: 1 } },
        ),
      ],
      policy({ pruneBudget: 1, pruneRatioLimit: 1 }),
    )
    expect(ids(r.drafts)).toEqual(['VM/pve1/101#delete'])
    expect(r.skips.map((s) => s.vmid)).toEqual([102, 103, 104])
    const two = prune(
      [
        group(
          [candidate('VM', 101), candidate('VM', 102), candidate('VM', 103, { waitsFor: ['VM/pve1/102#delete'] })],
          {
            owned: { VM: 3 },
            desired: { VM: 1 },
          },
        ),
      ],
      policy({ pruneBudget: 2, pruneRatioLimit: 1 }),
    )
    // 103 waits for 102, which was chosen: it is deferred by the budget only
    expect(ids(two.drafts)).toEqual(['VM/pve1/101#delete', 'VM/pve1/102#delete'])
    expect(two.skips.map((s) => [s.vmid, s.message])).toEqual([[103, budgetMessage]])
  })

  test('a waiting candidate whose dependency went through is chosen', () => {
    const r = prune(
      [
        group([candidate('VM', 101), candidate('VM', 102, { waitsFor: ['VM/pve1/101#delete'] })], {
          owned: { VM: 2 },
          desired: { VM: 1 },
        }),
      ],
      policy({ pruneBudget: 'unlimited', pruneRatioLimit: 1 }),
    )
    expect(ids(r.drafts)).toEqual(['VM/pve1/101#delete', 'VM/pve1/102#delete'])
    expect(r.skips).toEqual([])
  })

  test('a budget of 0 prunes nothing; what the groups found on the way is kept', () => {
    const found: Skip = { code: 'untagged', address: 'VM/pve1/300', kind: 'VM', node: 'pve1', vmid: 300, message: 'x' }
    const r = prune(
      [group([candidate('VM', 101)], { owned: { VM: 1 }, desired: { VM: 1 } }, { skips: [found] })],
      policy({ pruneBudget: 0, pruneRatioLimit: 1 }),
    )
    expect(r.drafts).toEqual([])
    expect(r.skips.map((s) => s.code)).toEqual(['untagged', 'prune-budget'])
    expect(r.skips[1]?.message).toContain('budget 0 per cycle')
  })
})

describe('prune: never (docs/operations.md, "Per-object policies")', () => {
  const named = (kind: string, vmid: number, name: string, over: Partial<PruneCandidate> = {}): PruneCandidate => {
    const c = candidate(kind, vmid, over)
    return { ...c, draft: { ...c.draft, name } }
  }
  const kept = (vmid: number, kind = 'VM'): Skip => ({
    code: 'prune-never',
    address: `${kind}/pve1/${vmid}`,
    kind: kind as Skip['kind'],
    node: 'pve1',
    vmid,
    message: 'owned and absent in git; kept by its prune: never policy (delete it by hand when meant)',
  })

  test('an object kept by kind and name is reported, never deleted, and spends no budget', () => {
    const r = prune(
      [group([named('VM', 101, 'db'), named('VM', 102, 'web')], { owned: { VM: 3 }, desired: { VM: 1 } })],
      policy({ pruneBudget: 1, pruneRatioLimit: 1, pruneNever: { objects: [{ kind: 'VM', name: 'db' }] } }),
    )
    expect(ids(r.drafts)).toEqual(['VM/pve1/102#delete'])
    expect(r.skips).toEqual([kept(101)])
    expect(r.anomalies).toEqual([])
  })

  test('the name comes from the address when the draft has none; another kind of that name is not kept', () => {
    const byAddress = candidate('VM', 101)
    const c = { ...byAddress, draft: { ...byAddress.draft, address: 'VM/pve1/101(db)' } }
    const r = prune(
      [group([c, named('LXC', 201, 'db')], { owned: { VM: 2, LXC: 2 }, desired: { VM: 1, LXC: 1 } })],
      policy({ pruneBudget: 'unlimited', pruneRatioLimit: 1, pruneNever: { objects: [{ kind: 'VM', name: 'db' }] } }),
    )
    expect(ids(r.drafts)).toEqual(['LXC/pve1/201#delete'])
    expect(r.skips.map((s) => [s.code, s.address])).toEqual([['prune-never', 'VM/pve1/101(db)']])
  })

  test('the whole cluster: every candidate is kept and reported, none deleted', () => {
    const r = prune(
      [group([candidate('VM', 101), candidate('VM', 102)], { owned: { VM: 2 }, desired: { VM: 1 } })],
      policy({ pruneBudget: 'unlimited', pruneRatioLimit: 1, pruneNever: { all: true } }),
    )
    expect(r.drafts).toEqual([])
    expect(r.skips).toEqual([kept(101), kept(102)])
  })

  test('`all: false` and an empty list keep nothing', () => {
    for (const pruneNever of [{ all: false }, { objects: [] }, {}]) {
      const r = prune(
        [group([candidate('VM', 101)], { owned: { VM: 2 }, desired: { VM: 1 } })],
        policy({ pruneBudget: 'unlimited', pruneRatioLimit: 1, pruneNever }),
      )
      expect(ids(r.drafts)).toEqual(['VM/pve1/101#delete'])
      expect(r.skips).toEqual([])
    }
  })

  test('a candidate that waits for a kept one is deferred with it, never deleted first', () => {
    const r = prune(
      [
        group(
          [
            named('VM', 101, 'db'),
            named('VM', 102, 'web', { waitsFor: ['VM/pve1/101#delete'] }),
            named('VM', 103, 'cache'),
          ],
          { owned: { VM: 4 }, desired: { VM: 1 } },
        ),
      ],
      policy({ pruneBudget: 'unlimited', pruneRatioLimit: 1, pruneNever: { objects: [{ kind: 'VM', name: 'db' }] } }),
    )
    expect(ids(r.drafts)).toEqual(['VM/pve1/103#delete'])
    expect(r.skips.map((s) => [s.code, s.vmid])).toEqual([
      ['prune-never', 101],
      ['prune-budget', 102],
    ])
  })

  test('kept objects do not count for the empty-desired guard', () => {
    const r = prune(
      [group([named('VM', 101, 'db'), named('VM', 102, 'web')], { owned: { VM: 2 } })],
      policy({ pruneBudget: 'unlimited', pruneRatioLimit: 1, pruneNever: { objects: [{ kind: 'VM', name: 'db' }] } }),
    )
    expect(r.anomalies.map((a) => a.message)).toEqual([
      '0 desired VM but 1 proxops-tagged live object(s) would be pruned: probable bad push; no VM is pruned this cycle (pass --allow-empty VM to accept)',
    ])
    expect(r.drafts).toEqual([])
  })
})
