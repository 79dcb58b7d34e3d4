import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { artifact, desired, GiB, inventory, lxc, policy, vm } from './fixtures.test.helpers.js'
import { plan } from './plan/plan.js'
import { checkPrivileges, neededPaths, privilegeNeeds, pveumGrant, type PrivilegeNeed } from './privileges.js'
import type { Plan } from './plan-types.js'

const CTT = artifact('CTTemplate', 'debian-12', 'debian-12.tar.zst')
const TOKEN = 'proxops@pve!gitops'
const ROLE = [
  'VM.Audit',
  'VM.Allocate',
  'VM.Clone',
  'VM.PowerMgmt',
  'VM.Config.Disk',
  'VM.Config.CDROM',
  'VM.Config.CPU',
  'VM.Config.Memory',
  'VM.Config.Network',
  'VM.Config.HWType',
  'VM.Config.Options',
  'VM.Config.Cloudinit',
  'Datastore.Audit',
  'Datastore.AllocateSpace',
  'Datastore.AllocateTemplate',
  'Sys.Audit',
  'Sys.AccessNetwork',
  'SDN.Use',
]
/** the same privileges on every path the plan needs (an ACL on / with propagation) */
const everywhere = (needs: readonly PrivilegeNeed[], privs: readonly string[]): Map<string, Set<string>> =>
  new Map(neededPaths(needs).map((p) => [p, new Set(privs)]))

const rootOnly = (needs: readonly PrivilegeNeed[]): string[] =>
  needs.flatMap((n) => ('rootOnly' in n ? [n.rootOnly] : []))
const grants = (needs: readonly PrivilegeNeed[], key: string): string[] =>
  needs.flatMap((n) => ('anyOf' in n && n.key === key ? n.anyOf.map((g) => `${g.privs.join('+')}@${g.path}`) : []))

function planOf(...m: Parameters<typeof desired>): Plan {
  return plan(desired(...m), inventory(), policy())
}

// qemu-server $check_vm_modify_config_perm, $check_storage_access, QemuServer::check_bridge_access
describe('privilegeNeeds: what each action and field needs on PVE', () => {
  it('a VM create needs VM.Allocate, AllocateSpace per disk storage, SDN.Use per bridge, and Sys.Modify on / for startup', () => {
    const needs = privilegeNeeds(planOf(vm('web', 100, { options: { startup: 'order=1' } })))
    expect(grants(needs, 'net0')).toEqual(['VM.Config.Network@/vms/100', 'SDN.Use@/sdn/zones/localnetwork/vmbr0'])
    expect(grants(needs, 'scsi0')).toEqual(['Datastore.AllocateSpace@/storage/local-lvm'])
    expect(needs.some((n) => 'anyOf' in n && n.key === undefined && n.anyOf[0]?.privs.includes('VM.Allocate'))).toBe(
      true,
    )
    expect(grants(needs, 'start')).toEqual(['VM.PowerMgmt@/vms/100'])
    // a need of the whole action names no field at all (no `key: undefined` in the JSON of --explain)
    expect(needs.filter((n) => 'key' in n && n.key === undefined)).toEqual([])
  })

  it('a cloud-init drive allocates nothing the plan checks; a CD image needs access to its ISO (drive_is_cloudinit)', () => {
    const hardware = {
      'cloud-init': { enabled: true, storage: 'local-lvm', size: '4M' },
      cdrom: { iso: 'iso', media: 'cdrom' as const },
    }
    const needs = privilegeNeeds(planOf(vm('web', 100, { hardware }), artifact('ISO', 'iso', 'x.iso')))
    expect(grants(needs, 'ide2')).toEqual([])
    expect(grants(needs, 'ide3')).toEqual([
      'Datastore.Allocate@/storage/local',
      'Datastore.AllocateSpace@/storage/local',
      'Datastore.Audit@/storage/local',
    ])
  })

  it('a NIC with a VLAN tag needs SDN.Use on the VLAN path', () => {
    const needs = privilegeNeeds(
      planOf(
        vm('web', 100, {
          networks: [{ model: 'virtio', bridge: 'vmbr1', firewall: false, slot: 'net0', vlan: 20 }],
        }),
      ),
    )
    expect(grants(needs, 'net0')).toContain('SDN.Use@/sdn/zones/localnetwork/vmbr1/20')
  })

  it('an LXC create checks the template volume and the root disk storage; unprivileged containers need no Sys.Modify', () => {
    const needs = privilegeNeeds(planOf(lxc('ct', 200), CTT))
    expect(grants(needs, 'rootfs')).toEqual(['VM.Config.Disk@/vms/200', 'Datastore.AllocateSpace@/storage/local-lvm'])
    expect(grants(needs, 'ostemplate')).toEqual([
      'Datastore.Allocate@/storage/local',
      'Datastore.AllocateSpace@/storage/local',
      'Datastore.Audit@/storage/local',
    ])
    expect(grants(needs, 'unprivileged')).toEqual([])
  })

  it('a download needs AllocateTemplate and Sys.AccessNetwork on the node (or Sys.Audit+Sys.Modify on /)', () => {
    const needs = privilegeNeeds(planOf(artifact('ISO', 'iso', 'x.iso')))
    const alts = needs.flatMap((n) =>
      'anyOf' in n ? [n.anyOf.map((g) => `${g.privs.join('+')}@${g.path}`).join(' | ')] : [],
    )
    expect(alts).toEqual([
      'Datastore.AllocateTemplate@/storage/local',
      'Sys.Audit+Sys.Modify@/ | Sys.AccessNetwork@/nodes/pve1',
    ])
  })

  it('raw options outside the qemu option groups are root@pam only', () => {
    const needs = privilegeNeeds(
      planOf(vm('web', 100, { extra: { args: '-no-reboot', hookscript: 'local:snippets/h.pl' } })),
    )
    expect(rootOnly(needs)).toEqual([
      "'args' is set by root@pam only (outside every qemu-server option group)",
      "'hookscript' is set by root@pam only (outside every qemu-server option group)",
    ])
  })
})

describe('checkPrivileges: actions that cannot succeed are not attempted', () => {
  it('the documented role lets a whole create through untouched', () => {
    const p = planOf(
      vm('web', 100),
      lxc('ct', 200, { root: { storage: 'local-lvm', size: 8 * GiB } }),
      CTT,
      artifact('ISO', 'iso', 'x.iso'),
    )
    const needs = privilegeNeeds(p)
    expect(checkPrivileges(p, needs, everywhere(needs, ROLE), TOKEN)).toEqual(p)
  })

  it('startup without Sys.Modify on /: the create is taken out, its start too, and the anomaly names the pveum line', () => {
    const p = planOf(vm('web', 100, { options: { startup: 'order=1' } }), vm('other', 101))
    const needs = privilegeNeeds(p)
    const out = checkPrivileges(p, needs, everywhere(needs, ROLE), TOKEN)
    expect(out.actions.map((a) => a.address).every((a) => a.includes('101'))).toBe(true)
    expect(out.actions.length).toBeGreaterThan(0)
    const a = out.anomalies.filter((x) => x.code === 'missing-privilege')
    expect(a).toHaveLength(1)
    expect(a[0]?.message).toContain(`${TOKEN} lacks Sys.Modify on / (for startup)`)
    expect(a[0]?.message).toContain(
      "pveum role add ProxOps-Sys.Modify --privs Sys.Modify && pveum acl modify / --users proxops@pve --tokens 'proxops@pve!gitops' --roles ProxOps-Sys.Modify",
    )
    expect(out.summary.actions).toBe(out.actions.length)
    expect(out.summary.anomalies).toBe(out.anomalies.length)
  })

  it('root@pam itself (a ticket) may do everything, root-only options included', () => {
    const p = planOf(vm('web', 100, { extra: { args: '-x' } }))
    expect(checkPrivileges(p, privilegeNeeds(p), new Map(), 'root@pam')).toBe(p)
  })

  it('property: with no privileges nothing is left to run; every action left has each of its needs granted', () => {
    const base = planOf(
      vm('a', 100),
      vm('b', 101, { options: { startup: 'order=2' } }),
      lxc('c', 200),
      CTT,
      artifact('ISO', 'iso', 'x.iso'),
    )
    const needs = privilegeNeeds(base)
    const paths = neededPaths(needs)
    expect(checkPrivileges(base, needs, new Map(), TOKEN).actions).toEqual([])
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom(...paths), fc.subarray([...ROLE, 'Sys.Modify'])), { maxLength: 20 }),
        (entries) => {
          const granted = new Map<string, Set<string>>()
          for (const [p, privs] of entries) granted.set(p, new Set([...(granted.get(p) ?? []), ...privs]))
          const out = checkPrivileges(base, needs, granted, TOKEN)
          const left = new Set(out.actions.map((a) => a.id))
          for (const n of needs) {
            if (!left.has(n.action)) continue
            expect('anyOf' in n && n.anyOf.some((g) => g.privs.every((x) => granted.get(g.path)?.has(x)))).toBe(true)
          }
          // deterministic: the same inputs give the same plan
          expect(checkPrivileges(base, needs, granted, TOKEN)).toEqual(out)
        },
      ),
    )
  })
})

describe('pveumGrant', () => {
  it('grants to the token and its user (a privilege-separated token gets the intersection)', () => {
    expect(pveumGrant(TOKEN, '/sdn/zones/localnetwork/vmbr0', ['SDN.Use'])).toBe(
      "pveum acl modify /sdn/zones/localnetwork/vmbr0 --users proxops@pve --tokens 'proxops@pve!gitops' --roles PVESDNUser",
    )
    expect(pveumGrant('ops@pve', '/vms/100', ['VM.Allocate'])).toBe(
      'pveum acl modify /vms/100 --users ops@pve --roles PVEVMAdmin',
    )
  })
})
