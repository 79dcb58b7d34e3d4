import { describe, expect, it } from 'vitest'
import { pointAt } from './sandbox.js'

describe('pointAt', () => {
  const config = 'pve:\n  clusters:\n    edge:\n      base-url: https://127.0.0.1:8016\n      nodes: [edge1]\n'

  it('replaces the endpoint and pins the certificate at the same indentation', () => {
    expect(pointAt(config, 'https://127.0.0.1:40001', 'AA:BB')).toBe(
      'pve:\n  clusters:\n    edge:\n      base-url: https://127.0.0.1:40001\n      tls:\n        fingerprint: "AA:BB"\n      nodes: [edge1]\n',
    )
  })

  it('refuses a config without base-url', () => {
    expect(() => pointAt('pve: {}\n', 'https://x', 'AA')).toThrow(/no base-url/)
  })
})
