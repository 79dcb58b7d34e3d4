/**
 * pve-firewall's pure parts: PVE::Firewall parse_address_list / clean_cidr / parse_ip_or_cidr (with Net::IP's
 * rules), generic_fw_config_parser followed by save_vmfw_conf / save_clusterfw_conf reaching a fixed point, and
 * verify_rule's lookups in a guest file and cluster.fw.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { emptyConf, formatConf, parseConf, verifyRule, type FwRule } from './firewall.js'
import { cleanCidr, formatIp, parseAddressList, parseIp, parseIpOrCidr } from './fw-addr.js'

describe('addresses (parse_address_list, clean_cidr, parse_ip_or_cidr)', () => {
  it('IPv6 forms parse to the same value and print compressed', () => {
    const a = parseIp('fd00:0:0:0:0:0:0:7')
    expect(a).toEqual(parseIp('fd00::7'))
    expect(formatIp(a!)).toBe('fd00::7')
    expect(formatIp(parseIp('::ffff:10.0.0.1')!)).toBe('::ffff:a00:1')
    expect(parseIp('1::2::3')).toBeUndefined()
    expect(parseIp('10.0.0.256')).toBeUndefined()
  })

  it('lists, ranges and references', () => {
    expect(parseAddressList('10.0.0.0/8,192.168.1.1')).toBe(4)
    expect(parseAddressList('10.0.0.1-10.0.0.9')).toBe(4)
    expect(parseAddressList('+myset')).toBeUndefined()
    expect(parseAddressList('guest/web')).toBeUndefined()
    expect(() => parseAddressList('10.0.0.1/24')).toThrow(/Invalid prefix/)
    expect(() => parseAddressList('10.0.0.1-10.0.0.9,10.0.1.1')).toThrow("you can't use a range in a list")
    expect(() => parseAddressList('10.0.0.1,,10.0.0.2')).toThrow('extraneous commas in list')
  })

  it('clean_cidr clears host bits; the parser drops /32 and /128', () => {
    expect(cleanCidr('10.0.0.5/24')).toBe('10.0.0.0/24')
    expect(cleanCidr('fd00::7/64')).toBe('fd00::/64')
    expect(parseIpOrCidr('10.0.0.5/32').cidr).toBe('10.0.0.5')
    expect(parseIpOrCidr('fd00::1/128').cidr).toBe('fd00::1')
  })
})

describe('generic_fw_config_parser / save_vmfw_conf', () => {
  it('skips lines it cannot parse, lower-cases ipset names and keeps rule order', () => {
    const text = [
      '[OPTIONS]',
      'enable: 1',
      'bogus: 7',
      '[IPSET Web] # front',
      '10.0.0.9',
      '!10.0.0.0/24 # lan',
      '[RULES]',
      'IN ACCEPT -p tcp -dport 22 # ssh',
      'NOT A RULE AT ALL',
      '|OUT DROP',
    ].join('\n')
    const conf = parseConf(text, 'vm')
    expect(conf.options).toEqual({ enable: 1 })
    expect([...conf.ipsets.keys()]).toEqual(['web'])
    expect(conf.rules.map((r) => [r.type, r.action, r.enable])).toEqual([
      ['in', 'ACCEPT', 1],
      ['out', 'DROP', 0],
    ])
    expect(formatConf(conf)).toBe(
      '[OPTIONS]\n\nenable: 1\n\n[IPSET web] # front\n\n!10.0.0.0/24 # lan\n10.0.0.9\n\n[RULES]\n\nIN ACCEPT -p tcp -dport 22 # ssh\n|OUT DROP\n\n',
    )
  })

  it('format after parse is a fixed point for any rule list', () => {
    const rule = fc.record({
      dir: fc.constantFrom('IN', 'OUT'),
      action: fc.constantFrom('ACCEPT', 'DROP', 'REJECT'),
      disabled: fc.boolean(),
      port: fc.option(fc.integer({ min: 0, max: 65535 }), { nil: undefined }),
      comment: fc.option(fc.stringMatching(/^[a-z #]{0,12}$/), { nil: undefined }),
    })
    fc.assert(
      fc.property(fc.array(rule, { maxLength: 8 }), (rules) => {
        const text = `[RULES]\n\n${rules
          .map(
            (r) =>
              `${r.disabled ? '|' : ''}${r.dir} ${r.action}${r.port !== undefined ? ` -p tcp -dport ${r.port}` : ''}${r.comment !== undefined ? ` # ${r.comment}` : ''}`,
          )
          .join('\n')}\n`
        const once = formatConf(parseConf(text, 'vm'))
        expect(formatConf(parseConf(once, 'vm'))).toBe(once)
        expect(parseConf(once, 'vm').rules).toHaveLength(rules.length)
      }),
    )
  })
})

describe('cluster.fw (load_clusterfw_conf / save_clusterfw_conf)', () => {
  it('groups: names lower-cased, a name over 18 characters skips its section, group rules lose -i and are checked as rule_env group', () => {
    const text = [
      '[ALIASES]',
      'gw 10.0.0.1',
      '[RULES]',
      'IN ACCEPT -i vmbr0 -source dc/gw',
      'GROUP Web',
      '[group Web] # front',
      'IN ACCEPT -p tcp -dport 443',
      'GROUP nested',
      '[group a-name-longer-than-18]',
      'IN DROP',
      '[IPSET late]',
      '10.0.0.0/8',
    ].join('\n')
    const conf = parseConf(text, 'cluster')
    expect([...conf.groups.keys()]).toEqual(['web'])
    expect(conf.groups.get('web')?.[1]?.errors).toEqual({
      type: "invalid rule type 'group' for rule_env 'group'",
    })
    expect(conf.rules[0]).toMatchObject({ iface: 'vmbr0', source: 'dc/gw', ipversion: 4 })
    expect(conf.rules[0]).not.toHaveProperty('errors')
    const once = formatConf(conf)
    expect(once).toBe(
      '[ALIASES]\n\ngw 10.0.0.1\n\n[IPSET late]\n\n10.0.0.0/8\n\n[RULES]\n\nIN ACCEPT -i vmbr0 -source dc/gw\nGROUP Web\n\n' +
        '[group web] # front\n\nIN ACCEPT -p tcp -dport 443\nGROUP nested\n\n',
    )
    expect(formatConf(parseConf(once, 'cluster'))).toBe(once)
  })

  it('a guest file is parsed against cluster.fw: dc/ names resolve there, a [group] header is no section', () => {
    const cluster = parseConf('[ALIASES]\ngw fd00::1\n[IPSET web]\n10.0.0.1\n', 'cluster')
    const guest = parseConf('[RULES]\nIN ACCEPT -source dc/gw\nIN ACCEPT -source +dc/web\n', 'vm', cluster)
    expect(guest.rules.map((r) => [r.ipversion, r.errors])).toEqual([
      [6, undefined],
      [undefined, undefined],
    ])
    const alone = parseConf('[RULES]\nIN ACCEPT -source dc/gw\n', 'vm')
    expect(alone.rules[0]?.errors).toEqual({ source: "no such alias 'dc/gw'" })
  })

  it('verify_rule: a guest alias wins over a cluster alias of the same name unless the name says dc/', () => {
    const cluster = parseConf('[ALIASES]\nhost fd00::1\n', 'cluster')
    const local = parseConf('[ALIASES]\nhost 10.0.0.1\n', 'vm', cluster)
    fc.assert(
      fc.property(fc.constantFrom('', 'guest/', 'dc/'), fc.constantFrom('host', 'HOST'), (prefix, name) => {
        const rule: FwRule = { type: 'in', action: 'ACCEPT', source: `${prefix}${name}` }
        verifyRule(rule, { cluster, local }, 'vm', false)
        expect(rule.ipversion).toBe(prefix === 'dc/' ? 6 : 4)
      }),
    )
    // the cluster's own handlers pass no cluster configuration: a dc/ alias exists there but fixes no version
    const atCluster: FwRule = { type: 'in', action: 'ACCEPT', source: 'dc/host' }
    verifyRule(atCluster, { local: cluster }, 'cluster', false)
    expect(atCluster.ipversion).toBeUndefined()
    expect(() =>
      verifyRule({ type: 'in', action: 'ACCEPT', source: 'nope' }, { local: emptyConf() }, 'cluster', false),
    ).toThrow()
  })
})
