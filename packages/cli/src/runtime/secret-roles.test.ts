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
  const reveal = (v: string | undefined) => (v === undefined || v === '' ? undefined : { reveal: () => v })
  return {
    secretNames: Object.keys(secrets),
    secret: (n: string) => reveal(secrets[n]),
    names: (kind: 'ssh-keys' | 'passwords') => Object.keys(kind === 'passwords' ? passwords : keys),
    cloudInit: (kind: 'ssh-keys' | 'passwords', n: string) => reveal((kind === 'passwords' ? passwords : keys)[n]),
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
