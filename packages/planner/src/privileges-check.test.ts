/**
 * The privilege preflight on hand-built needs (privileges.ts, kit/privileges.ts): what is taken out of a plan when
 * the token lacks a privilege, and the words that tell the operator why and how to grant it. Part of the tests
 * `pnpm mutate` runs (docs/mutation-testing.md); privileges.test.ts plans whole estates.
 */
import { describe, expect, test } from 'vitest'
import { deletes, needs, str } from './kit/privileges.js'
import { checkPrivileges, neededPaths, pveumGrant, type PrivilegeNeed } from './privileges.js'
import type { PlanParams } from './plan-types.js'
import { makeAction, makePlan } from './testing/index.js'

const actor = 'ops@pve!ci'
const update = makeAction({
  type: 'update',
  diffs: [{ key: 'cores', field: 'spec.cpu.cores', before: '1', after: '2' }],
  requests: [{ call: 'updateConfig', node: 'pve1', guest: 'qemu', vmid: 100, params: { cores: 2 } }],
})
const start = makeAction({
  type: 'start',
  dependsOn: [update.id],
  requests: [{ call: 'start', node: 'pve1', guest: 'qemu', vmid: 100 }],
})
const pool = makeAction({ address: 'Pool/a', kind: 'Pool', type: 'update', requires: ['VM/pve1/100'], requests: [] })
const other = makeAction({ requests: [{ call: 'updateConfig', node: 'pve1', guest: 'qemu', vmid: 200, params: {} }] })
const plan = makePlan([update, start, pool, other])

const cpu: PrivilegeNeed = {
  action: update.id,
  key: 'cores',
  anyOf: [
    { path: '/vms/100', privs: ['VM.Config.CPU'] },
    { path: '/', privs: ['Sys.Modify', 'Sys.Audit'] },
  ],
}
const granted = (entries: Record<string, string[]>) => new Map(Object.entries(entries).map(([p, s]) => [p, new Set(s)]))

describe('checkPrivileges', () => {
  test('root@pam, or a token holding every need (any one alternative), leaves the plan as it is', () => {
    expect(checkPrivileges(plan, [cpu], granted({}), 'root@pam')).toBe(plan)
    expect(checkPrivileges(plan, [cpu], granted({ '/vms/100': ['VM.Config.CPU'] }), actor)).toBe(plan)
    expect(checkPrivileges(plan, [cpu], granted({ '/': ['Sys.Modify', 'Sys.Audit'] }), actor)).toBe(plan)
    // a need of an action the plan does not have is no reason to block
    expect(checkPrivileges(plan, [{ ...cpu, action: 'gone' }], granted({}), actor)).toBe(plan)
  })

  test('a missing privilege takes the action and what depends on it out, says why and the pveum line that grants it', () => {
    const out = checkPrivileges(plan, [cpu, cpu], granted({ '/': ['Sys.Modify'] }), actor)
    expect(out.actions.map((a) => a.id)).toEqual([other.id])
    expect(out.anomalies).toEqual([
      {
        code: 'missing-privilege',
        address: 'VM/pve1/100',
        kind: 'VM',
        field: 'spec.cpu.cores',
        message:
          "update of VM/pve1/100: ops@pve!ci lacks VM.Config.CPU on /vms/100 (or Sys.Modify+Sys.Audit on /) (for cores); grant it with: pveum acl modify /vms/100 --users ops@pve --tokens 'ops@pve!ci' --roles PVEVMAdmin",
      },
    ])
    // a skip of what has no VMID carries no `vmid` at all
    expect(out.skips).toStrictEqual([
      {
        code: 'missing-privilege',
        address: 'Pool/a',
        kind: 'Pool',
        node: 'pve1',
        message: `update of Pool/a waits for VM/pve1/100, which the token lacks privileges for`,
      },
      {
        code: 'missing-privilege',
        address: 'VM/pve1/100',
        kind: 'VM',
        node: 'pve1',
        vmid: 100,
        message: `start of VM/pve1/100 waits for ${update.id}, which the token lacks privileges for`,
      },
    ])
    expect(out.summary).toEqual({ ...plan.summary, ...out.summary })
    expect(out.summary).not.toEqual(plan.summary)
  })

  test('a dependant of a dependant goes too', () => {
    const third = makeAction({
      address: 'VM/pve1/300',
      dependsOn: [start.id],
      requests: [{ call: 'updateConfig', node: 'pve1', guest: 'qemu', vmid: 300, params: {} }],
    })
    const out = checkPrivileges(makePlan([third, update, start]), [cpu], granted({}), actor)
    expect(out.actions).toEqual([])
  })

  test('a root-only need names what it is for; one without a key or a diff has no field', () => {
    const out = checkPrivileges(
      makePlan([update]),
      [
        { action: update.id, key: 'args', rootOnly: 'raw option args' },
        { action: update.id, anyOf: [{ path: '/vms/100', privs: ['VM.PowerMgmt'] }] },
      ],
      granted({}),
      actor,
    )
    expect(out.anomalies.map((a) => [a.field, a.message])).toEqual([
      [
        undefined,
        "update of VM/pve1/100: ops@pve!ci lacks VM.PowerMgmt on /vms/100; grant it with: pveum acl modify /vms/100 --users ops@pve --tokens 'ops@pve!ci' --roles PVEVMUser",
      ],
      [
        'args',
        'update of VM/pve1/100: raw option args; ops@pve!ci cannot do it (PVE checks the caller is root@pam itself, which no API token is)',
      ],
    ])
    expect('field' in (out.anomalies[0] ?? {})).toBe(false)
  })
})

describe('pveumGrant and neededPaths', () => {
  test('one role when one built-in role grants them all, else a role of its own; a user without a token', () => {
    expect(pveumGrant('ops@pve', '/', ['Sys.Audit'])).toBe('pveum acl modify / --users ops@pve --roles PVEAuditor')
    expect(pveumGrant(actor, '/', ['Sys.Modify', 'VM.Audit'])).toBe(
      "pveum role add ProxOps-Sys.Modify-VM.Audit --privs Sys.Modify,VM.Audit && pveum acl modify / --users ops@pve --tokens 'ops@pve!ci' --roles ProxOps-Sys.Modify-VM.Audit",
    )
    expect(pveumGrant(actor, '/vms/1', ['VM.Audit', 'VM.Config.CPU'])).toContain(
      'pveum role add ProxOps-VM.Audit-VM.Config.CPU',
    )
  })

  test('the paths of every alternative, once each, sorted; root-only needs ask no path', () => {
    expect(
      neededPaths([
        cpu,
        { action: 'a', anyOf: [{ path: '/storage/local', privs: ['Datastore.Audit'] }] },
        { action: 'b', key: 'args', rootOnly: 'x' },
      ]),
    ).toEqual(['/', '/storage/local', '/vms/100'])
  })
})

describe('the missing-privilege message names every alternative', () => {
  test('three alternatives: the first is granted, the others are listed after it', () => {
    const need: PrivilegeNeed = {
      action: update.id,
      anyOf: [
        { path: '/vms/100', privs: ['VM.Config.CPU'] },
        { path: '/', privs: ['Sys.Modify'] },
        { path: '/pool/p', privs: ['VM.Allocate'] },
      ],
    }
    const out = checkPrivileges(plan, [need], granted({}), actor)
    expect(out.anomalies.map((a) => a.message)).toEqual([
      "update of VM/pve1/100: ops@pve!ci lacks VM.Config.CPU on /vms/100 (or Sys.Modify on /, or VM.Allocate on /pool/p); grant it with: pveum acl modify /vms/100 --users ops@pve --tokens 'ops@pve!ci' --roles PVEVMAdmin",
    ])
  })
})

describe('pveumGrant: the built-in role the operator is told to grant', () => {
  test.each([
    ['VM.Audit', 'PVEAuditor'],
    ['VM.PowerMgmt', 'PVEVMUser'],
    ['VM.Config.CDROM', 'PVEVMUser'],
    ['VM.Config.Cloudinit', 'PVEVMUser'],
    ['VM.Allocate', 'PVEVMAdmin'],
    ['Datastore.AllocateSpace', 'PVEDatastoreUser'],
    ['Datastore.Audit', 'PVEAuditor'],
    ['Datastore.Allocate', 'PVEDatastoreAdmin'],
    ['Datastore.AllocateTemplate', 'PVEDatastoreAdmin'],
    ['SDN.Use', 'PVESDNUser'],
    ['Sys.Audit', 'PVEAuditor'],
    ['Mapping.Use', 'PVEMappingUser'],
  ])('%s is granted by %s', (priv, role) => {
    expect(pveumGrant('ops@pve', '/p', [priv])).toBe(`pveum acl modify /p --users ops@pve --roles ${role}`)
  })
})

describe('kit/privileges', () => {
  test('str reads a parameter as text; deletes splits the delete list; needs records each alternative', () => {
    expect([
      str({ a: 'x', n: 3 }, 'a'),
      str({ n: 3 }, 'n'),
      str({ b: true } as unknown as PlanParams, 'b'),
      str({}, 'z'),
    ]).toEqual(['x', '3', undefined, undefined])
    expect(deletes({ delete: 'net1,scsi2', net0: 'x' })).toEqual(['net1', 'scsi2'])
    expect(deletes({ net0: 'x' })).toEqual([])
    const n = needs()
    n.push(undefined, ['why'])
    n.push('cores', [[{ path: '/', privs: ['P'] }], 'only root'])
    expect(n.out).toEqual([
      { need: 'why' },
      { key: 'cores', need: [{ path: '/', privs: ['P'] }] },
      { key: 'cores', need: 'only root' },
    ])
    expect('key' in (n.out[0] ?? {})).toBe(false)
  })
})
