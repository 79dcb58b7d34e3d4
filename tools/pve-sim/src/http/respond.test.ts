import fc from 'fast-check'
import { gunzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { reasonPhrase, renderApiError, renderBare, renderData } from './respond.js'

const opts = { acceptGzip: false, messageInBody: true }

// pve-http-server: success and error envelopes, reason phrase = first line of the message
describe('response rendering', () => {
  it('success: {"data": ...}, total only when > 0, undefined as null', () => {
    expect(JSON.parse(renderData({ a: 1 }, undefined, opts).body.toString())).toEqual({ data: { a: 1 } })
    expect(JSON.parse(renderData([], 0, opts).body.toString())).toEqual({ data: [] })
    expect(JSON.parse(renderData([{ n: 1 }], 1, opts).body.toString())).toEqual({ data: [{ n: 1 }], total: 1 })
    expect(JSON.parse(renderData(undefined, undefined, opts).body.toString())).toEqual({ data: null })
  })

  it('errors: reason = first line, body keeps the whole message; errors map only when non-empty', () => {
    const r = renderApiError(500, 'first line\nsecond\n', undefined, opts)
    expect(r.reason).toBe('first line')
    expect(JSON.parse(r.body.toString())).toEqual({ data: null, message: 'first line\nsecond\n' })
    const p = renderApiError(400, 'Parameter verification failed.\n', { x: 'y' }, { ...opts, messageInBody: false })
    expect(JSON.parse(p.body.toString())).toEqual({ data: null, errors: { x: 'y' } })
  })

  it('bare responses have no body and no content type', () => {
    const r = renderBare(401, 'No ticket', opts, 3000)
    expect(r.body.length).toBe(0)
    expect(r.headers['Content-Type']).toBeUndefined()
    expect(r.delayMs).toBe(3000)
    expect(r.headers.Connection).toBe('close')
  })

  it('gzips only bodies over 1 KiB', () => {
    const big = renderData('x'.repeat(2000), undefined, { ...opts, acceptGzip: true })
    expect(big.headers['Content-Encoding']).toBe('gzip')
    expect(JSON.parse(gunzipSync(big.body).toString())).toEqual({ data: 'x'.repeat(2000) })
    expect(renderData('x', undefined, { ...opts, acceptGzip: true }).headers['Content-Encoding']).toBeUndefined()
  })

  it('a reason phrase never carries CR/LF or control characters (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (m) => {
        const r = reasonPhrase(m)
        expect(r).not.toMatch(/[\r\n\x00-\x08\x0b-\x1f\x7f]/)
        expect(m.startsWith(r) || r.includes('?')).toBe(true)
      }),
      { numRuns: 300 },
    )
  })
})
