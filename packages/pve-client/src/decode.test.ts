import { describe, expect } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import {
  decodeClusterOptions,
  decodeClusterResources,
  decodeGuestList,
  decodeGuestStatus,
  decodeNodeStatus,
  decodeNodes,
  decodePending,
  decodeStorageContent,
  decodeStorages,
  decodeTaskLog,
  decodeTaskStatus,
  decodeVersion,
  decodeWith,
} from './decode.js'
import { PveError } from './errors.js'
import { returnsOrWireError } from './test-support/codec.js'

const decoders: [string, (v: unknown) => unknown][] = [
  ['version', decodeVersion],
  ['nodes', decodeNodes],
  ['nodeStatus', decodeNodeStatus],
  ['clusterResources', decodeClusterResources],
  ['guestList', (v) => decodeGuestList(v, 'qemu')],
  ['pending', decodePending],
  ['guestStatus', decodeGuestStatus],
  ['storages', decodeStorages],
  ['storageContent', decodeStorageContent],
  ['taskStatus', (v) => decodeTaskStatus(v, 'pve1')],
  ['taskLog', decodeTaskLog],
]

// PVE-like rows: the right keys with scalars of any JSON type
const scalar = fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean(), fc.constant(null), fc.double())
const row = fc.dictionary(
  fc.constantFrom(
    'id',
    'type',
    'node',
    'vmid',
    'name',
    'status',
    'template',
    'tags',
    'storage',
    'content',
    'shared',
    'active',
    'volid',
    'size',
    'key',
    'value',
    'pending',
    'delete',
    'n',
    't',
    'upid',
    'version',
    'release',
    'uptime',
  ),
  scalar,
)

describe('result decoders', () => {
  test.prop([fc.anything()], { numRuns: 200 })('arbitrary input: a typed value or a WireError', (v) => {
    for (const [, decode] of decoders) returnsOrWireError(() => decode(v))
  })

  test.prop([fc.oneof(row, fc.array(row, { maxLength: 4 }))], { numRuns: 300 })(
    'PVE-like rows: a typed value or a WireError',
    (v) => {
      for (const [, decode] of decoders) returnsOrWireError(() => decode(v))
    },
  )

  test.prop([fc.anything()], { numRuns: 100 })('decodeWith turns codec errors into PVE_PROTOCOL', (v) => {
    try {
      decodeWith('GET /nodes', () => decodeNodes(v))
    } catch (err) {
      expect(err).toBeInstanceOf(PveError)
      expect((err as PveError).code).toBe('PVE_PROTOCOL')
    }
  })

  test('a bad row names its list, index and field', () => {
    const bad = [
      { id: 'node/pve1', type: 'node', node: 'pve1' },
      { id: 'qemu/100', type: 'qemu', vmid: 'x', node: 'pve1' },
    ]
    expect(() => decodeClusterResources(bad)).toThrow(
      'resources[1].vmid: expected a vmid (100 to 999999999), got a string of length 1',
    )
    expect(() => decodePending([{ key: 'a' }, 7])).toThrow(/^pending\[1\]: expected an object$/)
    expect(() => decodeGuestList([{ vmid: 100 }, { vmid: 101, status: {} }], 'lxc')).toThrow(
      'lxc[1].status: expected a string, got a value of type object',
    )
    expect(() => decodeStorageContent({})).toThrow(/^content: expected a list$/)
  })
})

describe('decodeClusterOptions (GET /cluster/options, parse_datacenter_config)', () => {
  test('objects print back as sorted key=value pairs, lists with ;, allowed-tags left out', () => {
    expect(
      decodeClusterOptions({
        migration: { type: 'secure', network: '10.0.0.0/24' },
        'registered-tags': ['a', 'b'],
        max_workers: 4,
        description: 'x\n',
        'allowed-tags': ['a'],
      }),
    ).toEqual({
      migration: 'network=10.0.0.0/24,type=secure',
      'registered-tags': 'a;b',
      max_workers: '4',
      description: 'x\n',
    })
    expect(() => decodeWith('GET /cluster/options', () => decodeClusterOptions([]))).toThrow(PveError)
  })
  test.prop([
    fc.dictionary(fc.stringMatching(/^[a-z][a-z-]{0,8}$/), fc.oneof(fc.string(), fc.integer(), fc.boolean())),
  ])('any answer of scalars decodes to strings, or fails as a protocol error', (answer) => {
    const out = decodeClusterOptions(answer)
    for (const v of Object.values(out)) expect(typeof v).toBe('string')
  })
})
