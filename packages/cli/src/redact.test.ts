import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { SENSITIVE } from '@proxops/pve-client/wire'
import { SENSITIVE as SOPS_SENSITIVE, Secret } from '@proxops/sops'
import { Redactor } from './redact.js'

describe('Redactor', () => {
  it('writes the one secret marker, the one a SOPS Secret prints (sops cannot import the wire helpers)', () => {
    expect(SOPS_SENSITIVE).toBe(SENSITIVE)
    expect(String(new Secret('canary-Zq8', 'str'))).toBe(SENSITIVE)
    expect(new Redactor().add('canary-Zq8').text('x canary-Zq8')).toBe(`x ${SENSITIVE}`)
  })

  it('masks registered secrets, their percent-encoded form and credential shapes', () => {
    const r = new Redactor().add('s3cr3t/tok+en', undefined, '', 'ab')
    expect(r.text('token s3cr3t/tok+en and s3cr3t%2Ftok%2Ben')).toBe(`token ${SENSITIVE} and ${SENSITIVE}`)
    expect(r.text('PVEAPIToken=root@pam!ci=1234-abcd')).toBe(`PVEAPIToken=root@pam!ci=${SENSITIVE}`)
    expect(r.text('Cookie: PVEAuthCookie=PVE:root@pam:ABC::sig')).toContain(`PVEAuthCookie=${SENSITIVE}`)
    expect(r.text('https://git:ghp_x1y2@example.net/repo.git')).toBe(`https://git:${SENSITIVE}@example.net/repo.git`)
    expect(r.text('AGE-SECRET-KEY-1QQQQQQQQQQQQQQQQQQQQ')).toBe(SENSITIVE)
    expect(r.text('Authorization: Bearer abc.def')).toBe(`Authorization: Bearer ${SENSITIVE}`)
    // short values would shred ordinary text and are not searched for
    expect(r.text('ab cd')).toBe('ab cd')
  })

  it('masks secret-named keys and strings deep inside values, without mutating them', () => {
    const r = new Redactor().add('canary-1234')
    const input = {
      a: [{ password: 'x' }, 'has canary-1234 inside'],
      token: '',
      nested: { secret: 7 },
      err: new Error('bad canary-1234'),
    }
    const out = r.value(input)
    expect(out).toEqual({
      a: [{ password: SENSITIVE }, `has ${SENSITIVE} inside`],
      token: '',
      nested: { secret: SENSITIVE },
      err: { name: 'Error', message: `bad ${SENSITIVE}` },
    })
    expect(input.a[1]).toBe('has canary-1234 inside')
  })

  test.prop(
    [
      fc.string({ minLength: 4, maxLength: 24 }).filter((s) => s.trim() === s && s.length >= 4),
      fc.string(),
      fc.string(),
    ],
    {
      numRuns: 200,
    },
  )('never lets a registered secret through, wherever it sits', (secret, before, after) => {
    const r = new Redactor().add(secret)
    expect(r.text(before + secret + after)).not.toContain(secret)
  })

  it('copies a value shared by two branches twice; only a real cycle is cut', () => {
    const shared = { anomaly: 1 }
    const doc: Record<string, unknown> = {
      converged: { lab: { blocked: shared } },
      clusters: [{ blockedByReason: shared }],
    }
    expect(new Redactor().value(doc)).toEqual({
      converged: { lab: { blocked: { anomaly: 1 } } },
      clusters: [{ blockedByReason: { anomaly: 1 } }],
    })
    doc.self = doc
    expect(new Redactor().value(doc).self).toBe('[circular]')
  })

  it('masks the spellings a secret takes in PVE answers and JSON: form-encoded, JSON-escaped, another case', () => {
    const secret = 'Canary "q\\ote" & sp ace!'
    const r = new Redactor().add(secret)
    const form = new URLSearchParams({ password: secret }).toString()
    expect(r.text(form)).toBe(`password=${SENSITIVE}`)
    expect(r.text(JSON.stringify({ v: secret }))).toBe(`{"v":"${SENSITIVE}"}`)
    expect(r.text(`x ${secret.toUpperCase()} y`)).toBe(`x ${SENSITIVE} y`)
    expect(r.strings({ a: [`in ${secret}`], b: 3 })).toEqual({ a: [`in ${SENSITIVE}`], b: 3 })
  })

  test.prop(
    [
      fc.string({ minLength: 8, maxLength: 40 }).filter((s) => s.trim() === s),
      fc.string({ maxLength: 12 }),
      fc.string({ maxLength: 12 }),
    ],
    {
      numRuns: 200,
    },
  )(
    'never lets the base64 of a text holding a secret through, at any offset (PVEAPIToken user!id=secret)',
    (secret, before, after) => {
      const r = new Redactor().add(secret)
      const encoded = Buffer.from(before + secret + after).toString('base64')
      const shown = r.text(`Authorization: x ${encoded}`)
      // what is left cannot be decoded back to the secret
      expect(Buffer.from(shown.replace(/^Authorization: x /, ''), 'base64').toString()).not.toContain(secret)
      expect(shown).toContain(SENSITIVE)
    },
  )
})
