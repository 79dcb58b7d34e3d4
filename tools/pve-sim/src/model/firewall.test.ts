/**
 * pve-firewall's pure parts: PVE::Firewall parse_address_list / clean_cidr / parse_ip_or_cidr (with Net::IP's
 * rules), and generic_fw_config_parser followed by save_vmfw_conf reaching a fixed point.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { formatConf, parseConf } from './firewall.js'
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
