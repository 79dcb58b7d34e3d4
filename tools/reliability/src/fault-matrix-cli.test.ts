/**
 * The fault matrix end to end: the real CLI against the simulator, with faults that strike in the middle
 * of an apply (token revoked, node offline, a task outlasting the task timeout, a concurrent edit) or
 * during observation (5xx / 595 / 596 bursts). Each run exits non-zero with every action ok, failed or
 * skipped with a reason; nothing untagged or still desired is deleted; no guest is duplicated; once the
 * fault clears, the next apply converges and a diff is empty.
 * (Library-level faults live in packages/planner/test/fault-matrix.test.ts.)
 */
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '@proxops/pve-sim'
import { DESIRED_VMIDS, commit, makeRepo, runCli, sleep, startCli, type Repo } from './cli-harness.js'

interface Cycle {
  cluster: string
  result: string
  actions: { planned: number; ok: number; failed: number; skipped: number }
}

let sim: Simulator
let repo: Repo
let untagged: Map<number, string>
beforeEach(async () => {
  // two untagged guests that must never be touched
  sim = await startSimulator({
    nodes: ['pve1', 'pve2'],
    taskDurationMs: 150,
    estate: { guests: 2 },
    seed: 5,
    log: () => {},
  })
  untagged = new Map(sim.control.guests().map((g) => [g.vmid, g.digest]))
  repo = makeRepo(sim)
})
afterEach(async () => {
  repo.cleanup()
  await sim.close()
})

async function applyJson(): Promise<{ code: number | null; cycles: Cycle[]; stderr: string }> {
  const r = await runCli(['apply', '--yes', '--output', 'json'], repo)
  let cycles: Cycle[] = []
  try {
    cycles = (JSON.parse(r.stdout) as { cycles: Cycle[] }).cycles
  } catch {
    // an aborted run may print no report; the exit code says it
  }
  return { code: r.code, cycles, stderr: r.stderr }
}

async function expectConverges(): Promise<void> {
  sim.control.clearFaults()
  await sleep(300)
  sim.control.settle()
  const again = await applyJson()
  expect(again.code, again.stderr).toBe(0)
  const diff = await runCli(['diff', '--detailed-exitcode'], repo)
  expect(diff.code, `${diff.stdout}\n${diff.stderr}`).toBe(0)
  const vmids = sim.control.guests().map((g) => g.vmid)
  expect(vmids.sort((a, b) => a - b)).toEqual([...untagged.keys(), ...DESIRED_VMIDS].sort((a, b) => a - b))
  for (const [vmid, digest] of untagged)
    expect(sim.control.guest(vmid)?.digest, `untagged ${vmid} was modified`).toBe(digest)
}

/** start an apply and strike once PVE has served `writes` writes */
async function strikeDuringApply(
  writes: number,
  fault: () => void,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  sim.stats.reset()
  const run = startCli(['apply', '--yes', '--output', 'json'], repo)
  let exited = false
  void run.done.then(() => (exited = true))
  while (!exited && sim.stats.writes() < writes) await sleep(5)
  expect(exited, 'the apply finished before the fault struck').toBe(false)
  fault()
  return run.done
}

function expectReported(stdout: string): void {
  const { cycles } = JSON.parse(stdout) as { cycles: Cycle[] }
  for (const c of cycles) {
    const a = c.actions
    expect(a.ok + a.failed + a.skipped, `every planned action ends ok, failed or skipped (${JSON.stringify(a)})`).toBe(
      a.planned,
    )
  }
}

describe('fault matrix (CLI against the simulator)', { timeout: 180_000 }, () => {
  it('5xx, 595 and 596 bursts during observation: exit 1, zero writes, then converges', async () => {
    sim.control.failNext({ method: 'GET', status: 596, count: 40 })
    sim.stats.reset()
    const r = await runCli(['apply', '--yes'], repo)
    expect(r.code).toBe(1)
    expect(sim.stats.writes()).toBe(0)
    expect(r.stderr).toMatch(/596|unreachable|transient|failed/i)
    await expectConverges()
  })

  it('token revoked in the middle of an apply: exit 1, reported, then converges with the token back', async () => {
    const r = await strikeDuringApply(3, () => sim.control.revokeToken())
    expect(r.code).toBe(1)
    sim.control.restoreToken()
    await expectConverges()
  })

  it('node offline in the middle of an apply: the other node carries on; converges once it is back', async () => {
    const r = await strikeDuringApply(2, () => sim.control.setNodeOnline('pve2', false))
    expect(r.code).toBe(1)
    if (r.stdout.trim()) expectReported(r.stdout)
    sim.control.setNodeOnline('pve2', true)
    await expectConverges()
  })

  it('a task that outlasts the task timeout fails that action only; the next apply converges', async () => {
    commit(repo, { 'proxops.yaml': 'reconcile:\n  task-timeout: 1s\n' }, 'timeout')
    // held: the start outlasts the timeout however slowly the CLI polls
    sim.control.setTaskBehaviour('qmstart', { hold: true })
    const r = await applyJson()
    expect(r.code).toBe(1)
    const c = r.cycles[0]!
    expect(c.actions.failed).toBeGreaterThan(0)
    expect(c.actions.ok).toBeGreaterThan(0)
    sim.control.setTaskBehaviour('qmstart', null)
    await expectConverges()
  })

  it('a saved plan is refused after a concurrent edit of a planned object, with zero writes', async () => {
    expect((await applyJson()).code).toBe(0)
    sim.control.driftSet(300, 'memory', '2048')
    const planFile = join(repo.root, '..', `plan-${process.pid}.json`)
    const d = await runCli(['diff', '--out', planFile], repo)
    expect([0, 2]).toContain(d.code)
    sim.control.driftSet(300, 'cores', '3')
    sim.stats.reset()
    const r = await runCli(['apply', '--yes', '--plan', planFile], repo)
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/digest|changed/i)
    expect(sim.stats.writes()).toBe(0)
    await expectConverges()
  })
})
