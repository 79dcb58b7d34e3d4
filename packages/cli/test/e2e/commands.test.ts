/** diff, apply, saved plans, status, exit codes and secret canaries: the CLI against the simulator. */
import { beforeAll, describe, expect, it } from 'vitest'
import { rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import {
  CANARY,
  baseEnv,
  git,
  proxops,
  transcript,
  vmManifest,
  useLab,
  commitManifests,
  transcriptCanaries,
} from './harness.js'

const lab = useLab()
let repo: string
const run = (args: string[], extraEnv: Record<string, string> = {}) =>
  proxops(args, { cwd: repo, env: baseEnv(repo, extraEnv) })

beforeAll(async () => {
  repo = await lab.repo()
})

describe('diff', () => {
  it('renders the plan, writes nothing, honours --detailed-exitcode and the output formats', async () => {
    const before = lab.sim.stats.writes()
    const text = await run(['diff'])
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(/^Cluster lab at [0-9a-f]{12}$/m)
    expect(text.stdout).toContain('  + VM/pve1/100(web)')
    expect(text.stdout).toContain('Plan: 2 to create, 0 to update, 0 to delete.')
    // the SOPS-backed cloud-init password is a reference, shown as (sensitive)
    expect(text.stdout).toContain('(sensitive)')
    expect((await run(['diff', '--detailed-exitcode'])).code).toBe(2)

    const json = await run(['diff', '--output', 'json'])
    const set = JSON.parse(json.stdout) as {
      format_version: number
      commit: string
      plans: { cluster: string; actions: unknown[] }[]
    }
    expect(set.format_version).toBe(1)
    expect(set.commit).toBe(git(repo, 'rev-parse', 'HEAD').trim())
    expect(set.plans.map((p) => [p.cluster, p.actions.length])).toEqual([['lab', 2]])
    // byte-stable: the same inputs give the same bytes
    expect((await run(['diff', '-o', 'json'])).stdout).toBe(json.stdout)

    const md = await run(['diff', '--output', 'markdown', '--cluster', 'lab'])
    expect(md.stdout).toContain('### ProxOps plan for cluster `lab`')
    expect(md.stdout).toContain('| + | `VM/pve1/100(web)` | create |')
    expect(lab.sim.stats.writes()).toBe(before)
  })

  it('colours only when asked: never into a pipe', async () => {
    const r = await run(['diff'], { NO_COLOR: '' })
    expect(r.stdout).not.toContain('\u001b[')
  })
})

describe('saved plans and apply', () => {
  it('applies exactly a saved plan, converges, and refuses it afterwards', async () => {
    const planFile = path.join(repo, '..', `${path.basename(repo)}-plan.json`)
    const saved = await run(['diff', '--out', planFile])
    expect(saved.code).toBe(0)
    const applied = await run(['apply', '--plan', planFile, '--yes'])
    expect(applied.stderr).not.toMatch(/proxops: error/)
    expect(applied.code).toBe(0)
    expect(applied.stdout).toContain('Apply complete for cluster lab: 2 ok, 0 failed, 0 skipped.')
    expect(applied.stdout).toMatch(/\[lab\] converged/)
    expect(
      lab.sim.control
        .guests()
        .map((g) => g.vmid)
        .sort(),
    ).toEqual([100, 101])

    const again = await run(['diff', '--detailed-exitcode'])
    expect(again.code).toBe(0)
    expect(again.stdout).toContain('No changes. PVE matches git.')

    // the plan created both VMs: running it again is refused before any write
    const writes = lab.sim.stats.writes()
    const stale = await run(['apply', '--plan', planFile, '--yes'])
    expect(stale.code).toBe(1)
    expect(stale.stderr).toMatch(
      /proxops: error: cluster lab: VM\/pve1\/10[01]\((web|db)\) exists on PVE now but the plan creates it; run proxops diff --out again/,
    )
    expect(lab.sim.stats.writes()).toBe(writes)
    rmSync(planFile)
  })

  it('refuses a saved plan after a new commit or an out-of-band edit (digest), with zero writes', async () => {
    writeFileSync(path.join(repo, 'vm/lab/db.yaml'), vmManifest('db', 101, { memory: '1GiB' }))
    git(repo, 'commit', '-q', '-am', 'db: 1 GiB')
    const planFile = path.join(repo, '..', `${path.basename(repo)}-plan2.json`)
    const diff = await run(['diff', '--out', planFile, '--detailed-exitcode'])
    expect(diff.code).toBe(2)
    expect(diff.stdout).toContain('~ spec.memory (memory): "512" -> "1024"')

    lab.sim.control.driftSet(101, 'description', 'edited by hand')
    const writes = lab.sim.stats.writes()
    const drifted = await run(['apply', '--plan', planFile, '--yes'])
    expect(drifted.code).toBe(1)
    expect(drifted.stderr).toMatch(
      /VM\/pve\d\/101\(db\) changed on PVE since the plan was made \(config digest differs\)/,
    )
    expect(lab.sim.stats.writes()).toBe(writes)

    git(repo, 'commit', '-q', '--allow-empty', '-m', 'another commit')
    const moved = await run(['apply', '--plan', planFile, '--yes'])
    expect(moved.code).toBe(1)
    expect(moved.stderr).toMatch(
      /the saved plan was made at commit [0-9a-f]{40}, the repository is now at [0-9a-f]{40}/,
    )
    expect(lab.sim.stats.writes()).toBe(writes)
    rmSync(planFile)

    // a fresh apply converges (memory and the description drift)
    const apply = await run(['apply', '--yes'])
    expect(apply.code).toBe(0)
    expect((await run(['diff', '--detailed-exitcode'])).code).toBe(0)
  })

  it('exits 1 when an action fails, and reports it', async () => {
    commitManifests(repo, { 'vm/lab/extra.yaml': vmManifest('extra', 102, { node: 'pve2' }) }, 'extra vm')
    lab.sim.control.setTaskBehaviour('qmcreate', { fail: 'storage local-lvm is full' })
    try {
      const r = await run(['apply', '--yes'])
      expect(r.code).toBe(1)
      expect(r.stdout).toMatch(/FAILED {2}VM\/pve2\/102\(extra\) create .*storage local-lvm is full/)
      expect(r.stdout).toMatch(/\[lab\] incomplete \(1 failed action/)
    } finally {
      lab.sim.control.setTaskBehaviour('qmcreate', null)
    }
    expect((await run(['apply', '--yes'])).code).toBe(0)
  })
})

describe('status', () => {
  it('prints the convergence table, read-only', async () => {
    const writes = lab.sim.stats.writes()
    const r = await run(['status'])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^\[lab\] converged \(commit [0-9a-f]{12}\)$/m)
    expect(r.stdout).toMatch(/^ {2}VM {9}web {37}100 {7}converged$/m)
    const json = JSON.parse((await run(['status', '--output', 'json'])).stdout) as {
      cycles: { cluster: string; result: string; objects: unknown[] }[]
    }
    expect(json.cycles[0]).toMatchObject({ cluster: 'lab', result: 'converged' })
    expect(json.cycles[0]?.objects).toHaveLength(3)
    expect(lab.sim.stats.writes()).toBe(writes)
  })
})

describe('version and completion', () => {
  it('prints the version and a completion script', async () => {
    expect((await run(['--version'])).stdout).toMatch(/^proxops version \d+\.\d+\.\d+/)
    const completion = await run(['completion'])
    expect(completion.code).toBe(0)
    expect(completion.stdout).toContain('complete -o default -F _proxops_completions proxops')
  })
})

describe('secret canaries', () => {
  it('never appear in any stdout or stderr of this file', () => {
    const leaks = transcriptCanaries()
    expect(leaks).toEqual([])
    expect(transcript.length).toBeGreaterThan(10)
    expect(CANARY.token.length).toBeGreaterThan(8)
  })
})
