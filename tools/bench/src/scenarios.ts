/**
 * The scenarios of architecture.md section 4. Each starts its own simulator, measures, and returns
 * result rows: a figure, the target it is held to, and pass/fail. No scenario asserts anything in a
 * unit test: this is where performance is measured.
 */
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DEMO_TOKEN_ID, DEMO_TOKEN_SECRET, startSimulator, type Simulator } from '@proxops/pve-sim'
import { createPveClient, createPveReadOnlyClient } from '@proxops/pve-client'
import { loadRepository } from '@proxops/schema'
import { DEFAULT_POLICY, reconcile, serializePlan } from '@proxops/planner'
import { writeEstateRepo, type EstateOptions } from './estate.js'
import { median, runCli, runNode, type CliRun } from './measure.js'
import type { PlanChildInput, PlanChildResult } from './plan-child.js'

export interface Result {
  scenario: string
  figure: string
  target: string
  /** undefined for a figure that is reported without a target */
  pass?: boolean
  data: Record<string, unknown>
}

export interface Scenario {
  name: string
  target: string
  run(o: { quick: boolean }): Promise<Result[]>
}

const NODES4 = ['pve1', 'pve2', 'pve3', 'pve4']
const IN_FLIGHT = 8

function tempRepo(sim: Simulator, estate: EstateOptions): { root: string; env: NodeJS.ProcessEnv; cleanup(): void } {
  const root = mkdtempSync(join(tmpdir(), 'proxops-bench-repo-'))
  writeEstateRepo(root, { baseUrl: sim.url, ...(sim.fingerprint ? { fingerprint: sim.fingerprint } : {}) }, estate)
  const git = (...args: string[]): void => void execFileSync('git', ['-C', root, ...args], { stdio: 'ignore' })
  git('init', '-q', '-b', 'main')
  git('add', '-A')
  git('-c', 'user.name=bench', '-c', 'user.email=bench@proxops.invalid', 'commit', '-qm', 'estate')
  const env = {
    PROXOPS_PVE_TOKEN_VALUE: `${sim.token.id}=${sim.token.secret}`,
    PROXOPS_GIT_PATH: root,
    PROXOPS_CONFIG: '',
  }
  return { root, env, cleanup: () => rmSync(root, { recursive: true, force: true }) }
}

function mustSucceed(run: CliRun, what: string, okCodes: number[] = [0]): void {
  if (!okCodes.includes(run.code))
    throw new Error(`${what} exited ${run.code}: ${run.stderr.trim().split('\n').slice(-3).join(' | ')}`)
}

/** guest creates in a `diff --output json` document: each costs one `/cluster/nextid?vmid=` probe in observe */
function createCount(stdout: string): number {
  const doc = JSON.parse(stdout) as { plans?: { actions: { type?: string }[] }[] }
  return (doc.plans ?? []).reduce((n, p) => n + p.actions.filter((a) => a.type === 'create').length, 0)
}

/** actions in a `diff --output json` document (one plan per cluster) */
function actionCount(stdout: string): number {
  const doc = JSON.parse(stdout) as { plans?: { actions: unknown[] }[]; actions?: unknown[] }
  if (Array.isArray(doc.plans)) return doc.plans.reduce((n, p) => n + p.actions.length, 0)
  return doc.actions?.length ?? 0
}

const diff1000: Scenario = {
  name: 'diff-1000',
  target: 'requests <= guests + 2 x nodes + storages + 4 + creates; wall <= 2 x (requests x 10 ms / 8)',
  async run({ quick }) {
    const guests = quick ? 200 : 1000
    const sim = await startSimulator({ nodes: NODES4, seed: 7, estate: { guests }, taskDurationMs: 20, log: () => {} })
    const repo = tempRepo(sim, { seed: 7, guests: 4, nodes: NODES4 })
    try {
      await runCli(['diff', '--output', 'json'], repo.env, repo.root) // warm the page cache
      sim.control.setLatency(10)
      const walls: number[] = []
      let requests = 0
      let creates = 0
      for (let i = 0; i < (quick ? 1 : 3); i++) {
        sim.stats.reset()
        const r = await runCli(['diff', '--output', 'json'], repo.env, repo.root)
        mustSucceed(r, 'diff')
        walls.push(r.wallMs)
        requests = sim.stats.requests.length
        creates = createCount(r.stdout)
      }
      const storages = NODES4.length * 3
      // a desired vmid that no listing shows is probed once (a guest this token cannot see may hold it)
      const maxRequests = guests + 2 * NODES4.length + storages + 4 + creates
      const wall = median(walls)
      const maxWall = 2 * ((requests * 10) / IN_FLIGHT)
      return [
        {
          scenario: `diff ${guests} guests, 4 nodes, 10 ms latency: requests`,
          figure: String(requests),
          target: `<= ${maxRequests}`,
          pass: requests <= maxRequests,
          data: { requests, guests, creates },
        },
        {
          scenario: `diff ${guests} guests, 4 nodes, 10 ms latency: wall`,
          figure: `${(wall / 1000).toFixed(2)} s`,
          target: `<= ${(maxWall / 1000).toFixed(2)} s`,
          pass: wall <= maxWall,
          data: { walls },
        },
      ]
    } finally {
      repo.cleanup()
      await sim.close()
    }
  },
}

/** Creates `count` pools `bench-00000`... through the API (an admin's), and puts the estate's guests in the first ones. */
async function addPools(sim: Simulator, count: number, vmids: readonly number[]): Promise<void> {
  const admin = createPveClient({
    baseUrl: sim.url,
    auth: { type: 'token', tokenId: sim.token.id, secret: sim.token.secret },
    tls: { fingerprint: sim.fingerprint as string },
  })
  try {
    const id = (i: number): string => `bench-${String(i).padStart(5, '0')}`
    for (let i = 0; i < count; i += 32)
      await Promise.all(
        Array.from({ length: Math.min(32, count - i) }, (_, k) =>
          admin.createPool({ poolid: id(i + k), comment: `team ${i + k}` }),
        ),
      )
    for (const [i, vmid] of vmids.entries()) await admin.updatePool({ poolid: id(i % count), vms: String(vmid) })
  } finally {
    await admin.close()
  }
}

/** median wall and the requests of `diff --output json` runs at 10 ms latency */
async function timedDiffs(
  sim: Simulator,
  repo: { root: string; env: NodeJS.ProcessEnv },
  runs: number,
): Promise<{ wall: number; walls: number[]; requests: number; poolRequests: number }> {
  await runCli(['diff', '--output', 'json'], repo.env, repo.root) // warm the page cache
  sim.control.setLatency(10)
  const walls: number[] = []
  let requests = 0
  let poolRequests = 0
  for (let i = 0; i < runs; i++) {
    sim.stats.reset()
    const r = await runCli(['diff', '--output', 'json'], repo.env, repo.root)
    mustSucceed(r, 'diff')
    walls.push(r.wallMs)
    requests = sim.stats.requests.length
    poolRequests = sim.stats.requests.filter((q) => q.rawPath.startsWith('/pools')).length
  }
  sim.control.setLatency(0)
  return { wall: median(walls), walls, requests, poolRequests }
}

const pools10k: Scenario = {
  name: 'pools-10000',
  target:
    'diff with 10,000 pools: the requests of the same diff without pools; wall <= that diff + 5 s (was 1 request per pool: about 72 s)',
  async run({ quick }) {
    const pools = quick ? 2000 : 10_000
    const guests = 200
    const sim = await startSimulator({ nodes: NODES4, seed: 7, estate: { guests }, taskDurationMs: 20, log: () => {} })
    const repo = tempRepo(sim, { seed: 7, guests: 4, nodes: NODES4 })
    try {
      // the same estate first without pools, measured on the same machine under the same load
      const runs = quick ? 1 : 3
      const before = await timedDiffs(sim, repo, runs)
      await addPools(
        sim,
        pools,
        sim.control.guests().map((g) => g.vmid),
      )
      const after = await timedDiffs(sim, repo, runs)
      // the simulator's own cost of serving 10,000 pool rows (/pools, /cluster/resources) is inside the 5 s
      const maxWall = before.wall + 5000
      return [
        {
          scenario: `diff ${pools} pools, ${guests} guests, 4 nodes, 10 ms latency: requests`,
          figure: `${after.requests} (${after.poolRequests} to /pools)`,
          target: `<= ${before.requests} (without pools)`,
          pass: after.requests <= before.requests,
          data: { requests: after.requests, poolRequests: after.poolRequests, before: before.requests, pools, guests },
        },
        {
          scenario: `diff ${pools} pools, ${guests} guests, 4 nodes, 10 ms latency: wall`,
          figure: `${(after.wall / 1000).toFixed(2)} s`,
          target: `<= ${(maxWall / 1000).toFixed(2)} s (${(before.wall / 1000).toFixed(2)} s without pools + 5 s)`,
          pass: after.wall <= maxWall,
          data: { walls: after.walls, before: before.walls },
        },
      ]
    } finally {
      repo.cleanup()
      await sim.close()
    }
  },
}

/** Users, groups and ACL entries made through the API (an admin's), for the access scenario. */
async function addAccess(sim: Simulator, users: number, groups: number, acls: number): Promise<void> {
  const admin = createPveClient({
    baseUrl: sim.url,
    auth: { type: 'token', tokenId: sim.token.id, secret: sim.token.secret },
    tls: { fingerprint: sim.fingerprint as string },
  })
  const batch = async (n: number, one: (i: number) => Promise<void>) => {
    for (let i = 0; i < n; i += 32) await Promise.all(Array.from({ length: Math.min(32, n - i) }, (_, k) => one(i + k)))
  }
  try {
    await batch(groups, (i) => admin.createGroup({ groupid: `team${i}`, comment: `team ${i}` }))
    await batch(users, (i) => admin.createUser({ userid: `user${i}@pve`, groups: `team${i % groups}` }))
    await batch(acls, (i) =>
      admin.updateAcl({ path: `/vms/${1000 + i}`, roles: 'PVEVMUser', users: `user${i % users}@pve` }),
    )
  } finally {
    await admin.close()
  }
}

/**
 * Access as code (issue 40): a diff of a cluster that manages access reads five listings (users with tokens,
 * groups, roles, ACL, realms) whatever user.cfg holds, so 1,000 users, 200 groups and 2,000 ACL entries add no
 * request and at most 10 % wall to it (docs/access.md).
 */
const access1000: Scenario = {
  name: 'access-1000',
  target:
    'diff with 1,000 users, 200 groups, 2,000 ACL entries: the requests of the same diff without them; wall <= +10 %',
  async run({ quick }) {
    const [users, groups, acls] = quick ? [200, 40, 400] : [1000, 200, 2000]
    const sim = await startSimulator({
      nodes: NODES4,
      seed: 7,
      estate: { guests: 200 },
      taskDurationMs: 20,
      log: () => {},
    })
    const repo = tempRepo(sim, { seed: 7, guests: 4, nodes: NODES4 })
    try {
      // the estate's one cluster manages access
      const [cluster] = readdirSync(join(repo.root, 'clusters'))
      const config = join(repo.root, 'clusters', cluster as string, 'config.yaml')
      writeFileSync(config, `${readFileSync(config, 'utf8').trimEnd()}\n      access:\n        role-prefix: bench-\n`)
      execFileSync('git', ['-C', repo.root, 'commit', '-qam', 'access on'], { stdio: 'ignore' })
      const runs = quick ? 1 : 3
      const before = await timedDiffs(sim, repo, runs)
      await addAccess(sim, users, groups, acls)
      const after = await timedDiffs(sim, repo, runs)
      const maxWall = before.wall * 1.1
      return [
        {
          scenario: `diff with ${users} users, ${groups} groups, ${acls} ACL entries: requests`,
          figure: `${after.requests}`,
          target: `<= ${before.requests} (without them)`,
          pass: after.requests <= before.requests,
          data: { requests: after.requests, before: before.requests, users, groups, acls },
        },
        {
          scenario: `diff with ${users} users, ${groups} groups, ${acls} ACL entries: wall`,
          figure: `${(after.wall / 1000).toFixed(2)} s`,
          target: `<= ${(maxWall / 1000).toFixed(2)} s (${(before.wall / 1000).toFixed(2)} s without them + 10 %)`,
          pass: after.wall <= maxWall,
          data: { walls: after.walls, before: before.walls },
        },
      ]
    } finally {
      repo.cleanup()
      await sim.close()
    }
  },
}

/** Runs plan-child.js (plan() alone, in a fresh process) on a saved input; see plan-child.ts. */
function planInFreshProcess(inputFile: string, repeats: number): PlanChildResult {
  const child = fileURLToPath(new URL('./plan-child.js', import.meta.url))
  const out = execFileSync(process.execPath, [child, inputFile, String(repeats)], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  })
  return JSON.parse(out) as PlanChildResult
}

const plan10k: Scenario = {
  name: 'plan-10k',
  target: 'plan() of 10,000 desired and 10,000 live objects <= 1 s CPU (warm), deterministic',
  async run({ quick }) {
    const n = quick ? 2000 : 10_000
    const dir = mkdtempSync(join(tmpdir(), 'proxops-bench-plan-'))
    const inputFile = join(dir, 'plan-input.json')
    let reference: string
    // observe once, save desired + inventory, close the simulator: the timed processes hold nothing else
    const sim = await startSimulator({ nodes: NODES4, seed: 11, estate: { guests: n }, log: () => {} })
    // desired guests land on the estate's vmids (1000 + i, same node rotation): every one is compared field by field
    const repo = tempRepo(sim, { seed: 11, guests: n, nodes: NODES4, firstVmid: 1000, lxcEvery: 5 })
    try {
      const model = await loadRepository({ root: repo.root })
      const cluster = model.clusters[0]
      if (!cluster || model.errors.length > 0)
        throw new Error(`estate repository invalid: ${model.errors[0]?.message ?? 'no cluster'}`)
      const desired = { cluster: cluster.name, manifests: cluster.index.resources.map((r) => r.manifest) }
      const reader = createPveReadOnlyClient({
        baseUrl: sim.url,
        auth: { type: 'token', tokenId: sim.token.id, secret: sim.token.secret },
        tls: { fingerprint: sim.fingerprint as string },
      })
      const policy = { ...DEFAULT_POLICY, nodes: NODES4 }
      // the inventory and plan of a dry-run cycle, as the CLI's `diff` makes them
      const { inventory: live, plan: cyclePlan } = await reconcile({ desired, reader, policy })
      await reader.close()
      const input: PlanChildInput = { desired, live, policy }
      writeFileSync(inputFile, JSON.stringify(input))
      // BENCH_PLAN_INPUT=<file> keeps a copy, to profile plan() on it: node --cpu-prof dist/plan-child.js <file>
      if (process.env.BENCH_PLAN_INPUT) writeFileSync(process.env.BENCH_PLAN_INPUT, JSON.stringify(input))
      // the saved input must plan exactly like the in-memory one (nothing lost in the JSON round trip)
      reference = createHash('sha256').update(serializePlan(cyclePlan)).digest('hex')
    } finally {
      repo.cleanup()
      await sim.close()
    }
    try {
      const runs: PlanChildResult[] = []
      // first calls vary by +-20 % between processes on a shared 2-core machine: the median of 9
      for (let i = 0; i < (quick ? 2 : 9); i++) runs.push(planInFreshProcess(inputFile, quick ? 3 : 4))
      const first = median(runs.map((r) => r.firstMs))
      const mains = runs.flatMap((r) => (r.firstMainMs === undefined ? [] : [r.firstMainMs]))
      const firstMain = mains.length === runs.length ? median(mains) : undefined
      const warm = median(runs.flatMap((r) => r.repeatMs))
      const deterministic = runs.every((r) => r.deterministic && r.sha256 === reference)
      const actions = runs[0]?.actions ?? 0
      const what = `plan() ${n} desired x ${n} live (${actions} actions)`
      return [
        {
          scenario: `${what}: CPU, first call in a fresh process`,
          // the process CPU is the figure judged; the main thread's share shows what the runtime's compiler threads add
          figure: `${first.toFixed(0)} ms${firstMain === undefined ? '' : ` (main thread ${firstMain.toFixed(0)} ms)`}`,
          target: '(reported)',
          data: { firstMs: runs.map((r) => r.firstMs), firstMainMs: mains, actions },
        },
        {
          scenario: `${what}: CPU, repeated calls (warm)`,
          figure: `${warm.toFixed(0)} ms`,
          target: '<= 1000 ms',
          pass: warm <= 1000,
          data: { repeatMs: runs.map((r) => r.repeatMs) },
        },
        {
          scenario: `${what}: deterministic`,
          figure: deterministic ? `identical bytes x${runs.length} processes` : 'DIFFERENT',
          target: 'identical',
          pass: deterministic,
          data: { sha256: runs.map((r) => r.sha256), reference },
        },
      ]
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  },
}

const apply200: Scenario = {
  name: 'apply-200',
  target: 'apply creating 200 VMs, 1 s tasks, 4 nodes <= 30 s; second diff 0 actions',
  async run({ quick }) {
    const n = quick ? 40 : 200
    const sim = await startSimulator({ nodes: NODES4, seed: 3, taskDurationMs: 1000, log: () => {} })
    const repo = tempRepo(sim, { seed: 3, guests: n, nodes: NODES4, state: 'stopped' })
    try {
      const r = await runCli(['apply', '--yes'], repo.env, repo.root)
      mustSucceed(r, 'apply')
      const again = await runCli(['diff', '--output', 'json'], repo.env, repo.root)
      mustSucceed(again, 'second diff', [0, 2])
      // the CTTemplate download is part of the estate: count guests created, and actions left
      const left = actionCount(again.stdout)
      const limit = quick ? 30_000 * (n / 200) + 5000 : 30_000
      return [
        {
          scenario: `apply creating ${n} VMs (1 s tasks, 4 nodes): wall`,
          figure: `${(r.wallMs / 1000).toFixed(1)} s`,
          target: `<= ${(limit / 1000).toFixed(0)} s`,
          pass: r.wallMs <= limit,
          data: { serialLowerBound: n },
        },
        {
          scenario: 'second diff right after apply: actions',
          figure: String(left),
          target: '0',
          pass: left === 0,
          data: {},
        },
      ]
    } finally {
      repo.cleanup()
      await sim.close()
    }
  },
}

const rss10k: Scenario = {
  name: 'rss-10k',
  target: 'peak RSS of a 10,000-guest diff <= 300 MB',
  async run({ quick }) {
    const guests = quick ? 2000 : 10_000
    const sim = await startSimulator({ nodes: NODES4, seed: 5, estate: { guests }, log: () => {} })
    const repo = tempRepo(sim, { seed: 5, guests: 10, nodes: NODES4 })
    try {
      const r = await runCli(['diff', '--output', 'json'], repo.env, repo.root)
      mustSucceed(r, 'diff')
      return [
        {
          scenario: `diff of ${guests} guests: peak RSS`,
          figure: `${r.maxRssMb.toFixed(0)} MB`,
          target: '<= 300 MB',
          pass: r.maxRssMb > 0 && r.maxRssMb <= 300,
          data: { wallMs: r.wallMs },
        },
      ]
    } finally {
      repo.cleanup()
      await sim.close()
    }
  },
}

const coldStart: Scenario = {
  name: 'version',
  target: 'proxops --version cold start <= 250 ms',
  async run({ quick }) {
    const walls: number[] = []
    for (let i = 0; i < (quick ? 3 : 10); i++) {
      const r = await runCli(['--version'], {}, process.cwd())
      mustSucceed(r, '--version')
      walls.push(r.wallMs)
    }
    const ms = median(walls)
    return [
      {
        scenario: 'proxops --version cold start',
        figure: `${ms.toFixed(0)} ms`,
        target: '<= 250 ms',
        pass: ms <= 250,
        data: { walls },
      },
    ]
  },
}

const validate1000: Scenario = {
  name: 'validate-1000',
  target: 'proxops validate of 1,000 manifests <= 1.5 s',
  async run({ quick }) {
    const root = mkdtempSync(join(tmpdir(), 'proxops-bench-validate-'))
    try {
      writeEstateRepo(
        root,
        { baseUrl: 'https://pve.example.invalid:8006' },
        { seed: 9, guests: 1000, nodes: NODES4, lxcEvery: 4 },
      )
      execFileSync('git', ['-C', root, 'init', '-q', '-b', 'main'])
      const walls: number[] = []
      for (let i = 0; i < (quick ? 1 : 5); i++) {
        const r = await runCli(['validate'], { PROXOPS_GIT_PATH: root }, root)
        mustSucceed(r, 'validate')
        walls.push(r.wallMs)
      }
      const ms = median(walls)
      return [
        {
          scenario: 'proxops validate of 1,001 manifests',
          figure: `${ms.toFixed(0)} ms`,
          target: '<= 1500 ms',
          pass: ms <= 1500,
          data: { walls },
        },
      ]
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  },
}

const EXAMPLES = fileURLToPath(new URL('../../../examples/repository', import.meta.url))
/** the example repository's clusters and their nodes (examples/repository/README.md), as `pnpm demo` serves them */
const EXAMPLE_CLUSTERS = { homelab: ['pve1', 'pve2', 'pve3'], edge: ['edge1'] }

/** `min / median` of a list of ms, in seconds */
const minMedian = (ms: number[]): string =>
  `${(Math.min(...ms) / 1000).toFixed(2)} / ${(median(ms) / 1000).toFixed(2)} s`

/**
 * What a user waits for at a terminal: a converged `diff` of the example repository (two clusters, SOPS secrets,
 * 16 objects) against a simulator per cluster, after one apply; beside it the CLI's start-up (`proxops --help`:
 * the program and its command definitions, no command run) and the runtime's own (`node -e 0`). Wall and CPU
 * (user + system of the CLI process, its compiler and GC threads included) of fresh processes, interleaved.
 */
const diffExample: Scenario = {
  name: 'diff-example',
  target: 'converged diff of examples/repository <= 0.3 s wall (median)',
  async run({ quick }) {
    const root = mkdtempSync(join(tmpdir(), 'proxops-bench-example-'))
    const repo = join(root, 'repo')
    const sims: Simulator[] = []
    try {
      cpSync(EXAMPLES, repo, { recursive: true })
      for (const [cluster, nodes] of Object.entries(EXAMPLE_CLUSTERS)) {
        const sim = await startSimulator({
          nodes,
          taskDurationMs: 20,
          tokens: [{ id: DEMO_TOKEN_ID, secret: DEMO_TOKEN_SECRET }],
          log: () => {},
        })
        sims.push(sim)
        // the example's base-url, pointed at the simulator with its certificate pin (as tools/demo.mjs does)
        const file = join(repo, 'clusters', cluster, 'config.yaml')
        const config = readFileSync(file, 'utf8').replace(
          /^(\s*)base-url:.*$/m,
          (_, indent: string) =>
            `${indent}base-url: ${sim.url}\n${indent}tls:\n${indent}  fingerprint: "${sim.fingerprint as string}"`,
        )
        writeFileSync(file, config)
      }
      const git = (...args: string[]): void => void execFileSync('git', ['-C', repo, ...args], { stdio: 'ignore' })
      git('init', '-q', '-b', 'main')
      git('add', '-A')
      git('-c', 'user.name=bench', '-c', 'user.email=bench@proxops.invalid', 'commit', '-qm', 'examples')
      const env = { HOME: root, SOPS_AGE_KEY_FILE: join(repo, 'keys/test-only.agekey'), PROXOPS_CONFIG: '' }
      mustSucceed(await runCli(['apply', '--yes'], env, repo), 'apply')
      const diff: CliRun[] = []
      const help: CliRun[] = []
      const bare: CliRun[] = []
      for (let i = 0; i < (quick ? 3 : 9); i++) {
        const r = await runCli(['diff', '--detailed-exitcode'], env, repo)
        // exit 0: converged, nothing to change (2 would be changes, 1 an error)
        mustSucceed(r, 'converged diff')
        diff.push(r)
        help.push(await runCli(['--help'], env, repo))
        bare.push(await runNode(['-e', '0'], env, repo))
      }
      const wall = (runs: CliRun[]) => runs.map((r) => r.wallMs)
      const cpu = (runs: CliRun[]) => runs.map((r) => r.cpuMs)
      const diffWall = median(wall(diff))
      // the runtime's own start-up, measured in the same conditions: a loaded machine slows both alike
      const floor = { wall: median(wall(bare)), cpu: median(cpu(bare)) }
      const times = (ms: number, base: number): string => `${(ms / base).toFixed(1)} x node -e 0`
      return [
        {
          scenario: 'converged diff of examples/repository (2 clusters, SOPS): wall min / median',
          figure: `${minMedian(wall(diff))} (${times(diffWall, floor.wall)})`,
          target: '<= 0.30 s (median)',
          pass: diffWall <= 300,
          data: { walls: wall(diff), floorWallMs: floor.wall },
        },
        {
          scenario: 'converged diff of examples/repository: CPU min / median',
          figure: `${minMedian(cpu(diff))} (${times(median(cpu(diff)), floor.cpu)})`,
          target: '(reported)',
          data: { cpuMs: cpu(diff), floorCpuMs: floor.cpu },
        },
        {
          scenario: 'CLI start-up, proxops --help: wall, CPU (medians)',
          figure: `${(median(wall(help)) / 1000).toFixed(2)} s, ${(median(cpu(help)) / 1000).toFixed(2)} s`,
          target: '(reported)',
          data: { walls: wall(help), cpuMs: cpu(help) },
        },
        {
          scenario: 'node -e 0: wall, CPU (medians)',
          figure: `${(median(wall(bare)) / 1000).toFixed(2)} s, ${(median(cpu(bare)) / 1000).toFixed(2)} s`,
          target: '(reported)',
          data: { walls: wall(bare), cpuMs: cpu(bare) },
        },
      ]
    } finally {
      await Promise.all(sims.map((s) => s.close()))
      rmSync(root, { recursive: true, force: true })
    }
  },
}

export const scenarios: Scenario[] = [
  coldStart,
  diffExample,
  validate1000,
  plan10k,
  diff1000,
  pools10k,
  access1000,
  rss10k,
  apply200,
]
