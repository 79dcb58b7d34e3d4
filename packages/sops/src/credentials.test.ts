import { describe, expect, test } from 'vitest'
import { parseCloudInitRef, readCredentials } from './credentials.js'
import { decryptSops } from './decrypt.js'
import { encryptSops } from './encrypt.js'

const dataKey = new Uint8Array(32).fill(3)
const recipient = 'age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p'

async function doc(plain: string) {
  return decryptSops(await encryptSops(plain, { recipients: [recipient], dataKey, file: 's.yaml' }), {
    dataKey,
    file: 's.yaml',
  })
}

describe('credential document', () => {
  test('reads secrets and cloud-init blocks; values trimmed; empty means missing', async () => {
    const c = readCredentials(
      await doc(`secrets:
  proxops-user: root@pam
  proxops-token-id: proxops
  proxops-token: "  5f0c-canary  "
  proxops-password: ""
  port: 8006
cloud-init:
  ssh-keys:
    main: ssh-ed25519 AAAA ops@host
  passwords:
    default: pw-canary
`),
      { cluster: 'homelab' },
    )
    expect(c.secretNames).toEqual(['proxops-user', 'proxops-token-id', 'proxops-token', 'proxops-password', 'port'])
    expect(c.secret('proxops-token')?.reveal()).toBe('5f0c-canary')
    expect(c.secret('port')?.reveal()).toBe('8006')
    expect(c.secret('proxops-password')).toBeUndefined()
    expect(c.requireSecret('proxops-user', 'secrets.pve.user').reveal()).toBe('root@pam')
    expect(c.resolveRef('cloud-init.ssh-keys.main').reveal()).toBe('ssh-ed25519 AAAA ops@host')
    expect(c.resolveRef('cloud-init.passwords.default').reveal()).toBe('pw-canary')
    // a credential a manifest names (a Storage's password-ref) is a `secrets.<name>` reference
    expect(c.resolveRef('secrets.proxops-token').reveal()).toBe('5f0c-canary')
    expect(() => c.resolveRef('secrets.proxops-password')).toThrow(
      /reference secrets\.proxops-password is missing or empty/,
    )
    expect(c.names('ssh-keys')).toEqual(['main'])
    expect(JSON.stringify(c)).not.toContain('canary')
  })

  test('missing or empty keys fail naming cluster, file, key and field, never a value', async () => {
    const c = readCredentials(await doc('secrets:\n  proxops-password: ""\n  other: canary-value\n'), {
      cluster: 'edge',
    })
    const e1 = (() => {
      try {
        c.requireSecret('proxops-password', 'secrets.pve.password')
      } catch (e) {
        return e as Error & { code: string }
      }
    })()
    expect(e1?.code).toBe('MissingKey')
    expect(e1?.message).toContain('edge')
    expect(e1?.message).toContain('s.yaml')
    expect(e1?.message).toContain('proxops-password')
    expect(e1?.message).toContain('secrets.pve.password')
    expect(() => c.resolveRef('cloud-init.ssh-keys.main')).toThrow(/cloud-init\.ssh-keys\.main/)
    expect(() => c.resolveRef('cloud-init.other.main')).toThrow(expect.objectContaining({ code: 'Malformed' }))
  })

  test.each([
    ['a: b\n', 'neither'],
    ['secrets:\n  nested:\n    x: y\n', 'scalar'],
    ['secrets: [a]\n', 'mapping'],
    ['cloud-init:\n  ssh-keys: [a]\n', 'mapping'],
    ['cloud-init: {}\n', 'neither'],
  ])('malformed shape %j', async (plain, msg) => {
    const d = await doc(plain)
    expect(() => readCredentials(d)).toThrow(
      expect.objectContaining({ code: 'Malformed', message: expect.stringContaining(msg) }),
    )
  })

  test('a cloud-init-only document is fine', async () => {
    const c = readCredentials(await doc('cloud-init:\n  passwords:\n    default: x\n'))
    expect(c.secretNames).toEqual([])
    expect(c.cloudInit('passwords', 'default')?.reveal()).toBe('x')
  })
})

describe('cloud-init references', () => {
  test.each([
    ['cloud-init.ssh-keys.main', { kind: 'ssh-keys', name: 'main' }],
    ['cloud-init.passwords.default', { kind: 'passwords', name: 'default' }],
    ['cloud-init.ssh-keys.adopted-0123456789abcdef', { kind: 'ssh-keys', name: 'adopted-0123456789abcdef' }],
    ['cloud-init.ssh-keys.-bad', undefined],
    ['cloud-init.ssh-keys.Main', undefined],
    ['cloud-init.ssh-keys.a.b', undefined],
    ['cloud-init.keys.main', undefined],
    [`cloud-init.passwords.${'a'.repeat(65)}`, undefined],
  ])('%s', (ref, expected) => {
    expect(parseCloudInitRef(ref)).toEqual(expected)
  })
})
