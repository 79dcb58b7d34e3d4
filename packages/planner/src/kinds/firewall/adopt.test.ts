/**
 * adopt reads a guest's firewall back as spec.firewall: for any live firewall the schema can express, the adopted
 * manifest plans no firewall change (adopt then plan is empty), and applied to a fresh PVE (the simulator) it
 * converges there in one apply; and a guest whose manifest has no spec.firewall
 * never gets a firewall action, whatever is on PVE (its firewall is not owned, so nothing of it is removed).
 */
import { describe, expect } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { parseManifest, type Manifest } from '@proxops/schema'
import type { GuestFirewall } from '@proxops/pve-client/wire'
import { emptyInventory } from '../../fixtures.test.helpers.js'
import type { LiveGuest, LiveInventory } from '../../inventory.js'
import { adopt } from '../../adopt/adopt.js'
import { plan } from '../../plan/plan.js'
import { DEFAULT_POLICY } from '../../plan-types.js'
import { simApply, simCycle, withSim } from '../../test-support/sim.js'

const guest: LiveGuest = {
  type: 'qemu',
  node: 'pve1',
  vmid: 120,
  name: 'edge',
  template: false,
  status: 'running',
  tags: ['proxops'],
  digest: 'd0',
  config: {
    name: 'edge',
    memory: '1024',
    cores: '1',
    cpu: 'host',
    scsi0: 'local-lvm:vm-120-disk-0,size=4G',
    net0: 'virtio=BC:24:11:00:00:01,bridge=vmbr0,firewall=1',
    tags: 'proxops',
  },
  pending: {},
  pendingDeletes: [],
}

const inventory = (firewall: GuestFirewall): LiveInventory =>
  emptyInventory({
    cluster: 'lab',
    pveVersion: '9.1.1',
    nodes: [{ node: 'pve1', online: true }],
    guests: [guest],
    firewalls: [{ vmid: 120, known: firewall }],
  })

/** a live firewall whose rules name only its own IP sets and aliases (what validate accepts) */
const liveFirewall: fc.Arbitrary<GuestFirewall> = fc
  .record({
    aliases: fc.uniqueArray(
      fc.record({ name: fc.constantFrom('gw', 'db', 'dns'), cidr: fc.constantFrom('10.0.0.1', '10.0.0.2') }),
      { selector: (a) => a.name, maxLength: 2 },
    ),
    ipsets: fc.uniqueArray(
      fc.record(
        {
          name: fc.constantFrom('admins', 'web'),
          comment: fc.constantFrom('ops', 'front'),
          entries: fc.uniqueArray(
            fc.record({ cidr: fc.constantFrom('10.0.0.0/24', '10.1.0.0/16', '192.0.2.7'), nomatch: fc.boolean() }),
            { selector: (e) => e.cidr, maxLength: 3 },
          ),
        },
        { requiredKeys: ['name', 'entries'] },
      ),
      { selector: (s) => s.name, maxLength: 2 },
    ),
    options: fc.record(
      {
        enable: fc.constantFrom('0', '1'),
        policy_in: fc.constantFrom('ACCEPT', 'DROP', 'REJECT'),
        policy_out: fc.constantFrom('ACCEPT', 'DROP'),
        log_level_in: fc.constantFrom('info', 'nolog'),
        macfilter: fc.constantFrom('0', '1'),
        ipfilter: fc.constantFrom('0', '1'),
      },
      { requiredKeys: [] },
    ),
  })
  .chain(({ aliases, ipsets, options }) => {
    const addresses = ['10.9.0.0/16', ...aliases.map((a) => a.name), ...ipsets.map((s) => `+${s.name}`)]
    const rule = fc
      .record(
        {
          type: fc.constantFrom('in', 'out'),
          action: fc.constantFrom('ACCEPT', 'DROP', 'REJECT'),
          what: fc.oneof(
            fc.record({ macro: fc.constantFrom('SSH', 'HTTPS', 'DNS') }),
            fc.record({ proto: fc.constantFrom('tcp', 'udp'), dport: fc.constantFrom('22', '80,443', '8000:8080') }),
          ),
          source: fc.constantFrom(...addresses),
          dest: fc.constantFrom(...addresses),
          comment: fc.constantFrom('a', 'b'),
          enable: fc.constantFrom('0', '1'),
        },
        { requiredKeys: ['type', 'action', 'what', 'enable'] },
      )
      .map(({ what, ...r }) => ({ ...r, ...what }))
    return fc.array(rule, { maxLength: 5 }).map((rules): GuestFirewall => ({
      options,
      optionsDigest: 'o',
      rules,
      rulesDigest: 'r',
      aliases: [...aliases].sort((a, b) => (a.name < b.name ? -1 : 1)),
      aliasesDigest: 'a',
      ipsets: [...ipsets]
        .sort((a, b) => (a.name < b.name ? -1 : 1))
        .map((s) => ({ ...s, entries: [...s.entries].sort((a, b) => (a.cidr < b.cidr ? -1 : 1)), digest: 'e' })),
      ipsetsDigest: 'i',
    }))
  })

function manifests(live: LiveInventory, withFirewall: boolean): Manifest[] {
  return adopt(live, { cluster: 'lab' }).files.map((file) => {
    const doc = file.document as { spec: Record<string, unknown> }
    if (!withFirewall) delete doc.spec.firewall
    const parsed = parseManifest(doc)
    if (!parsed.ok) throw new Error(`${file.path}: ${JSON.stringify(parsed.issues)}`)
    return parsed.manifest
  })
}

const firewallActions = (live: LiveInventory, withFirewall: boolean) =>
  plan({ cluster: 'lab', manifests: manifests(live, withFirewall) }, live, { ...DEFAULT_POLICY, nodes: ['pve1'] })
    .actions.filter((a) => a.kind === 'GuestFirewall')
    .map((a) => a.diffs)

describe('adopt spec.firewall', () => {
  test.prop([liveFirewall], { numRuns: 150 })('an adopted firewall plans no firewall change', (fw) => {
    expect(firewallActions(inventory(fw), true)).toEqual([])
  })

  test.prop([liveFirewall], { numRuns: 60 })(
    'an adopted firewall applied to a fresh PVE: the guest and its firewall are created, then the plan is empty',
    (fw) =>
      withSim(undefined, async (env) => {
        const desired = { cluster: 'lab', manifests: manifests(inventory(fw), true) }
        const pol = { ...DEFAULT_POLICY, nodes: ['pve1'] }
        await simApply(env, desired, pol)
        const again = await simCycle(env, desired, pol)
        expect(again.plan.actions).toEqual([])
        expect(again.plan.anomalies).toEqual([])
      }),
  )

  test.prop([liveFirewall], { numRuns: 50 })(
    'without spec.firewall the live firewall is not owned: no firewall action, nothing removed',
    (fw) => {
      expect(firewallActions(inventory(fw), false)).toEqual([])
    },
  )
})
