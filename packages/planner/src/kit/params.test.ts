import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { describeParams, redact, resolveParams, SecretResolutionError } from './params.js'

describe('resolveParams', () => {
  it('passes plain values through and resolves references only through the port', async () => {
    const seen: string[] = []
    const { params, secrets } = await resolveParams(
      {
        memory: 2048,
        name: 'web',
        cipassword: { secret: { refs: ['cloud-init.passwords.default'], encoding: 'plain' } },
      },
      (ref) => {
        seen.push(ref)
        return 'hunter22'
      },
    )
    expect(params).toEqual({ memory: 2048, name: 'web', cipassword: 'hunter22' })
    expect(seen).toEqual(['cloud-init.passwords.default'])
    expect(secrets).toEqual(['hunter22'])
  })

  it('joins key blocks in order, de-duplicated, with inline keys last, percent-encoded as PVE wants', async () => {
    const { params } = await resolveParams(
      {
        sshkeys: {
          secret: { refs: ['a', 'b'], encoding: 'sshkeys', inline: ['ssh-ed25519 CCC c', 'ssh-ed25519 AAA a'] },
        },
      },
      (ref) => ({ a: 'ssh-ed25519 AAA a\n\nssh-rsa BBB b+x\n', b: 'ssh-rsa BBB b+x' })[ref]!,
    )
    expect(params.sshkeys).toBe(encodeURIComponent('ssh-ed25519 AAA a\nssh-rsa BBB b+x\nssh-ed25519 CCC c'))
    expect(String(params.sshkeys)).toMatch(/^[-%a-zA-Z0-9_.!~*'()]*$/)
  })

  it('fails with a coded error naming the reference, never the value', async () => {
    const error = await resolveParams(
      { cipassword: { secret: { refs: ['cloud-init.passwords.x'], encoding: 'plain' } } },
      () => '',
    ).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(SecretResolutionError)
    expect((error as SecretResolutionError).code).toBe('SECRET_UNRESOLVED')
    expect((error as Error).message).toBe(
      'secret reference cloud-init.passwords.x for parameter cipassword cannot be resolved: empty or not a string',
    )
    const two = await resolveParams({ p: { secret: { refs: ['a', 'b'], encoding: 'plain' } } }, () => 'v').catch(
      (e: unknown) => e,
    )
    expect((two as Error).message).toContain('plain encoding takes exactly one reference')
  })

  it('describes parameters with secrets as (sensitive)', () => {
    expect(describeParams({ memory: 1, sshkeys: { secret: { refs: ['a'], encoding: 'sshkeys' } } })).toEqual({
      memory: 1,
      sshkeys: '(sensitive)',
    })
  })
})

describe('redact', () => {
  it('removes every secret and its percent-encoded form from any text (property)', () => {
    const secret = fc
      .string({ minLength: 4, maxLength: 24 })
      .filter((s) => s.trim().length >= 4 && !'(sensitive)'.includes(s))
    fc.assert(
      fc.property(
        fc.array(secret, { minLength: 1, maxLength: 3 }),
        fc.array(fc.string({ maxLength: 12 }), { maxLength: 4 }),
        (secrets, filler) => {
          const text = [...filler, ...secrets, encodeURIComponent(secrets[0]!), ...filler].join(' | ')
          const out = redact(text, secrets)
          for (const s of secrets) {
            expect(out.includes(s)).toBe(false)
            expect(out.includes(encodeURIComponent(s))).toBe(false)
          }
        },
      ),
      { numRuns: 200 },
    )
  })

  it('leaves text without secrets unchanged and ignores values too short to be secrets', () => {
    expect(redact('task failed: VM 100 is locked', ['hunter22'])).toBe('task failed: VM 100 is locked')
    expect(redact('a b c', ['a'])).toBe('a b c')
  })
})
