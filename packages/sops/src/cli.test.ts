import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as age from 'age-encryption'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type CliIo, main } from './cli.js'
import { decryptSops } from './decrypt.js'
import { creationRuleFor } from './sopsconfig.js'

let dir = ''
let identity = ''
let recipient = ''

function io(extra: Partial<CliIo> = {}) {
  const out: string[] = []
  const err: string[] = []
  const value: CliIo = {
    env: { SOPS_AGE_KEY_FILE: join(dir, 'keys.txt') },
    homeDir: join(dir, 'home'),
    cwd: dir,
    stdout: (t) => void out.push(t),
    stderr: (t) => void err.push(t),
    readStdin: async () => 'stdin-canary-pw\n',
    ...extra,
  }
  return { io: value, out, err }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'proxops-sops-cli-'))
  identity = await age.generateIdentity()
  recipient = await age.identityToRecipient(identity)
  writeFileSync(join(dir, 'keys.txt'), `# test\n${identity}\n`)
  mkdirSync(join(dir, 'clusters', 'lab'), { recursive: true })
  writeFileSync(
    join(dir, '.sops.yaml'),
    `creation_rules:\n  - path_regex: ^clusters/[^/]+/secrets\\.sops\\.yaml$\n    age: ${recipient}\n  - path_regex: \\.json$\n    encrypted_regex: ^secret$\n    age: [${recipient}]\n`,
  )
  writeFileSync(join(dir, 'clusters', 'lab', 'secrets.sops.yaml'), 'secrets:\n  proxops-token: tok-canary\n')
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('.sops.yaml creation rules', () => {
  const conf = `creation_rules:
  - path_regex: ^prod/.*
    key_groups:
      - age: [age1a, age1b]
  - path_regex: \\.json$
    age: age1c, age1d
    encrypted_regex: ^(data|stringData)$
    mac_only_encrypted: true
  - age: age1e
`
  test.each([
    ['/r/prod/x.yaml', { recipients: ['age1a', 'age1b'], macOnlyEncrypted: false }],
    [
      '/r/dev/x.json',
      {
        recipients: ['age1c', 'age1d'],
        rule: { kind: 'encrypted_regex', value: '^(data|stringData)$' },
        macOnlyEncrypted: true,
      },
    ],
    ['/r/dev/x.yaml', { recipients: ['age1e'], macOnlyEncrypted: false }],
  ])('%s', (file, expected) => {
    expect(creationRuleFor(conf, '/r/.sops.yaml', file)).toEqual(expected)
  })

  test('no matching rule, or no age keys, is an error', () => {
    expect(() =>
      creationRuleFor('creation_rules:\n  - path_regex: ^x$\n    age: a\n', '/r/.sops.yaml', '/r/y'),
    ).toThrow(/no creation rule/)
    expect(() => creationRuleFor('creation_rules:\n  - pgp: ABC\n', '/r/.sops.yaml', '/r/y')).toThrow(
      expect.objectContaining({ code: 'Unsupported' }),
    )
  })
})

describe('proxops-sops', () => {
  test('encrypt in place with .sops.yaml, then decrypt, add from stdin, recipients', async () => {
    const file = 'clusters/lab/secrets.sops.yaml'
    const a = io()
    expect(await main(['encrypt', '-i', file], a.io)).toBe(0)
    const encText = readFileSync(join(dir, file), 'utf8')
    expect(encText).toContain(recipient)
    expect(encText).not.toContain('tok-canary')

    const b = io()
    expect(await main(['decrypt', file, '--extract', 'secrets.proxops-token'], b.io)).toBe(0)
    expect(b.out.join('')).toBe('tok-canary\n')

    const c = io()
    expect(await main(['add', file, 'cloud-init.passwords.default'], c.io)).toBe(0)
    const doc = await decryptSops(readFileSync(join(dir, file), 'utf8'), { identities: [identity] })
    expect(doc.get('cloud-init.passwords.default')?.reveal()).toBe('stdin-canary-pw')
    expect(readFileSync(join(dir, file), 'utf8')).not.toContain('stdin-canary')

    const d = io()
    expect(await main(['add', file, 'cloud-init.passwords.default'], d.io)).toBe(1)
    expect(d.err.join('')).toContain('already exists')

    const e = io()
    expect(await main(['recipients', file], e.io)).toBe(0)
    expect(e.out.join('')).toBe(`${recipient}\n`)
  })

  test('set replaces one value in place, from stdin or an argument, to the same recipients; nothing printed', async () => {
    const file = 'clusters/lab/set.sops.yaml'
    writeFileSync(join(dir, file), 'secrets:\n  proxops-token: old-canary\n  proxops-user: ops@pve\n')
    expect(await main(['encrypt', '--age', recipient, '-i', file], io().io)).toBe(0)
    const before = readFileSync(join(dir, file), 'utf8')
    const userCipher = /proxops-user: (ENC\[[^\]]+\])/.exec(before)?.[1] as string
    const a = io({ readStdin: async () => 'new-canary-from-stdin\n' })
    expect(await main(['set', file, 'secrets.proxops-token', '--stdin'], a.io)).toBe(0)
    const afterStdin = readFileSync(join(dir, file), 'utf8')
    const doc = await decryptSops(afterStdin, { identities: [identity] })
    expect(doc.get('secrets.proxops-token')?.reveal()).toBe('new-canary-from-stdin')
    expect(afterStdin).toContain(userCipher)
    expect(afterStdin).not.toContain('new-canary')
    const b = io({ readStdin: async () => expect.fail('VALUE was given: stdin is not read') })
    expect(await main(['set', file, 'secrets.proxops-token', 'argument-canary'], b.io)).toBe(0)
    const r = io()
    expect(await main(['recipients', file], r.io)).toBe(0)
    expect(r.out.join('')).toBe(`${recipient}\n`)
    expect((await decryptSops(readFileSync(join(dir, file), 'utf8'), { identities: [identity] })).revealText()).toBe(
      'secrets:\n    proxops-token: argument-canary\n    proxops-user: ops@pve\n',
    )
    const c = io()
    expect(await main(['set', file, 'secrets'], c.io)).toBe(1)
    expect(c.err.join('')).toContain('cannot set a value over a mapping')
    const d = io()
    expect(await main(['set', file, 'secrets.proxops-token', 'x', '--stdin'], d.io)).toBe(2)
    for (const x of [a, b, c, d]) expect([...x.out, ...x.err].join('')).not.toMatch(/canary/)
  })

  test('encrypt JSON to stdout with the matching rule, --age overrides', async () => {
    writeFileSync(join(dir, 'x.json'), '{"secret": "s", "open": "o"}')
    const a = io()
    expect(await main(['encrypt', 'x.json'], a.io)).toBe(0)
    const j = JSON.parse(a.out.join('')) as Record<string, unknown>
    expect(String(j.secret)).toMatch(/^ENC\[/)
    expect(j.open).toBe('o')
    const b = io()
    expect(await main(['encrypt', '--age', recipient, 'x.json'], b.io)).toBe(0)
    expect(String((JSON.parse(b.out.join('')) as Record<string, unknown>).open)).toMatch(/^ENC\[/)
  })

  test('errors: coded message on stderr, exit 1; usage errors exit 2; no secret in output', async () => {
    const a = io({ env: {} })
    expect(await main(['decrypt', 'clusters/lab/secrets.sops.yaml'], a.io)).toBe(1)
    expect(a.err.join('')).toMatch(/NoIdentity/)
    const b = io()
    expect(await main(['frobnicate', 'x'], b.io)).toBe(2)
    const c = io()
    expect(await main(['decrypt', 'x.json'], c.io)).toBe(1)
    expect(c.err.join('')).toContain('NotEncrypted')
    const d = io()
    expect(await main(['decrypt', '--agee', 'x'], d.io)).toBe(2)
    const e = io()
    expect(await main(['add', 'clusters/lab/secrets.sops.yaml', 'cloud-init.passwords.default'], e.io)).toBe(1)
    for (const x of [a, b, c, d, e]) {
      expect([...x.out, ...x.err].join('')).not.toMatch(/canary/)
      // one line, in the format proxops uses, printed once
      expect(x.err).toHaveLength(1)
      expect(x.err[0]).toMatch(/^proxops-sops: error: [^\n]+\n$/)
    }
    expect(b.err[0]).toBe(
      'proxops-sops: error: unknown command "frobnicate": one of encrypt, decrypt, add, set, recipients (see proxops-sops --help)\n',
    )
    expect(d.err[0]).toBe("proxops-sops: error: Unknown option '--agee' (see proxops-sops --help)\n")
    expect(e.err[0]).toBe('proxops-sops: error: cloud-init.passwords.default already exists; nothing written\n')
  })

  test('--version prints the package version and runs nothing', async () => {
    const a = io()
    expect(await main(['decrypt', 'nope.yaml', '--version'], a.io)).toBe(0)
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string
    }
    expect(a.out).toEqual([`proxops-sops version ${version}\n`])
    expect(a.err).toEqual([])
  })
})
