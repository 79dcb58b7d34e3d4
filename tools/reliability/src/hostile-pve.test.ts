/**
 * The real CLI against a PVE that misbehaves in ways the simulator never does (a proxy in front of it):
 * answers too large to hold, implausible reads. Each case: a clear non-zero outcome, nothing written.
 */
import { createGzip } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '@proxops/pve-sim'
import { makeRepo, runCli, type Repo } from './cli-harness.js'
import { startHostilePve, type HostilePve } from './hostile-pve.js'

let sim: Simulator
let pve: HostilePve
let repo: Repo

/** gzip of a `{data}` envelope whose string inflates to `mib` MiB (zeros compress about 1000:1). */
async function gzipBomb(mib: number): Promise<Buffer> {
  const gz = createGzip({ level: 9 })
  const out: Buffer[] = []
  gz.on('data', (c: Buffer) => out.push(c))
  const done = new Promise((r) => gz.on('end', r))
  const zeros = Buffer.alloc(1024 * 1024, 0x30)
  gz.write('{"data":"')
  for (let i = 0; i < mib; i++) if (!gz.write(zeros)) await new Promise((r) => gz.once('drain', r))
  gz.end('"}')
  await done
  return Buffer.concat(out)
}

beforeAll(async () => {
  sim = await startSimulator({ taskDurationMs: 20, authFailureDelayMs: 0, resourcesLagMs: 0, log: () => {} })
  pve = await startHostilePve(sim)
  repo = makeRepo(pve)
}, 60_000)
afterAll(async () => {
  repo.cleanup()
  await pve.close()
  await sim.close()
})

describe('hostile PVE (CLI through a misbehaving proxy)', { timeout: 120_000 }, () => {
  it('bomb bodies: a 256 MiB gzip answer is refused at the size cap, once (no retries), and nothing is written', async () => {
    const bomb = await gzipBomb(256)
    expect(bomb.length).toBeLessThan(1024 * 1024)
    pve.tamper((req) =>
      req.path === '/cluster/resources'
        ? { kind: 'answer', headers: { 'content-encoding': 'gzip' }, body: bomb }
        : { kind: 'forward' },
    )
    pve.seen.length = 0
    const run = await runCli(['apply', '--yes'], repo)
    pve.tamper(() => ({ kind: 'forward' }))
    expect(run.signal).toBeNull()
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/answer larger than \d+ bytes/)
    expect(pve.seen.filter((s) => s.path === '/cluster/resources')).toHaveLength(1)
    expect(pve.seen.filter((s) => s.method !== 'GET')).toEqual([])
  })

  // issue 19 item 8: PVE's config_with_pending_array always lists the config's digest, and a node's guest list
  // (vmstatus) names and tags the guest from the same file; a read that contradicts that is no config
  it('implausible reads: a running VM whose /pending is [] or lacks its keys is unknown, never a plan or a shutdown', async () => {
    const converge = await runCli(['apply', '--yes'], repo)
    expect(converge.code, converge.stderr).toBe(0)
    const pending = '/nodes/pve1/qemu/300/pending'
    const cases: { what: string; tamper: Parameters<HostilePve['tamper']>[0]; reason: RegExp }[] = [
      {
        what: 'an empty answer',
        tamper: (req) => (req.path === pending ? { kind: 'answer', body: '{"data":[]}' } : { kind: 'forward' }),
        reason: /implausible read: its \/pending answer has no digest row/,
      },
      {
        what: 'the digest row alone',
        tamper: (req) =>
          req.path === pending
            ? { kind: 'rewrite', data: (rows) => (rows as { key: string }[]).filter((r) => r.key === 'digest') }
            : { kind: 'forward' },
        reason: /implausible read: its config names it "VM 300" but the node's guest list "vm-300"/,
      },
    ]
    for (const c of cases) {
      pve.tamper(c.tamper)
      pve.seen.length = 0
      const diff = await runCli(['diff', '--detailed-exitcode'], repo)
      const apply = await runCli(['apply', '--yes'], repo)
      const status = await runCli(['status'], repo)
      pve.tamper(() => ({ kind: 'forward' }))
      expect(pve.seen.filter((s) => s.path === pending).length, c.what).toBeGreaterThan(0)
      expect(diff.stdout, c.what).toMatch(c.reason)
      expect(diff.stdout, c.what).not.toMatch(/VM\/pve1\/300\(vm-300\) will be/)
      // not "PVE matches git": the guest could not be read
      expect(diff.code, c.what).toBe(2)
      expect(
        pve.seen.filter((s) => s.method !== 'GET'),
        c.what,
      ).toEqual([])
      expect(apply.stdout + apply.stderr, c.what).toMatch(c.reason)
      expect(status.stdout, c.what).not.toMatch(/^converged/m)
      expect(sim.control.guest(300)?.status, c.what).toBe('running')
    }
    const after = await runCli(['diff', '--detailed-exitcode'], repo)
    expect(after.code, after.stdout).toBe(0)
  })
})
