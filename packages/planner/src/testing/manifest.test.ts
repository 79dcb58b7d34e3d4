import { describe, expect, it } from 'vitest'
import { GiB } from '@proxops/schema'
// through the package's own name: what an embedder imports
import * as testing from '@proxops/planner/testing'

const { manifest } = testing

describe('manifest() (the testing subpath)', () => {
  it('the subpath exports exactly manifest, makeAction and makePlan', () => {
    expect(Object.keys(testing).sort()).toEqual(['makeAction', 'makePlan', 'manifest'])
  })

  it('builds a manifest through the schema parser: defaults and normalisation are the parser’s', () => {
    const m = manifest({
      kind: 'VM',
      metadata: { name: 'web-01' },
      spec: {
        node: 'pve1',
        vmid: 101,
        memory: '2GiB',
        cpu: { type: 'host', cores: 2 },
        disks: [{ storage: 'local-lvm', size: '32GiB' }],
        networks: [{ bridge: 'vmbr0' }],
      },
    })
    expect(m.apiVersion).toBe('proxops/v1alpha1')
    if (m.kind !== 'VM') throw new Error(`kind ${m.kind}`)
    expect(m.spec.memory).toBe(2048)
    expect(m.spec.disks[0]).toMatchObject({ storage: 'local-lvm', size: 32 * GiB, interface: 'scsi0' })
    expect(m.spec.networks[0]).toMatchObject({ bridge: 'vmbr0', slot: 'net0' })
    expect(m.metadata.labels).toEqual({})
  })

  it('throws naming the kind, the name and each invalid field with its code', () => {
    expect(() =>
      manifest({
        kind: 'VM',
        metadata: { name: 'web-01' },
        spec: { node: 'pve1', vmid: 101, memory: 'lots', cpu: { type: 'host', cores: 2 }, disks: [] },
      }),
    ).toThrow(/^manifest VM\/web-01 is invalid:\n {2}spec\.memory: \S+ /)
  })
})
