/**
 * Issue 39 item 4: a list whose items lack the shape PVE gives them (an id missing, or of the wrong type) is
 * refused by its codec, naming the list, the item and the field, so the planner's read of that kind fails and the
 * kind is unreadable for the cycle; it is never read as if the item were absent. One property per list codec.
 */
import { describe, expect } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import {
  decodeBackupJobs,
  decodeClusterResources,
  decodeGuestList,
  decodeHaConfig,
  decodeNodes,
  decodePending,
  decodePoolDetail,
  decodePools,
  decodeSnapshots,
  decodeStorageConfigs,
  decodeStorageContent,
  decodeStorages,
  decodeWith,
} from './decode.js'
import { PveError } from './errors.js'
import { readGuestFirewall } from './firewall.js'
import { decodeAccessGroups, decodeAccessRoles, decodeAccessUsers, decodeAcl, decodeRealms } from './access.js'
import { WireError } from './wire/errors.js'
import { decodeSdnObjects, decodeSdnZoneStatus } from './wire/sdn.js'

type Row = Record<string, unknown>

const word = fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/)
const vmid = fc.integer({ min: 100, max: 999_999_999 })
/** what an id is never: absent, null, a boolean, an object, a list, empty */
const notAnId = fc.constantFrom<unknown>(undefined, null, true, false, {}, [], '', [1])
/** what a vmid is never, besides those: not an integer, or outside pve-vmid's 100..999999999 */
const notAVmid = fc.oneof(notAnId, fc.constantFrom<unknown>('abc', 1.5, '1.5', 0, 99, -100, 1e12, '100x'))

interface ListCase {
  /** the list's name in errors */
  list: string
  row: fc.Arbitrary<Row>
  /** each required field with the values it must not have */
  required: Readonly<Record<string, fc.Arbitrary<unknown>>>
  decode: (v: unknown) => unknown
}

const CASES: Record<string, ListCase> = {
  nodes: {
    list: 'nodes',
    row: fc.record({ node: word, status: fc.constant('online') }),
    required: { node: notAnId },
    decode: decodeNodes,
  },
  'cluster resources (guests)': {
    list: 'resources',
    row: fc.record({ id: word, type: fc.constantFrom('qemu', 'lxc'), vmid, node: word, name: word }),
    required: { id: notAnId, type: notAnId, vmid: notAVmid, node: notAnId },
    decode: decodeClusterResources,
  },
  'cluster resources (storages)': {
    list: 'resources',
    row: fc.record({ id: word, type: fc.constant('storage'), storage: word, node: word }),
    required: { storage: notAnId, node: notAnId },
    decode: decodeClusterResources,
  },
  'node guest list': {
    list: 'qemu',
    row: fc.record({ vmid, status: fc.constantFrom('running', 'stopped'), name: word }),
    required: { vmid: notAVmid },
    decode: (v) => decodeGuestList(v, 'qemu'),
  },
  pending: {
    list: 'pending',
    row: fc.record({ key: word, value: word }),
    required: { key: notAnId },
    decode: decodePending,
  },
  storages: {
    list: 'storage',
    row: fc.record({ storage: word, type: fc.constantFrom('dir', 'lvmthin'), content: fc.constant('images') }),
    required: { storage: notAnId, type: notAnId },
    decode: decodeStorages,
  },
  'storage configuration': {
    list: 'storage',
    row: fc.record({
      storage: word,
      type: fc.constantFrom('dir', 'nfs', 'pbs'),
      content: fc.constant('images'),
      shared: fc.constantFrom(0, 1),
    }),
    required: { storage: notAnId, type: notAnId },
    decode: decodeStorageConfigs,
  },
  'storage content': {
    list: 'content',
    row: fc.record({ volid: word, content: fc.constant('iso'), size: fc.nat() }),
    required: { volid: notAnId },
    decode: decodeStorageContent,
  },
  pools: {
    list: 'pools',
    row: fc.record({ poolid: word, comment: word }),
    required: { poolid: notAnId },
    decode: decodePools,
  },
  'pool members': {
    list: 'members',
    row: fc.record({ type: fc.constantFrom('qemu', 'lxc'), id: word, vmid, node: word }),
    required: { type: notAnId, id: notAnId, vmid: notAVmid },
    decode: (members) => decodePoolDetail({ poolid: 'p', members }).members,
  },
  snapshots: {
    list: 'snapshots',
    row: fc.record({ name: word, snaptime: fc.nat() }),
    required: { name: notAnId },
    decode: decodeSnapshots,
  },
  'backup jobs': {
    list: 'backup jobs',
    row: fc.record({ id: word, type: fc.constant('vzdump'), schedule: fc.constant('sun 02:00') }),
    required: { id: notAnId, type: fc.constantFrom<unknown>(true, 1, {}, []) },
    decode: decodeBackupJobs,
  },
  'HA resources': {
    list: 'resources',
    row: fc.record({ sid: vmid.map((n) => `vm:${n}`), state: fc.constant('started') }),
    required: { sid: notAnId },
    decode: (v) => decodeHaConfig(v, 'resources'),
  },
  'HA groups': {
    list: 'groups',
    row: fc.record({ group: word, nodes: word }),
    required: { group: notAnId },
    decode: (v) => decodeHaConfig(v, 'groups'),
  },
  // pve-network's pending=1 listings (issue 41): an id, a state PVE gives (new, changed, deleted), a pending map
  'SDN zones': {
    list: 'zones',
    row: fc.record({ zone: word, type: fc.constant('simple'), mtu: fc.constant(1450) }),
    required: {
      zone: notAnId,
      state: fc.constantFrom<unknown>('bogus', 1, true, {}),
      pending: fc.constantFrom<unknown>(1, 'x', []),
    },
    decode: (v) => decodeSdnObjects(v, 'zone'),
  },
  'SDN vnets': {
    list: 'vnets',
    row: fc.record({ vnet: word, zone: word, tag: fc.integer({ min: 1, max: 4096 }) }),
    required: { vnet: notAnId, tag: fc.constantFrom<unknown>({}, [{}]) },
    decode: (v) => decodeSdnObjects(v, 'vnet'),
  },
  'SDN subnets': {
    list: 'subnets',
    row: fc.record({ subnet: word.map((w) => `${w}-10.0.0.0-24`), vnet: word, 'dhcp-range': fc.constant([]) }),
    required: { subnet: notAnId },
    decode: (v) => decodeSdnObjects(v, 'subnet'),
  },
  'SDN node zone status': {
    list: 'zones',
    row: fc.record({ zone: word, status: fc.constantFrom('available', 'pending') }),
    required: { zone: notAnId, status: fc.constantFrom<unknown>(undefined, null, 1, {}) },
    decode: decodeSdnZoneStatus,
  },
  'HA rules': {
    list: 'rules',
    row: fc.record({ rule: word, type: fc.constant('node-affinity'), resources: fc.constant('vm:100') }),
    required: { rule: notAnId },
    decode: (v) => decodeHaConfig(v, 'rules'),
  },
  'access users': {
    list: 'users',
    row: fc.record({ userid: word.map((w) => `${w}@pve`), enable: fc.constantFrom(0, 1), groups: word }),
    required: { userid: notAnId },
    decode: decodeAccessUsers,
  },
  'access groups': {
    list: 'groups',
    row: fc.record({ groupid: word, users: fc.constant('a@pve,b@pve') }),
    required: { groupid: notAnId },
    decode: decodeAccessGroups,
  },
  'access roles': {
    list: 'roles',
    row: fc.record({ roleid: word, privs: fc.constant('VM.Audit,Sys.Audit'), special: fc.constantFrom(0, 1) }),
    required: { roleid: notAnId },
    decode: decodeAccessRoles,
  },
  'ACL entries': {
    list: 'acl',
    row: fc.record({
      path: fc.constantFrom('/', '/vms/100'),
      type: fc.constantFrom('user', 'group', 'token'),
      ugid: word,
      roleid: word,
      propagate: fc.constantFrom(0, 1),
    }),
    required: {
      path: notAnId,
      type: fc.oneof(notAnId, fc.constantFrom<unknown>('pool', 'x', 7)),
      ugid: notAnId,
      roleid: notAnId,
    },
    decode: decodeAcl,
  },
  realms: {
    list: 'domains',
    row: fc.record({ realm: word, type: fc.constantFrom('pam', 'pve') }),
    required: { realm: notAnId, type: notAnId },
    decode: decodeRealms,
  },
}

/** a valid list, and the same list with one required field of one item missing or of the wrong type */
const malformed = (c: ListCase) =>
  fc.array(c.row, { minLength: 1, maxLength: 5 }).chain((rows) =>
    fc.tuple(
      fc.constant(rows),
      fc.nat(rows.length - 1),
      fc.constantFrom(...Object.keys(c.required)).chain((field) => fc.tuple(fc.constant(field), c.required[field]!)),
    ),
  )

describe('a malformed list is refused, never read as absence', () => {
  for (const [name, c] of Object.entries(CASES)) {
    test.prop([malformed(c)], { numRuns: 60 })(
      `${name}: the codec names the list, the item and the field`,
      ([rows, i, [field, bad]]) => {
        expect(() => c.decode(rows)).not.toThrow()
        const broken = rows.map((r, j) => {
          if (j !== i) return r
          const copy: Row = { ...r }
          if (bad === undefined) delete copy[field]
          else copy[field] = bad
          return copy
        })
        let error: unknown
        try {
          c.decode(broken)
        } catch (e) {
          error = e
        }
        expect(error, JSON.stringify(broken[i])).toBeInstanceOf(WireError)
        expect((error as WireError).field).toBe(`${c.list}[${i}].${field}`)
        // through the client: PVE_PROTOCOL naming the endpoint, which the planner's read of the kind turns into unreadable
        expect(() => decodeWith('GET /endpoint', () => c.decode(broken))).toThrow(
          expect.objectContaining({
            code: 'PVE_PROTOCOL',
            message: expect.stringMatching(/^GET \/endpoint: /) as string,
          }) as PveError,
        )
      },
    )
  }

  test.prop([
    fc.array(
      fc.record({
        pos: fc.nat(),
        type: fc.constantFrom('in', 'out'),
        action: fc.constant('ACCEPT'),
        digest: fc.constant('0123abcd'),
      }),
      {
        minLength: 1,
        maxLength: 4,
      },
    ),
    fc.constantFrom('pos', 'type'),
    fc.constantFrom<unknown>(undefined, null, {}, true, '', 'x', -1, 1.5),
  ])('guest firewall rules: each rule has its position and type', async (rules, field, bad) => {
    // any non-empty string or number is an id: a rule type PVE does not have is the planner's to compare
    fc.pre(!(field === 'type' && (bad === 'x' || typeof bad === 'number')))
    const i = rules.length - 1
    const broken = rules.map((r, j) => (j === i ? { ...r, [field]: bad } : r))
    if (bad === undefined) delete (broken[i] as Row)[field]
    const answers: Record<string, unknown> = { options: {}, rules: broken, aliases: [], ipset: [] }
    const get = (spec: { path: string }) => Promise.resolve(answers[spec.path.split('/').pop()!]) as Promise<never>
    await expect(readGuestFirewall(get, 'pve1', 'qemu', 100)).rejects.toThrow(`rules[${i}].${field}`)
  })
})
