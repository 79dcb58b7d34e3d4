import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { loadApidoc } from './load.js'
import { RouteIndex, uriUnescape } from './route-index.js'

function sample(): RouteIndex {
  const idx = new RouteIndex()
  idx.add('/nodes', { GET: {} })
  idx.add('/nodes/{node}/qemu', { GET: {}, POST: {} })
  idx.add('/nodes/{node}/qemu/{vmid}/config', { GET: {}, PUT: {}, POST: {} })
  idx.add('/nodes/{node}/storage/{storage}/content/{volume}', { GET: {}, DELETE: {} })
  idx.add('/nodes/{node}/storage/{storage}/download-url', { POST: {} })
  idx.add('/cluster/nextid', { GET: {} })
  return idx
}

// PVE::RESTHandler: the path is URI-unescaped before routing; unknown routes are 501s
describe('route index', () => {
  it('matches templates and extracts path parameters', () => {
    const m = sample().match('PUT', '/nodes/pve1/qemu/100/config')
    expect(m).toMatchObject({ template: '/nodes/{node}/qemu/{vmid}/config', pathParams: { node: 'pve1', vmid: '100' } })
    expect(m?.info).toBeDefined()
  })

  it('knows the template but not the method (-> 501 for the caller)', () => {
    const m = sample().match('DELETE', '/nodes/pve1/qemu/100/config')
    expect(m?.template).toBe('/nodes/{node}/qemu/{vmid}/config')
    expect(m?.info).toBeUndefined()
  })

  it('returns nothing for unknown paths', () => {
    expect(sample().match('GET', '/nodes/pve1/nothing')).toBeUndefined()
    expect(sample().match('GET', '/')).toBeUndefined()
  })

  it('decodes an encoded volid and lets {volume} take a literal slash', () => {
    const enc = sample().match(
      'GET',
      `/nodes/pve1/storage/local/content/${encodeURIComponent('local:iso/debian 12.iso')}`,
    )
    expect(enc?.pathParams.volume).toBe('local:iso/debian 12.iso')
    const lit = sample().match('GET', '/nodes/pve1/storage/local/content/local:iso/x.iso')
    expect(lit?.pathParams.volume).toBe('local:iso/x.iso')
  })

  it('prefers a static segment over a parameter', () => {
    const m = sample().match('POST', '/nodes/pve1/storage/local/download-url')
    expect(m?.template).toBe('/nodes/{node}/storage/{storage}/download-url')
  })

  it('uriUnescape decodes UTF-8 percent runs and leaves bad escapes (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 20 }), (s) => {
        expect(uriUnescape(encodeURIComponent(s))).toBe(s)
      }),
      { numRuns: 200 },
    )
    expect(uriUnescape('100%zz')).toBe('100%zz')
  })

  const apidoc = loadApidoc('9.1')
  it.skipIf(!apidoc.ok)('routes every template of the 9.1 schema back to itself', () => {
    if (!apidoc.ok) return
    const idx = RouteIndex.fromTree(apidoc.tree)
    expect(idx.templates.length).toBeGreaterThan(400)
    for (const t of idx.templates) {
      const path = t.replace(/\{[^}]+\}/g, (p) => (p === '{volume}' ? 'local:iso/x.iso' : 'x1'))
      const m = ['GET', 'POST', 'PUT', 'DELETE'].map((meth) => idx.match(meth as 'GET', path)).find(Boolean)
      expect(m?.template, t).toBe(t)
    }
  })
})
