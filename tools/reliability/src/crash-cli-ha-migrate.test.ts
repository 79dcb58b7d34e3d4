/**
 * Crash safety of the built CLI process (issue 30 item 4, issue 32) where crash-ha.test.ts and
 * crash-migrate.test.ts model the kill in-process: `apply --yes` is SIGKILLed once PVE has served a random
 * number of its writes (seeded and printed), while (a) HA-managed guests change power state and a restart-class
 * setting, and (b) changed `spec.node`s move a running VM with a local disk online, a stopped VM offline and a
 * running container with a restart. PVE finishes what it started (tasks, commands queued for the HA manager),
 * then the next apply must end well inside the task timeout, converged or failed with a reason; one more cycle
 * converges, `diff --detailed-exitcode` exits 0, and there is no duplicate guest, no lost disk, no guest left
 * stopped that is desired running, no lock, and the repository is untouched. Seeds chain on one simulator (each
 * starts from the estate the previous one converged to); PROXOPS_SOAK multiplies them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSimulator, type Simulator, type SimulatorOptions } from '@proxops/pve-sim'
import { commit, doc, makeRepo, runCli, sleep, startCli, type Repo, type Run } from './cli-harness.js'
import { random, runs } from './soak.js'

/** a wait that ran out would take this long: the next apply must end far inside it */
const TASK_TIMEOUT = 'reconcile:\n  task-timeout: 60s\n'
const NEXT_APPLY_BOUND_MS = 30_000
const TEMPLATE = 'debian-12-standard_12.7-1_amd64.tar.zst'

/** seeds a fixed step apart start mulberry32 at correlated points: scramble them first */
const spread = (seed: number): (() => number) => random(Math.imul(seed, 0x9e3779b1))

interface PlannedAction {
  address: string
  type: string
  result?: { status: string; error?: string }
}
interface ApplyJson {
  cycles: { plannedActions?: PlannedAction[] }[]
}

/** the planned actions of an `apply --output json` (none when the output is not a report) */
function actionsOf(run: Run): PlannedAction[] {
  try {
    return (JSON.parse(run.stdout) as ApplyJson).cycles.flatMap((c) => c.plannedActions ?? [])
  } catch {
    return []
  }
}

/** the failed actions of an `apply --output json`, each with its reason (none when the output is not a report) */
function failures(run: Run): string[] {
  const actions = actionsOf(run)
  if (actions.length === 0 && run.code !== 0) return [`no report: ${run.stderr}`]
  return actions
    .filter((a) => a.result?.status === 'failed')
    .map((a) => `${a.address} ${a.type}: ${a.result?.error ?? ''}`)
}

/**
 * Start `apply --yes` and SIGKILL it once PVE has served `killAt` writes and `delayMs` more passed, so that the
 * kill lands inside the apply at a different step per seed.
 */
async function killedApply(sim: Simulator, repo: Repo, killAt: number, delayMs: number): Promise<Run> {
  sim.stats.reset()
  const first = startCli(['apply', '--yes'], repo)
  let exited = false
  void first.done.then(() => (exited = true))
  while (!exited && sim.stats.writes() < killAt) await sleep(2)
  if (!exited) await sleep(delayMs)
  first.child.kill('SIGKILL')
  return first.done
}

/**
 * After the kill: PVE runs what it accepted to its end, the next apply ends in bounded time (converged or failed
 * with a reason), one more converges if it did not, and the diff after them plans nothing.
 */
async function recover(
  sim: Simulator,
  repo: Repo,
  at: string,
): Promise<{ tookMs: number; failed: string[]; finished: number }> {
  await sleep(200)
  sim.control.settle()
  const started = Date.now()
  const next = await runCli(['apply', '--yes', '--output', 'json'], repo)
  const tookMs = Date.now() - started
  expect(tookMs, `${at}: the next apply took ${tookMs} ms`).toBeLessThan(NEXT_APPLY_BOUND_MS)
  expect(next.signal, at).toBeNull()
  const failed = failures(next)
  // converged, or honestly failed: a non-zero exit names every failed action with its reason
  if (next.code !== 0)
    expect(failed.length, `${at}: exit ${next.code} without a failed action: ${next.stderr}`).toBeGreaterThan(0)
  for (const f of failed) expect(f, at).not.toMatch(/: $|not waiting longer/)
  if (next.code !== 0) {
    await sleep(200)
    sim.control.settle()
    const again = await runCli(['apply', '--yes', '--output', 'json'], repo)
    expect(again.code, `${at}: after ${failed.join('; ')}: ${failures(again).join('; ')}`).toBe(0)
  }
  const diff = await runCli(['diff', '--detailed-exitcode'], repo)
  expect(diff.code, `${at}: ${diff.stdout}\n${diff.stderr}`).toBe(0)
  return { tookMs, failed, finished: actionsOf(next).length }
}

/**
 * One seed's crash: SIGKILL an apply after a seeded number of writes (1-3) and delay (under `maxDelayMs`), then
 * recover; the seed's line is printed. Returns the label for the seed's assertions and how much work the kill left.
 */
async function crashAndRecover(
  sim: Simulator,
  repo: Repo,
  seed: number,
  r: () => number,
  maxDelayMs: number,
): Promise<{ at: string; finished: number }> {
  const killAt = 1 + Math.floor(r() * 3)
  const delayMs = Math.floor(r() * maxDelayMs)
  const at = `seed ${seed} (killed after ${killAt} writes + ${delayMs} ms)`
  const killed = await killedApply(sim, repo, killAt, delayMs)
  expect(killed.signal, `${at}: the apply finished first`).toBe('SIGKILL')
  const { tookMs, failed, finished } = await recover(sim, repo, at)
  console.log(
    `${at}: next apply ${tookMs} ms, ${finished} actions left${failed.length ? `, failed first: ${failed.join('; ')}` : ''}`,
  )
  return { at, finished }
}

/** the invariants every seed ends with: each desired guest once, unlocked, in its power state, the repo clean */
function expectEstate(sim: Simulator, repo: Repo, want: Map<number, { node: string; running: boolean }>, at: string) {
  const guests = sim.control.guests()
  expect(
    guests.map((g) => g.vmid).sort((a, b) => a - b),
    at,
  ).toEqual([...want.keys()].sort((a, b) => a - b))
  const names = guests.map((g) => g.config.name ?? g.config.hostname)
  expect(new Set(names).size, at).toBe(names.length)
  for (const g of guests) {
    const w = want.get(g.vmid)!
    expect(g.lock, `${at}: ${g.vmid}`).toBeUndefined()
    expect(g.node, `${at}: ${g.vmid}`).toBe(w.node)
    expect(g.status, `${at}: ${g.vmid}`).toBe(w.running ? 'running' : 'stopped')
  }
  expect(repo.gitStatus(), at).toBe('')
}

/**
 * One describe's lab: a two-node simulator (`prepare` runs on it first) and a repository of `files` with the task
 * timeout, applied once. Seeds count in `interrupted` the kills that left work for the next apply; afterAll requires
 * one, so that the kills land inside the work, not after it.
 */
function crashLab(
  options: SimulatorOptions,
  files: Record<string, string>,
  prepare: (sim: Simulator) => void = () => {},
): { sim: Simulator; repo: Repo; interrupted: number } {
  const lab = { interrupted: 0 } as { sim: Simulator; repo: Repo; interrupted: number }
  beforeAll(async () => {
    lab.sim = await startSimulator({
      nodes: ['pve1', 'pve2'],
      resourcesLagMs: 0,
      authFailureDelayMs: 0,
      log: () => {},
      ...options,
    })
    prepare(lab.sim)
    lab.repo = makeRepo(lab.sim, files)
    commit(lab.repo, { 'proxops.yaml': TASK_TIMEOUT }, 'task timeout')
    const first = await runCli(['apply', '--yes'], lab.repo)
    expect(first.code, first.stdout + first.stderr).toBe(0)
  }, 60_000)
  afterAll(async () => {
    lab.repo.cleanup()
    await lab.sim.close()
    expect(lab.interrupted, 'no kill left work for the next apply').toBeGreaterThan(0)
  })
  return lab
}

// -- (a) HA-managed guests change power state and a restart-class setting

const HA_FILE = 'vm/c/ha.yaml'
/** 400 and 401 are HA resources; 402 is a plain VM beside them */
const HA_VMIDS = [400, 401, 402]

function haGuests(states: boolean[], cores: number): string {
  return HA_VMIDS.map((vmid, i) =>
    doc(
      'VM',
      `ha-${vmid}`,
      `node: pve${(i % 2) + 1}\nvmid: ${vmid}\nstate: ${states[i] ? 'started' : 'stopped'}\nmemory: 512MiB\n` +
        `cpu: {type: x86-64-v2-AES, cores: ${cores}}\ndisks:\n  - {storage: local-lvm, size: 1GiB}\n` +
        `networks:\n  - {bridge: vmbr0}${vmid === 402 ? '' : '\nha: {max_restart: 1, max_relocate: 0}'}`,
    ),
  ).join('---\n')
}

describe('SIGKILL of the CLI during an apply with HA guests in the plan', { timeout: 240_000 }, () => {
  const lab = crashLab({ taskDurationMs: 40, haLagMs: 60 }, { [HA_FILE]: haGuests([true, true, false], 1) })

  const seeds = Array.from({ length: runs(3) }, (_, i) => ({ i, seed: 4000 + i * 7919 }))
  it.each(seeds)('seed $seed: the next apply ends in bounded time and converges', async ({ i, seed }) => {
    const { sim, repo } = lab
    const r = spread(seed)
    const states = HA_VMIDS.map(() => r() < 0.6)
    // cores change on every guest each seed (2, 3, 2, ...): a config write per guest, a restart for running ones
    const cores = 2 + (i % 2)
    commit(repo, { [HA_FILE]: haGuests(states, cores) }, `seed ${seed}`)
    const { at, finished } = await crashAndRecover(sim, repo, seed, r, 80)
    if (finished > 0) lab.interrupted++
    const want = new Map(HA_VMIDS.map((vmid, k) => [vmid, { node: `pve${(k % 2) + 1}`, running: !!states[k] }]))
    expectEstate(sim, repo, want, at)
    for (const vmid of HA_VMIDS) expect(sim.control.guest(vmid)?.config.cores, `${at}: ${vmid}`).toBe(String(cores))
  })
})

// -- (b) changed spec.node: online with a local disk, offline, and a container restart migration

const MOVE_FILES = { vms: 'vm/c/move.yaml', ct: 'lxc/c/move.yaml', tpl: 'ctt/c/debian.yaml' }
const RUNNING = new Set([500, 502])

function movable(node: string): Record<string, string> {
  const vm = (vmid: number, state: string) =>
    doc(
      'VM',
      `mv-${vmid}`,
      `node: ${node}\nvmid: ${vmid}\nstate: ${state}\nmemory: 512MiB\ncpu: {type: x86-64-v2-AES, cores: 1}\n` +
        `disks:\n  - {storage: local-lvm, size: 1GiB}\nnetworks:\n  - {bridge: vmbr0}`,
    )
  return {
    [MOVE_FILES.tpl]: doc(
      'CTTemplate',
      'debian-12-standard',
      `nodes: [pve1, pve2]\nstorage: local\nfilename: ${TEMPLATE}\nurl: https://downloads.example.invalid/${TEMPLATE}`,
    ),
    [MOVE_FILES.vms]: [vm(500, 'started'), vm(501, 'stopped')].join('---\n'),
    [MOVE_FILES.ct]: doc(
      'LXC',
      'mv-502',
      `node: ${node}\nvmid: 502\ntemplate: debian-12-standard\nstate: started\nmemory: 512MiB\ncpu: {cores: 1}\n` +
        `root: {storage: local-lvm, size: 1GiB}\nnetworks:\n  - {bridge: vmbr0, iface: eth0, ip: dhcp}`,
    ),
  }
}

describe('SIGKILL of the CLI during an apply that migrates guests', { timeout: 240_000 }, () => {
  // the template is on both nodes already: the plan has only the migrations to write
  const lab = crashLab({ taskDurationMs: 60 }, movable('pve1'), (sim) => {
    for (const node of sim.nodes) sim.control.addVolume(node, 'local', { filename: TEMPLATE, content: 'vztmpl' })
  })

  const seeds = Array.from({ length: runs(3) }, (_, i) => ({ i, seed: 5000 + i * 7919 }))
  it.each(seeds)('seed $seed: the next apply ends in bounded time, nothing duplicated or lost', async ({ i, seed }) => {
    const { sim, repo } = lab
    // each seed moves the three guests to the other node
    const [from, to] = i % 2 === 0 ? ['pve1', 'pve2'] : ['pve2', 'pve1']
    commit(repo, movable(to), `seed ${seed}: to ${to}`)
    const r = spread(seed)
    // three migrate writes; the delay lets the kill land before, during or after a migration task
    const { at, finished } = await crashAndRecover(sim, repo, seed, r, 120)
    if (finished > 0) lab.interrupted++
    const want = new Map([500, 501, 502].map((vmid) => [vmid, { node: to, running: RUNNING.has(vmid) }]))
    expectEstate(sim, repo, want, at)
    // the disk is in the config and on the target's storage; nothing of it is left on the source
    for (const g of sim.control.guests()) {
      const volid = (g.type === 'qemu' ? g.config.scsi0 : g.config.rootfs)?.split(',')[0]
      expect(volid, `${at}: ${g.vmid}`).toMatch(/^local-lvm:/)
      expect(
        sim.control.storageContent(to, 'local-lvm').map((v) => v.volid),
        at,
      ).toContain(volid)
      expect(
        sim.control.storageContent(from, 'local-lvm').map((v) => v.volid),
        at,
      ).not.toContain(volid)
    }
  })
})
