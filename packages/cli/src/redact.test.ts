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

describe('Redactor, each credential shape word for word', () => {
  const r = new Redactor()

  it.each([
    ['PVEAPIToken=root@pam!ci=1234-abcd, next', `PVEAPIToken=root@pam!ci=${SENSITIVE}, next`],
    ['header "PVEAPIToken=ops@pve!proxops=aaaa-bbbb" sent', `header "PVEAPIToken=ops@pve!proxops=${SENSITIVE}" sent`],
    ['pveapitoken=a@b!c=dd;x', `pveapitoken=a@b!c=${SENSITIVE};x`],
    ['PVEAPIToken=root@pam=nobang', 'PVEAPIToken=root@pam=nobang'],
    ["Cookie: PVEAuthCookie=PVE:root@pam:ABC::sig'", `Cookie: PVEAuthCookie=${SENSITIVE}'`],
    ['CSRFPreventionToken: 65F1A2:abcdef more', `CSRFPreventionToken: ${SENSITIVE} more`],
    ['{"CSRFPreventionToken":"65F1A2:abc"}', `{"CSRFPreventionToken":"${SENSITIVE}"}`],
    ['csrfpreventiontoken=xyz', `csrfpreventiontoken=${SENSITIVE}`],
    ['Authorization: Basic dXNlcjpwYXNz', `Authorization: Basic ${SENSITIVE}`],
    ['authorization=token abc123', `authorization=token ${SENSITIVE}`],
    ['{"Authorization": "Bearer a.b.c"}', `{"Authorization": "Bearer ${SENSITIVE}"}`],
    ['Authorization: Digest abc', 'Authorization: Digest abc'],
    ['git+https://user:p4ss@host/x and ftp://a:b@c', `git+https://user:${SENSITIVE}@host/x and ftp://a:${SENSITIVE}@c`],
    ['https://host:8006/api2/json', 'https://host:8006/api2/json'],
    ['key AGE-SECRET-KEY-PQ-1ABCDEF0123 end', `key ${SENSITIVE} end`],
    ['AGE-SECRET-KEY-1ABCdef', `${SENSITIVE}def`],
    ['nothing to hide here', 'nothing to hide here'],
  ])('%s', (input, shown) => {
    expect(r.text(input)).toBe(shown)
  })

  it('masks the value of every secret-named key, in any case, unless it is empty or absent', () => {
    const keys = ['password', 'passwd', 'token', 'token-value', 'tokenvalue', 'secret', 'cipassword', 'sshkey']
    const more = ['keyfile', 'authorization', 'cookie', 'git-token', 'pve-token', 'api-token', 'PASSWORD', 'Api-Token']
    const input = Object.fromEntries([...keys, ...more].map((k) => [k, 'v']))
    expect(Object.values(r.value(input))).toEqual([...keys, ...more].map(() => SENSITIVE))
    expect(r.value({ password: null, token: undefined, secret: '', tokens: 'v', mypassword: 'v' })).toEqual({
      password: null,
      token: undefined,
      secret: '',
      tokens: 'v',
      mypassword: 'v',
    })
  })

  it('an error keeps its name, its code when it has one, and a redacted message', () => {
    const err = Object.assign(new TypeError('PVEAuthCookie=abc'), { code: 'E_X' })
    expect(r.value({ err })).toEqual({ err: { name: 'TypeError', message: `PVEAuthCookie=${SENSITIVE}`, code: 'E_X' } })
    const numbered = Object.assign(new Error('x'), { code: 3 })
    expect(r.value(numbered)).toEqual({ name: 'Error', message: 'x' })
  })

  it('strings() masks strings and leaves keys and other values', () => {
    const red = new Redactor().add('  canary key  ')
    // as written, percent-encoded and form-encoded; trimmed
    expect(red.size).toBe(3)
    expect(red.strings({ password: 'canary key', list: [null, 2, true, 'a canary key'] })).toEqual({
      password: SENSITIVE,
      list: [null, 2, true, `a ${SENSITIVE}`],
    })
    expect(red.strings('canary key')).toBe(SENSITIVE)
    expect(red.value([1, 'canary key', null])).toEqual([1, SENSITIVE, null])
  })

  it('a secret that contains another is masked whole, and registering more keeps the earlier ones', () => {
    const red = new Redactor().add('abcd').add('abcdefgh')
    expect(red.text('x abcdefgh y abcd')).toBe(`x ${SENSITIVE} y ${SENSITIVE}`)
    expect(red.text('x abcdefgh')).not.toContain('efgh')
  })
})

describe('Redactor, in detail (pnpm mutate)', () => {
  it('base64 cores: 8 characters are enough, fewer are none; the URL-safe spelling is a core too', async () => {
    const { base64Cores } = await import('./redact.js')
    expect(base64Cores('abcd')).toEqual([])
    // six bytes: only the first alignment leaves 8 characters fixed by the secret alone
    expect(base64Cores('abcdef')).toEqual(['YWJjZGVm'])
    expect(base64Cores('??>???')).toEqual(['Pz8+Pz8/', 'Pz8-Pz8_'])
  })

  it('a secret with no base64 core still masks only itself, and credential shapes are masked beside registered secrets', () => {
    expect(new Redactor().add('abcd').text('x abcd y')).toBe(`x ${SENSITIVE} y`)
    expect(new Redactor().add('secret-value-1').text('PVEAuthCookie=tkt')).toBe(`PVEAuthCookie=${SENSITIVE}`)
    // every base64 copy of a secret, not only the first
    expect(new Redactor().add('abcdef').text('x YWJjZGVm y YWJjZGVm')).toBe(`x ${SENSITIVE} y ${SENSITIVE}`)
  })

  it('with nothing registered, text that only looks like a credential line is left as it is', () => {
    expect(new Redactor().text('Authorization: undefined')).toBe('Authorization: undefined')
  })
})
