import type { Manifest } from '@proxops/schema'
import { describe, expect, it } from 'vitest'
import type { DesiredManifest, DesiredState } from './desired.js'

describe('desired model', () => {
  it('accepts @proxops/schema manifests as they are (structural compatibility, checked by tsc)', () => {
    const fromSchema = (ms: readonly Manifest[]): DesiredState => ({ cluster: 'homelab', manifests: ms })
    const asDesired: (m: Manifest) => DesiredManifest = (m) => m
    expect(fromSchema([]).manifests).toEqual([])
    expect(typeof asDesired).toBe('function')
  })
})
