/**
 * spec.firewall, checked offline as pve-firewall's PVE::Firewall verify_rule, parse_address_list and
 * parse_port_name_number_or_range would check it on the node, and normalised to the form PVE stores.
 */
import { describe, expect, it } from 'vitest'
import { clone, validManifests } from '../../test-support/manifests.js'
import { parseManifest, type ManifestIssue } from '../../manifest/parse.js'
import type { FirewallSpec } from './firewall.js'

function withFirewall(fw: unknown, kind: 'VM' | 'LXC' = 'VM', firewallNic = true) {
  const m = clone(validManifests[kind]) as { spec: Record<string, unknown> }
  m.spec.networks = [{ bridge: 'vmbr0', firewall: firewallNic }]
  m.spec.firewall = fw
  return m
}
function ok(doc: unknown): FirewallSpec {
  const r = parseManifest(doc)
  if (!r.ok) throw new Error(JSON.stringify(r.issues, null, 2))
  return (r.manifest.spec as { firewall: FirewallSpec }).firewall
}
function problems(doc: unknown): [string, string, string][] {
  const r = parseManifest(doc)
  if (r.ok) throw new Error('expected issues')
  return r.issues.map((i: ManifestIssue) => [i.code, i.path.join('.'), i.message])
}

describe('spec.firewall', () => {
  it('defaults: enabled, empty lists; rules enabled; macro spelling, ports and cidrs in the form PVE stores', () => {
    const fw = ok(
      withFirewall({
        'policy-in': 'DROP',
        rules: [
          { direction: 'in', action: 'ACCEPT', macro: 'ssh', source: '+admins' },
          { direction: 'in', action: 'ACCEPT', proto: 'tcp', dport: 443, comment: '  web  ' },
        ],
        ipsets: [{ name: 'admins', entries: [{ cidr: '10.0.0.7/32' }, { cidr: 'FD00:0:0::0/64', nomatch: true }] }],
        aliases: [{ name: 'Gateway', cidr: '10.0.0.1/24' }],
      }),
    )
    expect(fw.enable).toBe(true)
    expect(fw.rules[0]).toMatchObject({ macro: 'SSH', enable: true })
    expect(fw.rules[1]).toMatchObject({ dport: '443', comment: 'web' })
    expect(fw.ipsets[0]?.entries).toEqual([
      { cidr: '10.0.0.7', nomatch: false },
      { cidr: 'fd00::/64', nomatch: true },
    ])
    // an alias may carry host bits (PVE's IPorCIDR format accepts them)
    expect(fw.aliases[0]?.cidr).toBe('10.0.0.1/24')
    expect(fw.ipsets).toHaveLength(1)
  })

  it('accepts containers too', () => {
    expect(ok(withFirewall({ rules: [{ direction: 'out', action: 'DROP' }] }, 'LXC')).rules).toHaveLength(1)
  })

  it('refuses what verify_rule refuses: macros, ports, protocols, addresses, icmp types', () => {
    const rule = (r: Record<string, unknown>) => withFirewall({ rules: [{ direction: 'in', action: 'ACCEPT', ...r }] })
    expect(problems(rule({ macro: 'Telnett' }))[0]?.slice(0, 2)).toEqual([
      'firewall-invalid',
      'spec.firewall.rules.0.macro',
    ])
    expect(problems(rule({ dport: '22' }))[0]?.[2]).toContain('dport needs proto')
    expect(problems(rule({ proto: 'tcp', dport: '90:80' }))[0]?.[2]).toContain('backwards range 90:80: write 80:90')
    expect(problems(rule({ proto: 'tcp', dport: '70000' }))[0]?.[2]).toContain('invalid port 70000')
    expect(problems(rule({ proto: 'tcp', dport: 'nosuchsvc' }))[0]?.[2]).toContain('unknown service name')
    expect(problems(rule({ proto: 'icmp', sport: '1' }))[0]?.[2]).toContain('protocol icmp has no ports')
    expect(problems(rule({ proto: 'bogus' }))[0]?.[2]).toContain('unknown protocol bogus')
    expect(problems(rule({ source: '10.0.0.1/24' }))[0]?.[2]).toContain('host bits set')
    expect(problems(rule({ source: '10.0.0.1,fd00::1' }))[0]?.[2]).toContain('mixes IPv4 and IPv6')
    expect(problems(rule({ source: '10.0.0.1-10.0.0.5,10.0.1.1' }))[0]?.[2]).toContain(
      "a range can't be part of a list",
    )
    expect(problems(rule({ proto: 'icmp', 'icmp-type': 'neighbor-solicitation' }))[0]?.[2]).toContain(
      'unknown icmp-type',
    )
    expect(problems(rule({ macro: 'SSH', proto: 'tcp', dport: '2222' }))[0]?.[2]).toContain(
      'macro SSH already sets dport to 22',
    )
    expect(problems(rule({ action: 'ALLOW' }))[0]?.[0]).toBe('field-invalid')
    expect(problems(rule({ direction: 'forward' }))[0]?.[0]).toBe('field-invalid')
    expect(problems(rule({ iface: 'eth0' }))[0]?.[0]).toBe('firewall-invalid')
    expect(problems(rule({ comment: 'two\nlines' }))[0]?.[0]).toBe('field-invalid')
  })

  it('references must name declared ipsets, aliases and NICs; dc/ ones are left to PVE', () => {
    const fw = (r: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      withFirewall({ rules: [{ direction: 'in', action: 'ACCEPT', ...r }], ...extra })
    expect(problems(fw({ source: '+nosuch' }))).toEqual([
      [
        'firewall-ref',
        'spec.firewall.rules.0.source',
        'no IP set nosuch is declared in spec.firewall.ipsets (write +dc/nosuch for a cluster IP set)',
      ],
    ])
    expect(problems(fw({ dest: 'db' }))[0]?.slice(0, 2)).toEqual(['firewall-ref', 'spec.firewall.rules.0.dest'])
    expect(problems(fw({ iface: 'net3' }))[0]?.[2]).toBe('iface net3 is not a NIC in spec.networks')
    ok(fw({ source: '+dc/office', dest: 'dc/dns' }))
    // aliases are matched ignoring case, as PVE looks them up lower-cased
    ok(fw({ dest: 'DB' }, { aliases: [{ name: 'db', cidr: '10.1.0.5' }] }))
    ok(fw({ source: 'db', dest: '+v6' }, { aliases: [{ name: 'db', cidr: '10.1.0.5' }], ipsets: [{ name: 'v6' }] }))
    // an alias's address counts for the rule's IP version
    expect(
      problems(fw({ source: 'db', dest: 'fd00::1' }, { aliases: [{ name: 'db', cidr: '10.1.0.5' }] }))[0]?.[2],
    ).toBe('the rule mixes IPv4 and IPv6 addresses')
  })

  it('names: ipsets lower-case (PVE lower-cases them), unique; aliases unique ignoring case; entries unique', () => {
    expect(problems(withFirewall({ ipsets: [{ name: 'Web' }] }))[0]?.slice(0, 2)).toEqual([
      'firewall-invalid',
      'spec.firewall.ipsets.0.name',
    ])
    expect(problems(withFirewall({ ipsets: [{ name: 'web' }, { name: 'web' }] }))[0]?.[0]).toBe('value-duplicate')
    expect(
      problems(
        withFirewall({
          aliases: [
            { name: 'DB', cidr: '10.0.0.1' },
            { name: 'db', cidr: '10.0.0.2' },
          ],
        }),
      )[0]?.[0],
    ).toBe('value-duplicate')
    expect(
      problems(
        withFirewall({ ipsets: [{ name: 'web', entries: [{ cidr: '10.0.0.1/32' }, { cidr: '10.0.0.1' }] }] }),
      )[0]?.[2],
    ).toBe('10.0.0.1 is listed twice in IP set web')
    expect(problems(withFirewall({ ipsets: [{ name: 'web', entries: [{ cidr: 'gw' }] }] }))[0]?.[0]).toBe(
      'firewall-ref',
    )
    expect(problems(withFirewall({ ipsets: [{ name: 'web', entries: [{ cidr: '0.0.0.0/0' }] }] }))[0]?.[0]).toBe(
      'firewall-invalid',
    )
  })

  it('an enabled firewall with no NIC that filters is reported; no NICs declared (a clone) is not', () => {
    expect(problems(withFirewall({ enable: true }, 'VM', false))).toEqual([
      [
        'firewall-nic',
        'spec.firewall.enable',
        'the guest firewall is enabled but no NIC in spec.networks has firewall: true, so no traffic is filtered: set firewall: true on the NICs to filter (or enable: false)',
      ],
    ])
    ok(withFirewall({ enable: false }, 'VM', false))
    const m = withFirewall({ enable: true }, 'VM', false)
    m.spec.networks = []
    ok(m)
  })

  it('unknown keys are named', () => {
    expect(problems(withFirewall({ policy_in: 'DROP' }))[0]?.slice(0, 2)).toEqual([
      'field-unknown',
      'spec.firewall.policy_in',
    ])
  })
})
