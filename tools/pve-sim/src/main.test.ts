import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DEMO_TOKEN_SECRET, startSimulator } from './index.js'
import { banner, bannerJson, keptCertificate, parseSimArgs, UsageError } from './main.js'

describe('pnpm sim command line', () => {
  it('defaults: 127.0.0.1:8006, HTTPS, pve1..pve3, seed 1, 9.1, demo token, schema on, PVE auth delay', () => {
    const r = parseSimArgs([], {})
    expect(r).toMatchObject({
      help: false,
      options: {
        port: 8006,
        host: '127.0.0.1',
        nodes: ['pve1', 'pve2', 'pve3'],
        seed: 1,
        pveVersion: '9.1',
        tls: true,
        taskDurationMs: 2000,
        tokens: [{ id: 'root@pam!proxops', secret: DEMO_TOKEN_SECRET }],
        schemaValidation: true,
        authFailureDelayMs: 3000,
      },
    })
  })

  it('flags for port, seed, estate size, version, http, control file, token secret', () => {
    const r = parseSimArgs(
      [
        '--port',
        '0',
        '--seed',
        '7',
        '--guests',
        '50',
        '--pve-version',
        '8.4',
        '--http',
        '--control',
        'c.json',
        '--token-secret',
        's3',
        '--nodes',
        'edge1',
        '--fast-auth-failures',
      ],
      { PROXOPS_SIM_TOKEN_SECRET: 'from-env' },
    )
    expect(r).toMatchObject({
      help: false,
      guests: 50,
      controlFile: 'c.json',
      options: {
        port: 0,
        seed: 7,
        estate: { guests: 50 },
        pveVersion: '8.4',
        tls: false,
        controlFile: 'c.json',
        nodes: ['edge1'],
        authFailureDelayMs: 0,
        tokens: [{ secret: 's3' }],
      },
    })
    expect(parseSimArgs([], { PROXOPS_SIM_TOKEN_SECRET: 'from-env' })).toMatchObject({
      options: { tokens: [{ secret: 'from-env' }] },
    })
  })

  it("ignores a -- that pnpm passes through, also after the script's own flags", () => {
    expect(parseSimArgs(['--', '--port', '0'], {})).toMatchObject({ options: { port: 0 } })
    expect(parseSimArgs(['--cert-dir', 'd', '--', '--port', '0'], {})).toMatchObject({
      certDir: 'd',
      options: { port: 0 },
    })
  })

  it('--cert-dir keeps one certificate across restarts, so a pasted fingerprint stays valid', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'pve-sim-cert-')), 'state')
    try {
      const first = await keptCertificate(dir)
      expect(statSync(join(dir, 'key.pem')).mode & 0o077).toBe(0)
      const again = await keptCertificate(dir)
      expect(again).toEqual(first)
      const a = await startSimulator({ certificate: again, log: () => {} })
      const b = await startSimulator({ certificate: again, log: () => {} })
      try {
        expect(a.fingerprint).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/)
        expect(b.fingerprint).toBe(a.fingerprint)
        expect(banner(a, 0, undefined)).toContain(`  base-url: ${a.url}\n  tls:\n    fingerprint: "${a.fingerprint}"`)
      } finally {
        await a.close()
        await b.close()
      }
      expect(() => parseSimArgs(['--cert-dir', dir, '--http'], {})).toThrow('--cert-dir is for HTTPS')
    } finally {
      rmSync(dirname(dir), { recursive: true, force: true })
    }
  })

  it('rejects bad values with a message naming the flag', () => {
    expect(() => parseSimArgs(['--port', 'x'], {})).toThrow(
      new UsageError("--port expects a non-negative integer, got 'x'"),
    )
    expect(() => parseSimArgs(['--pve-version', '7.4'], {})).toThrow("--pve-version must be 9.1 or 8.4, got '7.4'")
    expect(() => parseSimArgs(['--nodes', 'a_b'], {})).toThrow("--nodes: 'a_b' is not a valid node name")
    expect(() => parseSimArgs(['--bogus'], {})).toThrow(UsageError)
  })

  it('prints the base URL, fingerprint and API token', async () => {
    const sim = await startSimulator({ log: () => {} })
    try {
      const text = banner(sim, 0, undefined)
      expect(text).toContain(`url          ${sim.url}`)
      expect(text).toContain(`fingerprint  ${sim.fingerprint}`)
      expect(text).toContain(`token        PVEAPIToken=root@pam!proxops=${sim.token.secret}`)
      expect(JSON.parse(bannerJson(sim))).toMatchObject({
        url: sim.url,
        fingerprint: sim.fingerprint,
        tokenHeader: sim.token.header,
        nodes: ['pve1', 'pve2', 'pve3'],
      })
      expect(parseSimArgs(['--json'], {})).toMatchObject({ json: true })
    } finally {
      await sim.close()
    }
  })
})
