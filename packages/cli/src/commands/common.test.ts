import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { CliError } from '../errors.js'
import { fixturePlan } from '../render/fixtures.test-support.js'
import { ALLOW_EMPTY_KINDS } from '@proxops/schema'
import { allowEmpty, globalFlags, parsePlanSet, planSetJson } from './common.js'
import { allowEmptyOption } from './definitions.js'

describe('plan set file', () => {
  it('round-trips and is byte-stable', () => {
    const plans = [fixturePlan(), { ...fixturePlan([]), cluster: 'edge' }]
    const text = planSetJson('abc', plans)
    expect(JSON.parse(text)).toMatchObject({ commit: 'abc', format_version: 1 })
    const back = parsePlanSet(text, 'plan.json')
    expect(back.commit).toBe('abc')
    expect(planSetJson(back.commit, back.plans)).toBe(text)
    expect(planSetJson('x', [])).toBe('{\n  "commit": "x",\n  "format_version": 1,\n  "plans": []\n}\n')
  })

  it('rejects what is not a plan set, naming the file', () => {
    expect(() => parsePlanSet('nope', 'p.json')).toThrow(/p\.json is not JSON/)
    expect(() => parsePlanSet('{"format_version":2,"commit":"a","plans":[]}', 'p.json')).toThrow(
      /not a ProxOps plan file/,
    )
    expect(() => parsePlanSet('{"format_version":1,"commit":"a","plans":[{"format_version":1}]}', 'p.json')).toThrow(
      CliError,
    )
  })

  test.prop([fc.string(), fc.array(fc.constantFrom('homelab', 'edge', 'lab'), { maxLength: 3 })], { numRuns: 100 })(
    'parse(serialise(x)) = x',
    (commit, clusters) => {
      const plans = clusters.map((cluster) => ({ ...fixturePlan(), cluster }))
      const back = parsePlanSet(planSetJson(commit, plans), 'f')
      expect(back.commit).toBe(commit)
      expect(back.plans).toEqual(JSON.parse(JSON.stringify(plans)))
    },
  )
})

describe('flags', () => {
  it('keeps only the flags that were given', () => {
    expect(globalFlags({})).toEqual({})
    expect(globalFlags({ 'prune-budget': '0', 'git-poll-sec': 5, color: false }, { logFormat: 'json' })).toEqual({
      pruneBudget: '0',
      gitPollSec: 5,
      logFormat: 'json',
    })
    expect(globalFlags({ 'log-format': 'text' }, { logFormat: 'json' }).logFormat).toBe('text')
    expect(() => globalFlags({ 'git-poll-sec': Number.NaN })).toThrow(/--git-poll-sec/)
  })
  it('--allow-empty takes the guest kinds, case-insensitively', () => {
    expect(allowEmpty(['vm', 'TemplateCT'])).toEqual(['VM', 'TemplateCT'])
    expect(() => allowEmpty(['ISO'])).toThrow(/--allow-empty ISO: must be one of VM, TemplateVM, LXC, TemplateCT/)
    // the help text lists what the schema's registry lets the flag name
    expect(allowEmptyOption.describe).toContain(`(${ALLOW_EMPTY_KINDS.join(', ')})`)
  })
})
