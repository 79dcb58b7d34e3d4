import { describe, expect, it } from 'vitest'
import type { SopsCredentials } from '@proxops/sops'
import { SENSITIVE } from '@proxops/pve-client/wire'
import { CliError } from '../errors.js'
import { Redactor } from '../redact.js'
import { maskProblem, MIN_SECRET_LENGTH, printedWords, requireMaskable, sopsRoles } from './secret-roles.js'

/** A decrypted SOPS document as @proxops/sops reads it (only what sopsRoles asks). */
function creds(
  secrets: Record<string, string>,
  passwords: Record<string, string> = {},
  keys: Record<string, string> = {},
) {
  const of = (kind: string): Record<string, string> =>
    kind === 'passwords' ? passwords : kind === 'ssh-keys' ? keys : {}
  const reveal = (v: string | undefined) => (v === undefined || v === '' ? undefined : { reveal: () => v })
  return {
    secretNames: Object.keys(secrets),
    secret: (n: string) => reveal(secrets[n]),
    names: (kind: string) => Object.keys(of(kind)),
    cloudInit: (kind: string, n: string) => reveal(of(kind)[n]),
  } as unknown as SopsCredentials
}

// the reference's own fixture, as a ticket-auth cluster reads it: the token id is no secret, whatever auth is used
const FIXTURE = creds(
  {
    'proxops-user': 'root@pam',
    'proxops-token-id': 'proxops',
    'proxops-token': '5b1f0c2e-97a1-4c39-9d3e-1f2a3b4c5d6e',
    'proxops-password': 'long-enough-CANARY-pw',
    'proxops-git-token': 'ghp_CANARYCANARYCANARY',
  },
  { default: 'ci-password-CANARY' },
  { main: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICanaryKey ops@host' },
)

describe('secret roles', () => {
  it('ticket auth: the password is a secret; the user and the unreferenced token id are not masked', () => {
    const roles = sopsRoles(
      FIXTURE,
      { user: 'proxops-user', password: 'proxops-password' },
      'clusters/lab/secrets.sops.yaml',
      'lab',
    )
    expect(roles.secrets.map((s) => s.where)).toEqual([
      'clusters/lab/secrets.sops.yaml: secrets.proxops-password (secrets.pve.password of cluster lab)',
      'clusters/lab/secrets.sops.yaml: cloud-init.passwords.default (a cloud-init password)',
    ])
    expect(roles.identities).toEqual(['root@pam'])
    const printed = printedWords(roles.identities, [{ name: 'lab', nodes: ['pve1'], baseUrl: 'https://pve:8006' }])
    const r = new Redactor().add(
      ...roles.secrets.map((s) => s.value),
      ...roles.others.filter((v) => maskProblem(v, printed) === undefined),
    )
    const header = 'ProxOps will perform the following actions: tags proxops;proxops.lab, apiVersion: proxops/v1alpha1'
    expect(r.text(header)).toBe(header)
    expect(r.text('root@pam!proxops')).toBe('root@pam!proxops')
    // what has the role of a secret, and what is safe to mask, never shows
    for (const v of ['long-enough-CANARY-pw', 'ci-password-CANARY', '5b1f0c2e-97a1-4c39-9d3e-1f2a3b4c5d6e'])
      expect(r.text(`x ${v} y`)).toBe(`x ${SENSITIVE} y`)
  })

  it('the git token is a secret only where it is read (URL mode)', () => {
    const local = sopsRoles(FIXTURE, { tokenId: 'proxops-token-id', token: 'proxops-token' }, 'f', 'lab')
    expect(local.secrets.some((s) => s.where.includes('git'))).toBe(false)
    expect(local.others).toContain('ghp_CANARYCANARYCANARY')
    const url = sopsRoles(FIXTURE, { token: 'proxops-token', gitToken: 'proxops-git-token' }, 'f', 'lab')
    expect(url.secrets.map((s) => s.where)).toContain('f: secrets.proxops-git-token (secrets.git.token of cluster lab)')
  })

  it('refuses a secret that is too short, or part of a word ProxOps prints, naming it but never its value', () => {
    const printed = printedWords(
      ['root@pam!proxops'],
      [{ name: 'homelab-main', nodes: ['pve1'], baseUrl: 'https://pve.example:8006' }],
    )
    expect(maskProblem('x'.repeat(MIN_SECRET_LENGTH - 1), printed)).toMatch(/7 characters long/)
    for (const common of ['v1alpha1', 'TemplateVM', 'HOMELAB-MAIN', 'pve.example', 'following actions'])
      expect(maskProblem(common, printed), common).toMatch(/part of a name or word ProxOps prints/)
    expect(maskProblem('6f1c0e9a-long-random', printed)).toBeUndefined()
    let error: unknown
    try {
      requireMaskable(
        [
          {
            value: 'hunter2',
            where: 'clusters/lab/secrets.sops.yaml: secrets.pw (secrets.pve.password of cluster lab)',
          },
        ],
        printed,
      )
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(CliError)
    expect((error as CliError).message).toMatch(
      /^clusters\/lab\/secrets\.sops\.yaml: secrets\.pw .* cannot be kept out of the output: it is 7 characters long/,
    )
    expect((error as CliError).message).not.toContain('hunter2')
  })
})

describe('secret roles, in detail', () => {
  it('sorts every value of a SOPS file by its role; blank values are none, an identifier is never masked', () => {
    const roles = sopsRoles(
      creds(
        {
          user: ' ops@pve ',
          id: 'ops@pve!ci',
          tok: ' token-value-1234 ',
          pw: 'password-value-1234',
          empty: '   ',
          'pve-endpoint': 'https://pve:8006',
          'pve-fingerprint': 'AA:BB',
          spare: 'spare-value-1234',
          echo: 'ops@pve',
          none: '',
        },
        { a: ' pw-a-1234567 ', blank: '  ', none: '' },
        { k: 'ssh-ed25519 AAAA key', same: 'ops@pve!ci', padded: ' ops@pve ', none: '' },
      ),
      { user: 'user', tokenId: 'id', token: 'tok', password: 'pw' },
      'f',
      'c',
    )
    expect(roles).toEqual({
      secrets: [
        { value: 'token-value-1234', where: 'f: secrets.tok (secrets.pve.token of cluster c)' },
        { value: 'password-value-1234', where: 'f: secrets.pw (secrets.pve.password of cluster c)' },
        { value: 'pw-a-1234567', where: 'f: cloud-init.passwords.a (a cloud-init password)' },
      ],
      identities: ['ops@pve', 'ops@pve!ci', 'https://pve:8006', 'AA:BB'],
      // an absent SSH key is an empty value, which nothing masks
      others: ['spare-value-1234', 'ssh-ed25519 AAAA key', ''],
    })
  })

  it('the words output is made of: fixed ones, names, nodes, hosts and every part of an identity', () => {
    const words = printedWords(
      ['ops@pve!ci', ''],
      [
        { name: 'lab', nodes: ['pve1', 'pve2'], baseUrl: 'https://Host.example:8006/' },
        { name: 'bad', nodes: [], baseUrl: 'not a url' },
      ],
    )
    for (const w of ['ProxOps will perform the following actions', 'No changes. PVE matches git.', '(sensitive)'])
      expect(words).toContain(w)
    expect(words).toContain('VM')
    expect(words.slice(-9)).toEqual(['lab', 'pve1', 'pve2', 'host.example', 'bad', 'ops@pve!ci', 'ops', 'pve', 'ci'])
    expect(words).not.toContain('')
  })

  it('says how long a short secret is, in the singular too, and accepts one of exactly the minimum', () => {
    expect(maskProblem(' a ', [])).toBe(
      'it is 1 character long: a secret shorter than 8 characters cannot be masked without hiding ordinary words',
    )
    expect(maskProblem('abcdefg', [])).toMatch(/^it is 7 characters long/)
    expect(maskProblem('abcdefgh', [])).toBeUndefined()
    expect(maskProblem(' ABCDEFGH ', ['xx abcdefgh xx'])).toBe(
      'it is part of a name or word ProxOps prints (the API version, a kind, a cluster, node, host, user or token name): masking it would corrupt that output',
    )
    expect(() => requireMaskable([{ value: 'long-enough-value', where: 'w' }], [])).not.toThrow()
    expect(() => requireMaskable([{ value: 'short', where: 'w' }], [])).toThrow(
      expect.objectContaining({ code: 'SECRETS' }),
    )
    expect(() => requireMaskable([{ value: 'short', where: 'w' }], [])).toThrow(
      'w cannot be kept out of the output: it is 5 characters long: a secret shorter than 8 characters cannot be masked without hiding ordinary words; use a longer, random value (ProxOps does not start with it)',
    )
  })
})
