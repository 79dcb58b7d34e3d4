import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import {
  acceptCommand,
  checkPinnedEndpoints,
  endpointOrigin,
  PinRecorder,
  PINS_FILE,
  pinChange,
  pinDir,
} from './endpoint-pins.js'

const SECRET = 'pin-CANARY-5e1f'
const cluster = (name: string, baseUrl: string, fingerprint?: string, secret = SECRET, insecure = false) => ({
  name,
  file: `clusters/${name}/config.yaml`,
  baseUrl,
  tls: { ...(fingerprint ? { fingerprint } : {}), ...(insecure ? { insecure } : {}) },
  credentials: { method: 'token' as const, tokenId: 'ops@pve!proxops', secret },
})
type Cluster = ReturnType<typeof cluster>
const dirs: string[] = []
const fresh = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'proxops-pins-'))
  dirs.push(d)
  return d
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

/**
 * One run: the check before any request, then the answers of the endpoints that worked (by default all of them).
 * Returns the clusters whose pin was recorded.
 */
function run(dir: string, clusters: Cluster[], o: { accept?: string[]; answered?: string[] } = {}): string[] {
  const recorded: string[] = []
  const pins = new PinRecorder(dir, checkPinnedEndpoints(clusters, { dir, accept: o.accept ?? [] }), (p) =>
    recorded.push(p.cluster),
  )
  for (const name of o.answered ?? clusters.map((c) => c.name)) {
    pins.answered(name)
    pins.answered(name) // every answer is reported; the pin is written once
  }
  return recorded
}

describe('endpoint pins for SOPS credentials', () => {
  it('pins once the endpoint answered, matches after, and never stores the secret', () => {
    const dir = fresh()
    const c = cluster('lab', 'https://PVE.example:8006/')
    expect(run(dir, [c])).toEqual(['lab'])
    expect(run(dir, [c])).toEqual([])
    const text = readFileSync(path.join(dir, PINS_FILE), 'utf8')
    expect(text).toContain('https://pve.example:8006')
    expect(text).not.toContain(SECRET)
  })

  it('never pins an endpoint that did not answer: a first mistake is fixed without --accept-endpoint', () => {
    const dir = fresh()
    // the typo port never answers; neither does the endpoint without a tls block (its certificate is refused)
    expect(run(dir, [cluster('lab', 'https://pve.example:8007')], { answered: [] })).toEqual([])
    expect(run(dir, [cluster('lab', 'https://pve.example:8006')], { answered: [] })).toEqual([])
    expect(existsSync(path.join(dir, PINS_FILE))).toBe(false)
    expect(run(dir, [cluster('lab', 'https://pve.example:8006', 'AA:BB')])).toEqual(['lab'])
  })

  it('pins nothing under tls.insecure: no certificate was verified', () => {
    const dir = fresh()
    expect(run(dir, [cluster('lab', 'https://pve.example:8006', undefined, SECRET, true)])).toEqual([])
    expect(existsSync(path.join(dir, PINS_FILE))).toBe(false)
  })

  it('refuses another endpoint or certificate for the same credentials, saying what changed and how to accept it', () => {
    const dir = fresh()
    run(dir, [cluster('lab', 'https://pve.example:8006', 'AA:BB')])
    const file = path.join(dir, PINS_FILE).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    expect(() => run(dir, [cluster('lab', 'https://pve.example:8007', 'AA:BB')])).toThrow(
      new RegExp(
        `^clusters/lab/config\\.yaml endpoint-refused pve\\.clusters\\.lab\\.base-url: the port changed from 8006 to 8007 since its SOPS credentials were pinned to https://pve\\.example:8006 \\(certificate AA:BB\\) \\(${file}\\); if that is intended, accept it with: proxops diff --cluster lab --accept-endpoint lab$`,
      ),
    )
    expect(() => run(dir, [cluster('lab', 'https://evil.example:8006', 'AA:BB')])).toThrow(
      /base-url: the host changed from pve\.example to evil\.example since/,
    )
    expect(() => run(dir, [cluster('lab', 'https://pve.example:8006', 'CC:DD')])).toThrow(
      /^clusters\/lab\/config\.yaml endpoint-refused pve\.clusters\.lab\.tls\.fingerprint: the certificate fingerprint changed from AA:BB to CC:DD since/,
    )
    expect(() => run(dir, [cluster('lab', 'https://pve.example:8006')])).toThrow(
      /changed from AA:BB to \(none: the CA validates\)/,
    )
  })

  it('a new entry with pinned credentials: at a pinned endpoint it is pinned too, elsewhere it is refused by name', () => {
    const dir = fresh()
    const both = [cluster('edge', 'https://edge.example:8006'), cluster('lab', 'https://pve.example:8006')]
    expect(run(dir, both)).toEqual(['edge', 'lab'])
    expect(run(dir, both)).toEqual([])
    // a copied or renamed entry pointing at a pinned endpoint is harmless: the credentials went there before
    expect(run(dir, [cluster('lab-copy', 'https://PVE.example:8006')])).toEqual(['lab-copy'])
    expect(() => run(dir, [cluster('second', 'https://other.example:8006')])).toThrow(
      /pve\.clusters\.second\.base-url: this entry is new and would send SOPS credentials that are pinned to https:\/\/edge\.example:8006 \(cluster edge\), https:\/\/pve\.example:8006 \(cluster lab\), https:\/\/pve\.example:8006 \(cluster lab-copy\) to https:\/\/other\.example:8006 .*accept it with: proxops diff --cluster second --accept-endpoint second$/,
    )
    // an entry keeps its own endpoint, even when it moves to another endpoint of the same credentials
    expect(() => run(dir, [cluster('lab', 'https://edge.example:8006')])).toThrow(
      /pve\.clusters\.lab\.base-url: the host changed from pve\.example to edge\.example/,
    )
    // other credentials are pinned on their own first use
    expect(run(dir, [cluster('other', 'https://evil.example:8006', undefined, 'x')])).toEqual(['other'])
  })

  it('--accept-endpoint moves the pin of the named cluster once the new endpoint answered', () => {
    const dir = fresh()
    run(dir, [cluster('lab', 'https://pve.example:8006')])
    const moved = cluster('lab', 'https://pve2.example:8006')
    // accepted, but the new endpoint did not answer: the old pin stays
    expect(run(dir, [moved], { accept: ['lab'], answered: [] })).toEqual([])
    expect(() => run(dir, [moved])).toThrow(/host changed/)
    expect(run(dir, [moved], { accept: ['lab'] })).toEqual(['lab'])
    expect(run(dir, [moved])).toEqual([])
    expect(() => run(dir, [cluster('lab', 'https://pve.example:8006')], { accept: ['other'] })).toThrow()
  })

  it('a damaged pin file is an error, not a fresh start', () => {
    const dir = fresh()
    writeFileSync(path.join(dir, PINS_FILE), '{"pins": 3}')
    expect(() => run(dir, [cluster('lab', 'https://pve.example:8006')])).toThrow(/not a valid endpoint pin file/)
  })

  it('says every part that changed', () => {
    expect(
      pinChange({ endpoint: 'https://a:8006', fingerprint: null }, { endpoint: 'https://b:8007', fingerprint: 'AA' }),
    ).toBe(
      'the host changed from a to b, the port changed from 8006 to 8007, the certificate fingerprint changed from (none: the CA validates) to AA',
    )
    expect(acceptCommand('edge')).toBe('proxops diff --cluster edge --accept-endpoint edge')
  })

  it('lives in --data-dir when given, else under HOME (never the repository setting)', () => {
    expect(pinDir(undefined, '/home/u', '/r')).toBe('/home/u/.local/share/proxops')
    expect(pinDir('~/state', '/home/u', '/r')).toBe('/home/u/state')
    expect(pinDir('state', '/home/u', '/r')).toBe('/r/state')
  })
})

describe('the pin file and the refusals, in detail', () => {
  const lab = cluster('lab', 'https://pve.example:8006')

  it('every damaged shape is refused with what to do; a pin without a fingerprint (null) is whole', () => {
    for (const [text, why] of [
      ['not json', 'Unexpected token'],
      ['null', 'no "pins" object'],
      ['{}', 'no "pins" object'],
      ['{"pins": null}', 'no "pins" object'],
      ['{"pins": {"k": null}}', 'a pin is not {endpoint, fingerprint}'],
      ['{"pins": {"k": 3}}', 'a pin is not {endpoint, fingerprint}'],
      ['{"pins": {"k": {"lab": null}}}', 'a pin is not {endpoint, fingerprint}'],
      ['{"pins": {"k": {"lab": {"fingerprint": null}}}}', 'a pin is not {endpoint, fingerprint}'],
      ['{"pins": {"k": {"lab": {"endpoint": "https://a:1"}}}}', 'a pin is not {endpoint, fingerprint}'],
      [
        '{"pins": {"k": {"lab": {"endpoint": "https://a:1", "fingerprint": 3}}}}',
        'a pin is not {endpoint, fingerprint}',
      ],
    ] as const) {
      const dir = fresh()
      const file = path.join(dir, PINS_FILE)
      writeFileSync(file, text)
      let message = ''
      try {
        checkPinnedEndpoints([lab], { dir, accept: [] })
      } catch (e) {
        message = (e as Error).message
      }
      expect(message, text).toContain(`${file} is not a valid endpoint pin file (`)
      expect(message, text).toContain(why)
      expect(message, text).toContain('); fix or remove it, then run again with --accept-endpoint')
    }
    const dir = fresh()
    writeFileSync(
      path.join(dir, PINS_FILE),
      JSON.stringify({
        pins: {
          k: { a: { endpoint: 'https://a:1', fingerprint: null }, b: { endpoint: 'https://b:1', fingerprint: 'AA' } },
        },
      }),
    )
    expect(checkPinnedEndpoints([lab], { dir, accept: [] })).toHaveLength(1)
  })

  it('a pin file that cannot be read is an error naming it, not a fresh start', () => {
    const dir = fresh()
    mkdirSync(path.join(dir, PINS_FILE))
    expect(() => checkPinnedEndpoints([lab], { dir, accept: [] })).toThrow(
      new RegExp(`^cannot read ${path.join(dir, PINS_FILE).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: `),
    )
    expect(() => checkPinnedEndpoints([lab], { dir, accept: [] })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID' }),
    )
    // no cluster, nothing read
    expect(checkPinnedEndpoints([], { dir, accept: [] })).toEqual([])
  })

  it('is written for the operator alone, sorted, one version', () => {
    const dir = path.join(fresh(), 'state')
    run(dir, [
      cluster('zeta', 'https://z.example:8006'),
      cluster('alpha', 'https://a.example:8006', undefined, 'other-secret'),
    ])
    const file = path.join(dir, PINS_FILE)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(statSync(dir).mode & 0o777).toBe(0o700)
    const text = readFileSync(file, 'utf8')
    expect(text.endsWith('}\n')).toBe(true)
    const doc = JSON.parse(text) as { version: number; pins: Record<string, Record<string, unknown>> }
    expect(doc.version).toBe(1)
    const keys = Object.keys(doc.pins)
    expect(keys).toEqual([...keys].sort())
    expect(keys.every((k) => /^[0-9a-f]{64}$/.test(k))).toBe(true)
    expect(Object.values(doc.pins).flatMap((byCluster) => Object.values(byCluster))).toEqual(
      expect.arrayContaining([
        { endpoint: 'https://z.example:8006', fingerprint: null },
        { endpoint: 'https://a.example:8006', fingerprint: null },
      ]),
    )
    // two entries of one credential are sorted by name
    const dir2 = fresh()
    run(dir2, [cluster('zeta', 'https://z.example:8006'), cluster('alpha', 'https://z.example:8006')])
    const one = Object.values((JSON.parse(readFileSync(path.join(dir2, PINS_FILE), 'utf8')) as typeof doc).pins)
    expect(one.map((byCluster) => Object.keys(byCluster))).toEqual([['alpha', 'zeta']])
  })

  it('ticket credentials are keyed apart from a token with the same words, and by their password', () => {
    const dir = fresh()
    const ticket = (password: string) => ({
      ...lab,
      credentials: { method: 'ticket' as const, user: 'ops@pve!proxops', password },
    })
    expect(run(dir, [ticket(SECRET) as unknown as Cluster])).toEqual(['lab'])
    // the token with the same id and secret has no pin yet: a first use
    expect(run(dir, [cluster('lab', 'https://elsewhere.example:8006')])).toEqual(['lab'])
    expect(() =>
      run(dir, [{ ...ticket(SECRET), baseUrl: 'https://other.example:8006' } as unknown as Cluster]),
    ).toThrow(/host changed/)
    expect(run(dir, [{ ...ticket('another'), baseUrl: 'https://other.example:8006' } as unknown as Cluster])).toEqual([
      'lab',
    ])
    expect(readFileSync(path.join(dir, PINS_FILE), 'utf8')).not.toContain('another')
  })

  it('a new entry at a pinned endpoint with another certificate is refused on its fingerprint', () => {
    const dir = fresh()
    run(dir, [cluster('lab', 'https://pve.example:8006', 'AA:BB')])
    expect(() => run(dir, [cluster('copy', 'https://pve.example:8006', 'CC:DD')])).toThrow(
      /pve\.clusters\.copy\.tls\.fingerprint: this entry is new, and its SOPS credentials are pinned to https:\/\/pve\.example:8006 by cluster lab with another certificate: the certificate fingerprint changed from AA:BB to CC:DD \(/,
    )
    // a pin without a certificate says no certificate
    run(dir, [cluster('plain', 'https://pve.example:8006', 'AA:BB', 'other')])
    const dir2 = fresh()
    run(dir2, [lab])
    expect(() => run(dir2, [cluster('lab', 'https://pve.example:9006')])).toThrow(
      /since its SOPS credentials were pinned to https:\/\/pve\.example:8006 \(/,
    )
  })

  it('the origin: the default port of the scheme, the host lower-cased, and an invalid URL kept apart', () => {
    expect(endpointOrigin('https://PVE.Example/api2/json')).toBe('https://pve.example:443')
    expect(endpointOrigin('http://pve.example')).toBe('http://pve.example:80')
    expect(endpointOrigin('https://pve.example:8006/x')).toBe('https://pve.example:8006')
    expect(endpointOrigin('not a url')).toBe('invalid:not a url')
    expect(
      pinChange({ endpoint: 'http://a:8006', fingerprint: 'AA' }, { endpoint: 'https://a:8006', fingerprint: null }),
    ).toBe(
      'the scheme changed from http to https, the certificate fingerprint changed from AA to (none: the CA validates)',
    )
    expect(
      pinChange({ endpoint: 'https://a:1', fingerprint: null }, { endpoint: 'https://a:1', fingerprint: null }),
    ).toBe('')
  })

  it('the recorder says which clusters wait for an answer, and records each once', () => {
    const dir = fresh()
    const seen: string[] = []
    const pins = new PinRecorder(
      dir,
      checkPinnedEndpoints([lab, cluster('edge', 'https://e.example:8006', undefined, 'x')], { dir, accept: [] }),
      (p) => seen.push(p.cluster),
    )
    expect(pins.waiting).toEqual(['lab', 'edge'])
    pins.answered('edge')
    pins.answered('unknown')
    expect(pins.waiting).toEqual(['lab'])
    expect(seen).toEqual(['edge'])
    expect(new PinRecorder(dir, []).answered('lab')).toBeUndefined()
  })
})

describe('the pin file keeps its keys (pnpm mutate)', () => {
  const lab = cluster('lab', 'https://pve.example:8006')
  const key = (...parts: string[]) =>
    createHash('sha256')
      .update(`proxops-endpoint-pin\0${parts.join('\0')}`)
      .digest('hex')

  it('keys a pin by a hash of the method, identity and secret: a pin file written before still matches', () => {
    const dir = fresh()
    run(dir, [lab])
    const ticketDir = fresh()
    run(ticketDir, [
      { ...lab, credentials: { method: 'ticket', user: 'ops@pve', password: SECRET } } as unknown as Cluster,
    ])
    const keys = (d: string) =>
      Object.keys((JSON.parse(readFileSync(path.join(d, PINS_FILE), 'utf8')) as { pins: object }).pins)
    expect(keys(dir)).toEqual([key('token', 'ops@pve!proxops', SECRET)])
    expect(keys(ticketDir)).toEqual([key('ticket', 'ops@pve', SECRET)])
  })

  it('a damaged pin among good ones is refused; the refusals carry their error codes', () => {
    const dir = fresh()
    writeFileSync(
      path.join(dir, PINS_FILE),
      JSON.stringify({ pins: { k: { a: { endpoint: 'https://a:1', fingerprint: null }, b: null } } }),
    )
    expect(() => checkPinnedEndpoints([lab], { dir, accept: [] })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', message: expect.stringContaining('a pin is not') }),
    )
    const moved = fresh()
    run(moved, [lab])
    expect(() => run(moved, [cluster('lab', 'https://other.example:8006')])).toThrow(
      expect.objectContaining({ code: 'INSECURE_ENDPOINT' }),
    )
  })
})
