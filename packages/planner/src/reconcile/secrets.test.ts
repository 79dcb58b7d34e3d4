import { describe, expect, it } from 'vitest'
import { secretRefs } from './secrets.js'
import { lxc, vm } from '../fixtures.test.helpers.js'

describe('secretRefs', () => {
  it("lists every VM's cloud-init references once, sorted", () => {
    const ci = (keys: string[], password?: string) => ({
      'cloud-init-data': { 'ssh-key-refs': keys, ...(password === undefined ? {} : { 'ci-password-ref': password }) },
    })
    expect(
      secretRefs([
        vm('b', 101, ci(['keys.bob', 'keys.alice'], 'passwords.default')),
        vm('a', 100, ci(['keys.alice'])),
        vm('t', 900, ci([], 'passwords.template'), 'TemplateVM'),
        lxc('ct', 200),
      ]),
    ).toEqual(['keys.alice', 'keys.bob', 'passwords.default', 'passwords.template'])
    expect(secretRefs([vm('plain', 100)])).toEqual([])
  })
})
