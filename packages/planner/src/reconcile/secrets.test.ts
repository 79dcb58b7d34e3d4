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

  it("lists a storage's credential references (password, keyring, encryption and master keys), and only a storage's", () => {
    const storage = (name: string, spec: Record<string, unknown>, kind = 'Storage') =>
      ({ apiVersion: 'proxops.io/v1', kind, metadata: { name }, spec }) as never
    expect(
      secretRefs([
        storage('pbs', {
          type: 'pbs',
          'password-ref': 'storage.pbs-password',
          'encryption-key-ref': 'storage.pbs-key',
          'master-pubkey-ref': 'storage.pbs-master',
        }),
        storage('ceph', { type: 'rbd', keyring: 'inline', 'keyring-ref': 'storage.ceph-keyring' }),
        storage('plain', { type: 'dir' }),
        storage('pool', { 'password-ref': 'not.a.storage' }, 'Pool'),
      ]),
    ).toEqual(['storage.ceph-keyring', 'storage.pbs-key', 'storage.pbs-master', 'storage.pbs-password'])
  })
})
