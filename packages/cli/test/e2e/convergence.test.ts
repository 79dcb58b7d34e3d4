/**
 * Honest convergence signals, through the CLI against the simulator: "No changes. PVE matches git." and
 * exit 0 only when PVE matches git; an offline node, a deferred prune or an anomaly is reported as blocked by
 * diff's last line, --detailed-exitcode, status and apply's exit code.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { unlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { baseEnv, git, proxops, start, vmManifest, waitFor, useLab, transcriptCanaries } from './harness.js'
import { STATUS_FORMAT_VERSION } from '../../src/status-model.js'

const lab = useLab()
let root: string
const run = (...args: string[]) => proxops(args, { cwd: root, env: baseEnv(root) })
const lastLine = (text: string): string => text.trimEnd().split('\n').at(-1) ?? ''

beforeAll(async () => {
  root = await lab.repo({
    manifests: {
      'vm/lab/web.yaml': vmManifest('web', 100),
      'vm/lab/db.yaml': vmManifest('db', 101, { node: 'pve2' }),
    },
    proxopsYaml: 'reconcile:\n  prune-budget: 0\n',
  })
  const applied = await run('apply', '--yes')
  expect(applied.code, applied.stderr).toBe(0)
})

describe('convergence is a fact, not a default', () => {
  it('converged: "No changes. PVE matches git.", exit 0 with --detailed-exitcode, status converged', async () => {
    const diff = await run('diff', '--detailed-exitcode')
    expect(diff.code, diff.stderr).toBe(0)
    expect(lastLine(diff.stdout)).toBe('No changes. PVE matches git.')
    const status = await run('status')
    expect(status.stdout).toMatch(/^\[lab\] converged/m)
  })

  it('keys set on PVE that git does not declare: listed by diff and status, executing ones called out', async () => {
    lab.sim.control.driftSet(100, 'args', '-no-hpet')
    lab.sim.control.driftSet(100, 'cpulimit', '2')
    try {
      // not ProxOps' to write: still converged, yet visible
      const diff = await run('diff', '--detailed-exitcode')
      expect(diff.code, diff.stdout + diff.stderr).toBe(0)
      expect(diff.stdout).toContain('VM/pve1/100(web) args: unmanaged, changes what the guest executes')
      expect(diff.stdout).toContain('VM/pve1/100(web) cpulimit: unmanaged: set on PVE, not declared')
      const status = await run('status')
      expect(status.code).toBe(0)
      expect(status.stdout).toMatch(/^\[lab\] converged/m)
      expect(status.stdout).toMatch(/ unmanaged=2$/m)
      expect(status.stdout).toMatch(
        /VM +web +100 +converged\n {6}unmanaged \(set on PVE, not in git\): cpulimit\n {6}UNMANAGED, EXECUTES: args: raw arguments added to the QEMU command line; review it\n/,
      )
      const json = JSON.parse((await run('status', '--output', 'json')).stdout) as {
        cycles: { unmanaged: number; objects: { name: string; unmanaged?: unknown }[] }[]
      }
      expect(json.cycles[0]?.unmanaged).toBe(2)
      expect(json.cycles[0]?.objects.find((o) => o.name === 'web')?.unmanaged).toEqual([
        { key: 'args', executes: 'raw arguments added to the QEMU command line' },
        { key: 'cpulimit' },
      ])
      expect(json.cycles[0]?.objects.find((o) => o.name === 'db')?.unmanaged).toBeUndefined()
      // the value is never shown (raw arguments or a hook path may carry anything)
      expect(diff.stdout + status.stdout).not.toContain('-no-hpet')
    } finally {
      lab.sim.control.driftDelete(100, 'args')
      lab.sim.control.driftDelete(100, 'cpulimit')
    }
  })

  it('an offline node: no actions possible, one object blocked, exit 2; status names the reason', async () => {
    lab.sim.control.setNodeOnline('pve2', false)
    try {
      const diff = await run('diff', '--detailed-exitcode')
      expect(diff.code, diff.stdout + diff.stderr).toBe(2)
      expect(lastLine(diff.stdout)).toBe('No actions possible; 1 object blocked: node-offline 1.')
      const plain = await run('diff')
      expect(plain.code).toBe(0)
      const status = await run('status')
      expect(status.stdout).toMatch(/^\[lab\] blocked \(1 object blocked: node-offline 1\)/m)
      expect(status.stdout).toMatch(/VM\s+db\s+101\s+blocked\s+node-offline: /)
      const json = JSON.parse((await run('status', '--output', 'json')).stdout) as {
        format_version: number
        cycles: {
          result: string
          blocked: number
          blockedByReason: Record<string, number>
          objects: { name: string; state: string; blocked?: string }[]
        }[]
      }
      expect(json).toMatchObject({ format_version: STATUS_FORMAT_VERSION })
      expect(json.cycles[0]).toMatchObject({ result: 'blocked', blocked: 1, blockedByReason: { 'node-offline': 1 } })
      expect(json.cycles[0]?.objects.find((o) => o.name === 'db')).toMatchObject({
        state: 'blocked',
        blocked: 'node-offline',
      })
      const apply = await run('apply', '--yes', '--output', 'json')
      expect(apply.code, apply.stdout).toBe(1)
      expect(JSON.parse(apply.stdout)).toMatchObject({
        format_version: STATUS_FORMAT_VERSION,
        cycles: [{ result: 'blocked' }],
      })
    } finally {
      lab.sim.control.setNodeOnline('pve2', true)
    }
  })

  it('a prune deferred by a budget of 0: blocked prune-deferred, exit 2, never "No changes"', async () => {
    unlinkSync(path.join(root, 'vm/lab/web.yaml'))
    writeFileSync(path.join(root, 'clusters/lab/resources.yaml'), 'resources:\n  - ../../vm/lab/db.yaml\n')
    git(root, 'commit', '-qam', 'retire web')
    const diff = await run('diff', '--detailed-exitcode')
    expect(diff.code, diff.stdout + diff.stderr).toBe(2)
    expect(lastLine(diff.stdout)).toBe('No actions possible; 1 object blocked: prune-deferred 1.')
  })

  it('no canary anywhere', () => {
    expect(transcriptCanaries()).toEqual([])
  })
})

describe('applying only when meant', () => {
  it('apply without --yes and without a terminal refuses with a one-line hint and writes nothing', async () => {
    const writes = lab.sim.stats.writes()
    const r = await run('apply')
    expect(r.code).toBe(1)
    expect(
      r.stderr
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('proxops: ')),
    ).toEqual([
      'proxops: error: apply needs --yes when stdin is not a terminal (review the plan with proxops diff first); nothing was applied',
    ])
    expect(lab.sim.stats.writes()).toBe(writes)
  })
})

describe('--version and help never run a command', () => {
  it('--version anywhere, and the version command, print the version and send no request', async () => {
    const requests = lab.sim.stats.requests.length
    for (const args of [['diff', '--version'], ['apply', '--yes', '--version'], ['version'], ['--version']]) {
      const r = await run(...args)
      expect(r.code, args.join(' ')).toBe(0)
      expect(r.stdout).toMatch(/^proxops version \d+\.\d+\.\d+\n$/)
    }
    expect(lab.sim.stats.requests.length).toBe(requests)
  })

  it("proxops help <command> is the command's --help", async () => {
    const viaHelp = await run('help', 'diff')
    const viaFlag = await run('diff', '--help')
    expect(viaHelp.code).toBe(0)
    expect(viaHelp.stdout).toBe(viaFlag.stdout)
    expect(viaHelp.stdout).toContain('--detailed-exitcode')
  })
})

describe('Ctrl-C', () => {
  it('is acknowledged at once; the running action finishes; the exit code is 1 because the rest was cancelled', async () => {
    writeFileSync(path.join(root, 'vm/lab/late-1.yaml'), vmManifest('late-1', 120))
    writeFileSync(path.join(root, 'vm/lab/late-2.yaml'), vmManifest('late-2', 121))
    writeFileSync(path.join(root, 'vm/lab/late-3.yaml'), vmManifest('late-3', 122))
    writeFileSync(
      path.join(root, 'clusters/lab/resources.yaml'),
      'resources:\n  - ../../vm/lab/db.yaml\n  - ../../vm/lab/late-1.yaml\n  - ../../vm/lab/late-2.yaml\n  - ../../vm/lab/late-3.yaml\n',
    )
    git(root, 'add', '-A')
    git(root, 'commit', '-qm', 'two more')
    // the creates are held until the CLI has said it stops: the signal always meets them running
    lab.sim.control.setTaskBehaviour('qmcreate', { hold: true })
    try {
      // two tasks at a time per node: the third create is still queued when Ctrl-C comes
      const apply = start(['apply', '--yes'], { cwd: root, env: baseEnv(root) })
      await waitFor(
        () => (lab.sim.control.tasks().some((t) => t.type === 'qmcreate' && t.status === 'running') ? true : undefined),
        30_000,
      )
      apply.child.kill('SIGINT')
      await waitFor(() => (apply.stderrSoFar().includes('proxops: SIGINT:') ? true : undefined), 30_000, 20)
      expect(apply.stderrSoFar()).toContain(
        'proxops: SIGINT: stopping after running actions finish; Ctrl-C again to abort',
      )
      lab.sim.control.setTaskBehaviour('qmcreate', null)
      const done = await apply.done
      expect(done.code, done.stdout + done.stderr).toBe(1)
    } finally {
      lab.sim.control.setTaskBehaviour('qmcreate', null)
    }
  })
})
