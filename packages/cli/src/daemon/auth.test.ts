import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { authorized, httpAuthFromEnv, isLoopback } from './auth.js'

describe('HTTP auth settings', () => {
  it('reads a bearer token and basic credentials from the environment; nothing set is no auth', () => {
    expect(httpAuthFromEnv({})).toBeUndefined()
    expect(httpAuthFromEnv({ PROXOPS_HTTP_TOKEN: '  ' })).toBeUndefined()
    expect(httpAuthFromEnv({ PROXOPS_HTTP_TOKEN: 'abc' })).toEqual({ bearer: 'abc' })
    expect(httpAuthFromEnv({ PROXOPS_HTTP_BASIC_AUTH: 'ops:a:b' })).toEqual({
      basic: { user: 'ops', password: 'a:b' },
    })
    for (const bad of ['ops', ':pw', 'ops:'])
      expect(() => httpAuthFromEnv({ PROXOPS_HTTP_BASIC_AUTH: bad })).toThrow(/must be user:password/)
  })

  test.prop([fc.string({ minLength: 1 }).filter((s) => !/\s/.test(s)), fc.string()])(
    'a bearer token is accepted only as itself',
    (token, other) => {
      expect(authorized({ bearer: token }, `Bearer ${token}`)).toBe(true)
      expect(authorized({ bearer: token }, `Bearer ${other}`)).toBe(other === token)
      expect(authorized({ bearer: token }, undefined)).toBe(false)
    },
  )

  it('knows the loopback addresses', () => {
    for (const h of ['127.0.0.1', '127.8.0.2', '::1', '[::1]', 'localhost', '::ffff:127.0.0.1'])
      expect(isLoopback(h), h).toBe(true)
    for (const h of ['0.0.0.0', '::', '10.0.0.5', 'pve.example.net', '::ffff:10.0.0.1'])
      expect(isLoopback(h), h).toBe(false)
  })
})
