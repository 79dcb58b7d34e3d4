import { describe, expect, it } from 'vitest'
import { emptyInventory } from '../fixtures.test.helpers.js'
import type { LiveGuest, LiveInventory } from '../inventory.js'
import { makeAction, makePlan } from '../testing/index.js'
import { ReconcileError } from './errors.js'
import { checkSavedPlan } from './saved-plan.js'

const commit = '0123456789abcdef0123456789abcdef01234567'
const saved = {
  ...makePlan([
    makeAction({
      address: 'VM/pve1/100(web)',
      vmid: 100,
      type: 'create',
      requests: [{ call: 'createGuest', node: 'pve1', guest: 'qemu', params: { vmid: 100 } }],
    }),
    makeAction({
      address: 'VM/pve2/101(db)',
      digest: 'abc',
      requests: [{ call: 'updateConfig', node: 'pve2', guest: 'qemu', vmid: 101, params: { cores: 4 } }],
    }),
    makeAction({
      address: 'LXC/pve3/300',
      kind: 'LXC',
      type: 'delete',
      digest: 'x',
      requests: [{ call: 'deleteGuest', node: 'pve3', guest: 'lxc', vmid: 300 }],
    }),
  ]),
  commit,
}
const guest = (vmid: number, digest: string): LiveGuest => ({
  type: 'qemu',
  vmid,
  node: 'pve2',
  template: false,
  status: 'running',
  tags: [],
  digest,
  config: {},
  pending: {},
  pendingDeletes: [],
})
const live = (guests: LiveGuest[], unknown: number[] = []): LiveInventory =>
  emptyInventory({
    cluster: 'homelab',
    pveVersion: '9.1',
    nodes: [],
    guests,
    unknownGuests: unknown.map((vmid) => ({ type: 'qemu', vmid, node: 'pve1', tags: [], unreadable: 'read failed' })),
  })

function refusal(fn: () => void): string {
  try {
    fn()
  } catch (e) {
    expect(e).toBeInstanceOf(ReconcileError)
    expect((e as ReconcileError).code).toBe('PLAN_MISMATCH')
    return (e as ReconcileError).message
  }
  return ''
}

describe('checkSavedPlan', () => {
  it('accepts the plan when commit and digests still hold', () => {
    expect(refusal(() => checkSavedPlan(saved, commit, live([guest(101, 'abc'), guest(300, 'x')])))).toBe('')
  })
  it('refuses a moved commit, a changed digest, an unreadable object and a create that exists', () => {
    expect(refusal(() => checkSavedPlan(saved, 'fff', live([guest(101, 'abc')])))).toMatch(
      /made at commit 0123456789abcdef0123456789abcdef01234567, the repository is now at fff/,
    )
    expect(refusal(() => checkSavedPlan(saved, commit, live([guest(101, 'changed')])))).toMatch(
      /VM\/pve2\/101\(db\) changed on PVE since the plan was made/,
    )
    expect(refusal(() => checkSavedPlan(saved, commit, live([guest(101, 'abc')], [300])))).toMatch(
      /LXC\/pve3\/300 cannot be read now/,
    )
    expect(
      refusal(() => checkSavedPlan(saved, commit, live([guest(101, 'abc'), guest(300, 'x'), guest(100, 'new')]))),
    ).toMatch(/VM\/pve1\/100\(web\) exists on PVE now but the plan creates it/)
  })
})
