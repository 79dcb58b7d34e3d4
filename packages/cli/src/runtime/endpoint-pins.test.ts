import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { checkPinnedEndpoints, PINS_FILE, pinDir } from './endpoint-pins.js'

const SECRET = 'pin-CANARY-5e1f'
const cluster = (name: string, baseUrl: string, fingerprint?: string, secret = SECRET) => ({
  name,
  file: `clusters/${name}/config.yaml`,
  baseUrl,
  tls: fingerprint ? { fingerprint } : {},
  credentials: { method: 'token' as const, tokenId: 'ops@pve!proxops', secret },
})
const results = (outcomes: { result: string }[]) => outcomes.map((o) => o.result)
const dirs: string[] = []
const fresh = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'proxops-pins-'))
  dirs.push(d)
  return d
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

describe('endpoint pins for SOPS credentials', () => {
  it('pins on first use, matches after, and never stores the secret', () => {
    const dir = fresh()
    const c = cluster('lab', 'https://PVE.example:8006/')
    expect(checkPinnedEndpoints([c], { dir, accept: [] }).map((o) => o.result)).toEqual(['pinned'])
    expect(checkPinnedEndpoints([c], { dir, accept: [] }).map((o) => o.result)).toEqual(['matched'])
    const text = readFileSync(path.join(dir, PINS_FILE), 'utf8')
    expect(text).toContain('https://pve.example:8006')
    expect(text).not.toContain(SECRET)
  })

  it('refuses another endpoint or certificate for the same credentials, also under another cluster name', () => {
    const dir = fresh()
    checkPinnedEndpoints([cluster('lab', 'https://pve.example:8006', 'AA:BB')], { dir, accept: [] })
    expect(() =>
      checkPinnedEndpoints([cluster('lab', 'https://evil.example:8006', 'AA:BB')], { dir, accept: [] }),
    ).toThrow(
      /base-url: https:\/\/evil\.example:8006 is not the endpoint its SOPS credentials were pinned to \(https:\/\/pve\.example:8006\).*--accept-endpoint lab/,
    )
    expect(() =>
      checkPinnedEndpoints([cluster('lab', 'https://pve.example:8006', 'CC:DD')], { dir, accept: [] }),
    ).toThrow(
      // validate's format: the file relative to the repository, the code, the setting and why
      /^clusters\/lab\/config\.yaml endpoint-refused pve\.clusters\.lab\.tls\.fingerprint: CC:DD is not the certificate its SOPS credentials were pinned to \(AA:BB\)/,
    )
    expect(() =>
      checkPinnedEndpoints([cluster('lab2', 'https://evil.example:8006', 'AA:BB')], { dir, accept: [] }),
    ).toThrow(/pve\.clusters\.lab2\.base-url/)
  })

  it('credentials shared by two clusters are pinned at both on their first run; a new entry only at those', () => {
    const dir = fresh()
    const both = [cluster('edge', 'https://edge.example:8006'), cluster('lab', 'https://pve.example:8006')]
    expect(results(checkPinnedEndpoints(both, { dir, accept: [] }))).toEqual(['pinned', 'pinned'])
    expect(results(checkPinnedEndpoints(both, { dir, accept: [] }))).toEqual(['matched', 'matched'])
    // a copied or renamed entry pointing at a pinned endpoint is harmless: the credentials went there before
    expect(
      results(checkPinnedEndpoints([cluster('lab-copy', 'https://PVE.example:8006')], { dir, accept: [] })),
    ).toEqual(['pinned'])
    expect(() =>
      checkPinnedEndpoints([cluster('lab-copy2', 'https://evil.example:8006')], { dir, accept: [] }),
    ).toThrow(
      /pve\.clusters\.lab-copy2\.base-url: https:\/\/evil\.example:8006 is not the endpoint its SOPS credentials were pinned to \(https:\/\/edge\.example:8006, https:\/\/pve\.example:8006\)/,
    )
    // an entry keeps its own endpoint, even when it moves to another endpoint of the same credentials
    expect(() => checkPinnedEndpoints([cluster('lab', 'https://edge.example:8006')], { dir, accept: [] })).toThrow(
      /pve\.clusters\.lab\.base-url: .* pinned to \(https:\/\/pve\.example:8006\)/,
    )
    // other credentials are pinned on their own first use
    expect(
      results(
        checkPinnedEndpoints([cluster('other', 'https://evil.example:8006', undefined, 'x')], { dir, accept: [] }),
      ),
    ).toEqual(['pinned'])
  })

  it('--accept-endpoint replaces the pin for the named cluster only', () => {
    const dir = fresh()
    checkPinnedEndpoints([cluster('lab', 'https://pve.example:8006')], { dir, accept: [] })
    const moved = cluster('lab', 'https://pve2.example:8006')
    expect(checkPinnedEndpoints([moved], { dir, accept: ['lab'] }).map((o) => o.result)).toEqual(['pinned'])
    expect(checkPinnedEndpoints([moved], { dir, accept: [] }).map((o) => o.result)).toEqual(['matched'])
    expect(() =>
      checkPinnedEndpoints([cluster('lab', 'https://pve.example:8006')], { dir, accept: ['other'] }),
    ).toThrow()
  })

  it('a damaged pin file is an error, not a fresh start', () => {
    const dir = fresh()
    writeFileSync(path.join(dir, PINS_FILE), '{"pins": 3}')
    expect(() => checkPinnedEndpoints([cluster('lab', 'https://pve.example:8006')], { dir, accept: [] })).toThrow(
      /not a valid endpoint pin file/,
    )
  })

  it('lives in --data-dir when given, else under HOME (never the repository setting)', () => {
    expect(pinDir(undefined, '/home/u', '/r')).toBe('/home/u/.local/share/proxops')
    expect(pinDir('~/state', '/home/u', '/r')).toBe('/home/u/state')
    expect(pinDir('state', '/home/u', '/r')).toBe('/r/state')
  })
})
