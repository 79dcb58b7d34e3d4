import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { baseUrlProblem, normaliseBaseUrl } from './url.js'
import { apiBaseUrl } from '../transport.js'
import { PveError } from '../errors.js'

describe('PVE endpoint URLs', () => {
  it.each([
    ['https://pve.example:8006', undefined],
    ['http://10.0.0.5:8006/', undefined],
    ['https://pve.example:8006/api2/json', undefined],
    ['not a url', 'is not an absolute URL: write https://<host>:8006'],
    ['ftp://pve.example', 'must use https:// (or http://)'],
    ['https://root:s3cret@pve.example:8006', 'must not carry credentials'],
    ['https://pve.example:8006/?x=1', 'must not have a query or fragment'],
    ['https://pve.example:8006/#top', 'must not have a query or fragment'],
  ])('%s: %s', (input, problem) => {
    expect(baseUrlProblem(input)).toBe(problem)
  })

  it('one spelling per endpoint: no trailing slash, no /api2/json', () => {
    expect(normaliseBaseUrl(' https://PVE.example:8006/api2/json/ ')).toBe('https://pve.example:8006')
    expect(normaliseBaseUrl('https://pve.example/proxy/pve1/')).toBe('https://pve.example/proxy/pve1')
  })

  test.prop([fc.webUrl({ withQueryParameters: false, withFragments: false })])(
    'an accepted URL normalises to a fixed point the client prefixes with /api2/json',
    (input) => {
      fc.pre(baseUrlProblem(input) === undefined)
      const once = normaliseBaseUrl(input)
      expect(normaliseBaseUrl(once)).toBe(once)
      expect(apiBaseUrl(input)).toBe(`${once}/api2/json`)
    },
  )

  it('the client refuses what the configuration refuses, without echoing the URL', () => {
    const canary = 'CANARY-url-secret'
    for (const input of [`https://root:${canary}@pve:8006`, `ftp://${canary}`, `https://pve:8006/?t=${canary}`]) {
      let err: unknown
      try {
        apiBaseUrl(input)
      } catch (e) {
        err = e
      }
      expect(err).toBeInstanceOf(PveError)
      expect((err as PveError).code).toBe('PVE_CONFIG')
      expect((err as PveError).message).toBe(`baseUrl ${baseUrlProblem(input)}`)
      expect((err as PveError).message).not.toContain(canary)
    }
  })
})
