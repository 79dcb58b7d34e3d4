/**
 * Hostile input from the repository side, through the real CLI: tampered saved plans (random edits of a real
 * `diff --out` file), one simulator configured as two clusters (twin endpoints), and a repository whose git
 * config names programs (fsmonitor, hooks, pager). Each run: refused before any PVE write, untagged guests
 * untouched, nothing run; see docs/safety.md section 8.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { execFileSync } from 'node:child_process'
import { fc } from '@fast-check/vitest'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '@proxops/pve-sim'
import { FILES, commit as commitFiles, doc, makeRepo, resources, runCli, type Repo } from './cli-harness.js'
import { runs } from './soak.js'

let sim: Simulator
let untagged: Map<number, string>
const repos: Repo[] = []
beforeAll(async () => {
  // on every local address, so 127.0.0.2 reaches it too; two untagged guests that must never be touched
  sim = await startSimulator({
    nodes: ['pve1', 'pve2'],
    host: '0.0.0.0',
    taskDurationMs: 20,
    estate: { guests: 2 },
    seed: 9,
    log: () => {},
  })
  untagged = new Map(sim.control.guests().map((g) => [g.vmid, g.digest]))
})
afterAll(async () => {
  for (const r of repos) r.cleanup()
  await sim.close()
})

const url = (host: string): string => sim.url.replace('0.0.0.0', host)
const commit = (root: string, message: string): void => {
  execFileSync('git', ['-C', root, 'add', '-A'])
  execFileSync('git', ['-C', root, '-c', 'user.name=t', '-c', 'user.email=t@proxops.invalid', 'commit', '-qm', message])
}
function repo(): Repo {
  const r = makeRepo(sim)
  repos.push(r)
  const config = join(r.root, 'clusters/c/config.yaml')
  writeFileSync(config, readFileSync(config, 'utf8').replace(sim.url, url('127.0.0.1')))
  commit(r.root, 'loopback address')
  return r
}
const expectUntouched = (): void => {
  for (const [vmid, digest] of untagged) expect(sim.control.guest(vmid)?.digest, `untagged ${vmid}`).toBe(digest)
}

interface PlanFile {
  plans: Array<{ actions: Array<Record<string, unknown>>; policy: Record<string, unknown> }>
}

describe('tampered saved plans', () => {
  it('any edit of a real plan file is refused with zero writes', async () => {
    const r = repo()
    expect((await runCli(['apply', '--yes'], r)).code).toBe(0)
    // one more desired VM, so the saved plan has an action to edit
    const vms = join(r.root, 'vm/c/vms.yaml')
    writeFileSync(vms, readFileSync(vms, 'utf8').replace(/memory: 512MiB/, 'memory: 768MiB'))
    commit(r.root, 'bigger vm-300')
    const planFile = join(dirname(r.root), `${r.root.split('/').pop()}-plan.json`)
    expect([0, 2]).toContain((await runCli(['diff', '--out', planFile], r)).code)
    const original = readFileSync(planFile, 'utf8')
    const victims = [...untagged.keys()]
    const deleteOf = (vmid: number, node: string) => ({
      id: `VM/${node}/${vmid}#delete`,
      address: `VM/${node}/${vmid}`,
      kind: 'VM',
      node,
      vmid,
      type: 'delete',
      reason: 'edited in',
      diffs: [],
      disruption: 'none',
      tier: 9,
      level: 0,
      requests: [{ call: 'deleteGuest', node, guest: 'qemu', vmid }],
    })
    const edits = fc.constantFrom(
      'delete-untagged',
      'retarget',
      'call',
      'five-deletes',
      'budget',
      'disruption',
      'foreign-type',
    )
    const samples = fc.sample(fc.tuple(edits, fc.nat()), { numRuns: runs(5), seed: 19 })
    for (const [edit, n] of samples) {
      const set = JSON.parse(original) as PlanFile
      const plan = set.plans[0] as PlanFile['plans'][number]
      const first = plan.actions[0] as Record<string, unknown>
      const victim = victims[n % victims.length] as number
      const node = sim.control.guest(victim)?.node ?? 'pve1'
      if (edit === 'delete-untagged') plan.actions.push(deleteOf(victim, node))
      if (edit === 'retarget') Object.assign(first, { vmid: victim, node })
      if (edit === 'call') first.requests = [{ call: 'deleteGuest', node: first.node, guest: 'qemu', vmid: first.vmid }]
      if (edit === 'five-deletes')
        for (const v of [...victims, ...victims, victim]) plan.actions.push(deleteOf(v, node))
      if (edit === 'budget') plan.policy.pruneBudget = 'unlimited'
      if (edit === 'disruption') plan.policy.disruption = plan.policy.disruption === 'none' ? 'allow' : 'none'
      if (edit === 'foreign-type') first.type = 'detach-disk'
      writeFileSync(planFile, JSON.stringify(set))
      const writes = sim.stats.writes()
      const out = await runCli(['apply', '--yes', '--plan', planFile], r)
      expect(out.code, edit).toBe(1)
      expect(out.stderr, edit).toMatch(
        /the saved plan is not the plan the repository and live PVE give now|changed on PVE since the plan was made|cannot be read now/,
      )
      expect(sim.stats.writes(), edit).toBe(writes)
      expectUntouched()
    }
    rmSync(planFile)
  }, 120_000) // nine CLI runs: generous for a loaded 2-core machine
})

describe('twin endpoints', () => {
  it('one simulator under two names is refused, spelled differently or at another address, with zero writes', async () => {
    const r = repo()
    expect((await runCli(['apply', '--yes'], r)).code).toBe(0)
    for (const [host, message] of [
      ['localhost', /reaches the same address as cluster "c"/],
      ['127.0.0.2', /clusters "c" and "d" are the same PVE cluster/],
    ] as const) {
      mkdirSync(join(r.root, 'clusters/d'), { recursive: true })
      writeFileSync(
        join(r.root, 'clusters/d/config.yaml'),
        `pve:\n  clusters:\n    d:\n      base-url: ${url(host)}\n      nodes: [pve1, pve2]\n      tls:\n        fingerprint: "${sim.fingerprint}"\n`,
      )
      // the twin wants none of c's guests: it would prune them all
      writeFileSync(join(r.root, 'clusters/d/resources.yaml'), 'resources: []\n')
      commit(r.root, `twin at ${host}`)
      const writes = sim.stats.writes()
      const out = await runCli(['apply', '--yes', '--allow-empty', 'VM', '--prune-budget', 'unlimited'], r)
      expect(out.code, host).toBe(1)
      expect(out.stderr, host).toMatch(message)
      expect(sim.stats.writes(), host).toBe(writes)
      expectUntouched()
    }
  })
})

describe('hostile git config', () => {
  it('fsmonitor, hooks and pager named by the repository never run; a foreign-owned checkout is refused', async () => {
    const r = repo()
    const marker = `${r.root}-ran`
    const script = `${r.root}-hook.sh`
    writeFileSync(script, `#!/bin/sh\nenv > ${marker}\n`)
    chmodSync(script, 0o755)
    for (const [key, value] of [
      ['core.fsmonitor', script],
      ['core.hooksPath', dirname(script)],
      ['core.pager', script],
      ['diff.external', script],
    ]) {
      execFileSync('git', ['-C', r.root, 'config', key as string, value as string])
    }
    writeFileSync(join(r.root, 'vm/c/stray.txt'), 'dirty\n')
    for (const args of [['diff'], ['status'], ['validate']]) {
      const out = await runCli(args, r)
      expect([0, 2], `${args[0]}: ${out.stderr}`).toContain(out.code)
      expect(existsSync(marker), args[0]).toBe(false)
    }
    if (process.getuid?.() === 0) {
      execFileSync('chown', ['-R', '65534:65534', r.root])
      const out = await runCli(['diff'], r)
      expect(out.code).toBe(1)
      expect(out.stderr).toMatch(/dubious ownership/)
      expect(existsSync(marker)).toBe(false)
    }
    rmSync(script, { force: true })
  })
})

// issue 30 item 3: pve-common JSONSchema check_object `requires` (notes-template needs storage) is checked offline
describe('a backup job with notes-template but no storage', () => {
  it('is refused by validate, naming the file and field, and by apply before any PVE request about jobs', async () => {
    const r = repo()
    const template = fc.sample(
      fc.constantFrom('{{guestname}}', '{{vmid}} on {{node}}', 'nightly\\n{{cluster}}', 'x'.repeat(1024)),
      { numRuns: 1, seed: 3 },
    )[0] as string
    // storage absent, null, empty or not a string: never a job PVE would refuse with a 400, or a storage guessed
    const variants: Record<string, string> = {
      absent: '',
      null: 'storage: ~\n',
      empty: 'storage: ""\n',
      list: 'storage: [local]\n',
    }
    const files = Object.fromEntries(
      Object.entries(variants).map(([name, storage]) => [
        `backupjob/c/${name}.yaml`,
        doc(
          'BackupJob',
          `notes-${name}`,
          `schedule: daily\n${storage}selection:\n  vmids: [300]\nnotes-template: ${JSON.stringify(template)}`,
        ),
      ]),
    )
    commitFiles(
      r,
      { ...files, 'clusters/c/resources.yaml': resources([...Object.keys(FILES), ...Object.keys(files)]) },
      'jobs without storage',
    )
    const validate = await runCli(['validate', '--output', 'json'], r)
    expect(validate.code).toBe(1)
    const { errors } = JSON.parse(validate.stdout) as { errors: { file: string; field?: string; line: number }[] }
    expect(errors.map((e) => [e.file, e.field]).sort()).toEqual(
      Object.keys(files)
        .sort()
        .map((f) => [f, 'spec.storage']),
    )
    for (const e of errors) expect(e.line, e.file).toBeGreaterThan(0)
    sim.stats.reset()
    const apply = await runCli(['apply', '--yes'], r)
    expect(apply.code).toBe(1)
    expect(sim.stats.writes()).toBe(0)
    expect(sim.stats.requests.filter((q) => q.path.startsWith('/cluster/backup'))).toEqual([])
    expectUntouched()
  })
})
