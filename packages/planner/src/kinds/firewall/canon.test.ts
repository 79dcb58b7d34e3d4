/**
 * The firewall's pure core: the writes firewallWrites plans, applied as pve-firewall applies them (a created
 * rule first, update_rule's moveto, sorted ipset entries, case-insensitive alias names), reach what the
 * manifest owns from any live state; a converged firewall plans nothing.
 */
import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  applyWrite,
  desiredFirewall,
  firewallWrites,
  liveFirewall,
  liveOption,
  ruleLine,
  sameFirewall,
  type CanonFirewall,
  type CanonRule,
} from './canon.js'

const rule: fc.Arbitrary<CanonRule> = fc
  .record(
    {
      type: fc.constantFrom('in', 'out'),
      action: fc.constantFrom('ACCEPT', 'DROP', 'REJECT'),
      proto: fc.constantFrom('tcp', 'udp'),
      dport: fc.constantFrom('22', '80', '443', '8000:8080'),
      source: fc.constantFrom('10.0.0.0/8', '+web', 'gw'),
      comment: fc.constantFrom('a', 'b', 'c'),
      enable: fc.constantFrom('0', '1'),
    },
    { requiredKeys: ['type', 'action', 'enable'] },
  )
  .map((r) => r as CanonRule)

const alias = fc.record({
  name: fc.constantFrom('gw', 'GW', 'db', 'dns'),
  cidr: fc.constantFrom('10.0.0.1', '10.0.0.2'),
})
const entry = fc.record({ cidr: fc.constantFrom('10.0.0.0/24', '10.1.0.0/16', 'fd00::/64'), nomatch: fc.boolean() })
const ipset = fc.record(
  {
    name: fc.constantFrom('web', 'db', 'admins'),
    comment: fc.constantFrom('x', 'y'),
    entries: fc.uniqueArray(entry, { selector: (e) => e.cidr, maxLength: 3 }),
  },
  { requiredKeys: ['name', 'entries'] },
)
const firewall: fc.Arbitrary<CanonFirewall> = fc
  .record({
    options: fc.record(
      {
        enable: fc.constantFrom('0', '1'),
        policy_in: fc.constantFrom('ACCEPT', 'DROP'),
        macfilter: fc.constantFrom('0', '1'),
      },
      { requiredKeys: [] },
    ),
    rules: fc.array(rule, { maxLength: 7 }),
    aliases: fc.uniqueArray(alias, { selector: (a) => a.name.toLowerCase(), maxLength: 3 }),
    ipsets: fc.uniqueArray(ipset, { selector: (s) => s.name, maxLength: 3 }),
  })
  .map((f) =>
    // the canonical order desiredFirewall / liveFirewall produce
    ({
      ...f,
      aliases: [...f.aliases].sort((a, b) => (a.name.toLowerCase() < b.name.toLowerCase() ? -1 : 1)),
      ipsets: [...f.ipsets]
        .sort((a, b) => (a.name < b.name ? -1 : 1))
        .map((s) => ({ ...s, entries: [...s.entries].sort((a, b) => (a.cidr < b.cidr ? -1 : 1)) })),
    }),
  )

const run = (live: CanonFirewall, desired: CanonFirewall) => firewallWrites(live, desired).reduce(applyWrite, live)

describe('firewallWrites / applyWrite', () => {
  it('from any live firewall the planned writes reach the desired one, and then nothing is planned', () => {
    fc.assert(
      fc.property(firewall, firewall, (live, desired) => {
        const after = run(live, desired)
        expect(after.rules).toEqual(desired.rules)
        expect(after.aliases).toEqual(desired.aliases)
        expect(after.ipsets).toEqual(desired.ipsets)
        for (const [k, v] of Object.entries(desired.options)) expect(liveOption(after.options, k)).toBe(v)
        expect(firewallWrites(after, desired)).toEqual([])
      }),
      { numRuns: 300 },
    )
  })

  it('rule order converges from any permutation of the desired rules with moves alone', () => {
    fc.assert(
      fc.property(
        fc
          .array(rule, { minLength: 1, maxLength: 8 })
          .chain((rules) =>
            fc.tuple(
              fc.constant(rules),
              fc.shuffledSubarray(rules, { minLength: rules.length, maxLength: rules.length }),
            ),
          ),
        ([desiredRules, liveRules]) => {
          const desired: CanonFirewall = { options: {}, rules: desiredRules, aliases: [], ipsets: [] }
          const live: CanonFirewall = { ...desired, rules: liveRules }
          const writes = firewallWrites(live, desired)
          expect(writes.every((w) => w.op === 'rule-move')).toBe(true)
          expect(writes.length).toBeLessThan(desiredRules.length)
          expect(run(live, desired).rules).toEqual(desiredRules)
        },
      ),
    )
  })

  it('a changed rule is updated in place, keeping its position', () => {
    const r = (comment: string, dport = '22'): CanonRule => ({
      type: 'in',
      action: 'ACCEPT',
      proto: 'tcp',
      dport,
      enable: '1',
      comment,
    })
    const live: CanonFirewall = { options: {}, rules: [r('a'), r('b'), r('c')], aliases: [], ipsets: [] }
    const desired: CanonFirewall = { ...live, rules: [r('a'), r('b', '2222'), r('c')] }
    expect(firewallWrites(live, desired)).toEqual([{ op: 'rule-update', pos: 1, set: { dport: '2222' }, delete: [] }])
  })

  it('a created rule lands first and is moved to its place (moveto puts it before the rule that was there)', () => {
    const r = (comment: string): CanonRule => ({ type: 'in', action: 'DROP', enable: '1', comment })
    const live: CanonFirewall = { options: {}, rules: [r('a'), r('c')], aliases: [], ipsets: [] }
    const desired: CanonFirewall = { ...live, rules: [r('a'), r('b'), r('c')] }
    expect(firewallWrites(live, desired)).toEqual([
      { op: 'rule-create', rule: r('b') },
      { op: 'rule-move', pos: 1, moveto: 0 },
    ])
  })

  it('references exist before rules use them and go after the rules that used them', () => {
    const desired = desiredFirewall({
      enable: true,
      rules: [{ direction: 'in', action: 'ACCEPT', source: '+web', enable: true }],
      ipsets: [{ name: 'web', entries: [{ cidr: 'gw', nomatch: false }] }],
      aliases: [{ name: 'gw', cidr: '10.0.0.1' }],
    })
    const ops = firewallWrites({ options: {}, rules: [], aliases: [], ipsets: [] }, desired).map((w) => w.op)
    expect(ops).toEqual(['alias-create', 'ipset-create', 'ipset-add', 'rule-create', 'options'])
    const back = firewallWrites(desired, { options: {}, rules: [], aliases: [], ipsets: [] }).map((w) => w.op)
    expect(back).toEqual(['rule-delete', 'ipset-delete', 'alias-delete'])
  })

  it('ruleLine writes a rule as PVE does in <vmid>.fw', () => {
    expect(
      ruleLine({
        type: 'in',
        action: 'ACCEPT',
        macro: 'SSH',
        source: '+admins',
        iface: 'net0',
        enable: '0',
        comment: 'ops',
      }),
    ).toBe('|IN SSH(ACCEPT) -i net0 -source +admins # ops')
  })
})

/** The same object with its keys written in another order (as a spread or a read in file order writes them). */
const reordered = <T extends object>(o: T, seed: number): T => {
  const entries = Object.entries(o)
  const rotated = [
    ...entries.slice(seed % Math.max(1, entries.length)),
    ...entries.slice(0, seed % Math.max(1, entries.length)),
  ]
  return Object.fromEntries(seed % 2 ? rotated.reverse() : rotated) as T
}
const reorderedFirewall = (f: CanonFirewall, seed: number): CanonFirewall =>
  reordered(
    {
      options: reordered(f.options, seed),
      rules: f.rules.map((r, i) => reordered(r, seed + i)),
      aliases: f.aliases.map((a, i) => reordered(a, seed + i)),
      ipsets: f.ipsets.map((s, i) =>
        reordered({ ...s, entries: s.entries.map((e, j) => reordered(e, seed + j)) }, seed + i),
      ),
    },
    seed,
  )

describe('sameFirewall', () => {
  it('compares values: the key order of any object never matters, and any difference in value does', () => {
    fc.assert(
      fc.property(firewall, firewall, fc.nat(), (a, b, seed) => {
        expect(sameFirewall(a, reorderedFirewall(a, seed))).toBe(true)
        expect(sameFirewall(reorderedFirewall(a, seed), reorderedFirewall(b, seed + 1))).toBe(isDeepStrictEqual(a, b))
      }),
      { numRuns: 300 },
    )
  })

  it("a field added to a rule by rule-update equals the same rule read back in PVE's field order", () => {
    // [SSH, 443] -> the same rules with `source:` added: the rule-update spreads `source` after `enable`, while
    // pve-firewall writes (and the read lists) it before `proto`
    const ssh: CanonRule = { type: 'in', action: 'ACCEPT', macro: 'SSH', enable: '1' }
    const https: CanonRule = { type: 'in', action: 'ACCEPT', proto: 'tcp', dport: '443', enable: '1' }
    const live: CanonFirewall = { options: {}, rules: [ssh, https], aliases: [], ipsets: [] }
    const desired: CanonFirewall = {
      ...live,
      rules: [
        { type: 'in', action: 'ACCEPT', macro: 'SSH', source: '10.0.0.0/8', enable: '1' },
        { type: 'in', action: 'ACCEPT', source: '10.0.0.0/8', proto: 'tcp', dport: '443', enable: '1' },
      ],
    }
    const writes = firewallWrites(live, desired)
    expect(writes.map((w) => w.op)).toEqual(['rule-update', 'rule-update'])
    const expected = applyWrite(live, writes[0]!)
    const read = liveFirewall({
      options: {},
      optionsDigest: 'o',
      rules: [desired.rules[0]!, https],
      rulesDigest: 'r',
      aliases: [],
      aliasesDigest: 'a',
      ipsets: [],
      ipsetsDigest: 'i',
    })
    expect(Object.keys(expected.rules[0]!)).not.toEqual(Object.keys(read.rules[0]!))
    expect(sameFirewall(read, expected)).toBe(true)
  })
})
