import { describe, expect, it } from 'vitest'
import { knownHost } from './host.js'

describe('knownHost (DNS rebinding)', () => {
  it('knows the listen address and localhost with or without a port, in any case, and nothing else by default', () => {
    for (const header of ['127.0.0.1', '127.0.0.1:9494', 'localhost', 'LOCALHOST:9494', 'localhost.'])
      expect(knownHost(header, '127.0.0.1', []), header).toBe(true)
    for (const header of ['attacker.example', 'attacker.example:9494', '127.0.0.2', '', 'a b', 'localhost.evil'])
      expect(knownHost(header, '127.0.0.1', []), header).toBe(false)
  })

  it('knows the names of allowed-hosts, and an IPv6 listen address in brackets', () => {
    expect(knownHost('proxops.example.net:443', '127.0.0.1', ['proxops.example.net'])).toBe(true)
    expect(knownHost('Proxops.Example.Net', '127.0.0.1', ['proxops.example.net.'])).toBe(true)
    expect(knownHost('other.example.net', '127.0.0.1', ['proxops.example.net'])).toBe(false)
    expect(knownHost('[::1]:9494', '::1', [])).toBe(true)
    expect(knownHost('[::2]:9494', '::1', [])).toBe(false)
  })

  it('on a wildcard listen address any IP address is this host, a name still has to be allowed', () => {
    expect(knownHost('192.0.2.7:9494', '0.0.0.0', [])).toBe(true)
    expect(knownHost('[2001:db8::1]', '::', [])).toBe(true)
    expect(knownHost('rebound.example', '0.0.0.0', [])).toBe(false)
  })

  it('lets a request without Host through (no browser sends one)', () => {
    expect(knownHost(undefined, '127.0.0.1', [])).toBe(true)
  })
})
