/**
 * Crash safety: SIGKILL the CLI at a random point of an apply, then apply again. The estate converges
 * (the next diff is empty), no vmid is duplicated or left over, nothing desired is lost, and the
 * repository is untouched (no half-written file). Seeds are printed; PROXOPS_SOAK multiplies them.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '@proxops/pve-sim'
import { DESIRED_VMIDS, makeRepo, runCli, sleep, startCli, type Repo } from './cli-harness.js'
import { runs } from './soak.js'

let sim: Simulator
let repo: Repo
beforeEach(async () => {
  sim = await startSimulator({ nodes: ['pve1', 'pve2'], taskDurationMs: 120, log: () => {} })
  repo = makeRepo(sim)
})
afterEach(async () => {
  repo.cleanup()
  await sim.close()
})

const seeds = Array.from({ length: runs(4) }, (_, i) => 1000 + i * 7919)

describe('SIGKILL in the middle of an apply', { timeout: 180_000 }, () => {
  it.each(seeds)('seed %i: apply again converges with no duplicate and no loss', async (seed) => {
    // kill once PVE has served a random number of writes, so the kill always lands inside the apply
    const killAt = 1 + ((seed * 2654435761) % 14)
    sim.stats.reset()
    const first = startCli(['apply', '--yes'], repo)
    let exited = false
    void first.done.then(() => (exited = true))
    while (!exited && sim.stats.writes() < killAt) await sleep(5)
    first.child.kill('SIGKILL')
    const killed = await first.done
    expect(killed.signal, `seed ${seed}: the apply finished before ${killAt} writes`).toBe('SIGKILL')
    // tasks PVE already started run to their end, as on a real cluster
    await sleep(400)
    sim.control.settle()

    const second = await runCli(['apply', '--yes'], repo)
    expect(second.code, `seed ${seed} (killed after ${killAt} writes): ${second.stderr}`).toBe(0)
    const diff = await runCli(['diff', '--detailed-exitcode'], repo)
    expect(diff.code, `seed ${seed}: ${diff.stdout}\n${diff.stderr}`).toBe(0)

    const guests = sim.control.guests()
    const vmids = guests.map((g) => g.vmid).sort((a, b) => a - b)
    expect(vmids).toEqual([...DESIRED_VMIDS].sort((a, b) => a - b))
    const names = guests.map((g) => g.config.name ?? g.config.hostname)
    expect(new Set(names).size).toBe(names.length)
    expect(guests.every((g) => g.lock === undefined)).toBe(true)
    expect(repo.gitStatus()).toBe('')
  })
})
