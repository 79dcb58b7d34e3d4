/**
 * LXC.spec.clone through the CLI against the simulator, one lifecycle: a TemplateCT is created, an LXC is
 * full-cloned from it (pve-container clone_vm) onto its root storage, grown and configured; host drift and a git
 * change are updates, never a re-clone; adopt reads the clone back; pruning it leaves the template.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { Simulator } from '@proxops/pve-sim'
import { baseEnv, git, makeRepo, proxops, startLab, CTT_DEB } from './harness.js'

vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 })

const TEMPLATE = `apiVersion: proxops/v1alpha1
kind: TemplateCT
metadata:
  name: golden
spec:
  node: pve1
  vmid: 9100
  template: deb
  memory: 512MiB
  cpu: {cores: 1}
  root: {storage: local-lvm, size: 4GiB}
  networks: [{bridge: vmbr0, ip: dhcp}]
`
const app = (memory: string) => `apiVersion: proxops/v1alpha1
kind: LXC
metadata:
  name: app
spec:
  node: pve1
  vmid: 120
  clone: golden
  memory: ${memory}
  cpu: {cores: 2}
  root: {storage: local-lvm, size: 8GiB}
  networks: [{bridge: vmbr0, ip: dhcp}]
  tags: [e2e]
`

let sim: Simulator
let root: string
const run = (...args: string[]) => proxops(args, { cwd: root, env: baseEnv(root) })
const lastLine = (text: string): string => text.trimEnd().split('\n').at(-1) ?? ''
const commit = (message: string) => {
  git(root, 'add', '-A')
  git(root, 'commit', '-q', '-m', message)
}

beforeAll(async () => {
  sim = await startLab()
  root = await makeRepo(sim, {
    manifests: {
      'ctt/lab/deb.yaml': CTT_DEB,
      'templatect/lab/golden.yaml': TEMPLATE,
      'lxc/lab/app.yaml': app('1GiB'),
    },
    proxopsYaml: 'reconcile:\n  prune-budget: 1\n',
  })
})
afterAll(async () => {
  await sim.close()
  rmSync(root, { recursive: true, force: true })
})

describe('LXC cloned from a TemplateCT', () => {
  it('create: the template, then a full clone grown to root.size with ProxOps config; then converged', async () => {
    const plan = await run('diff')
    expect(plan.code, plan.stderr).toBe(0)
    expect(plan.stdout).toContain('will full-clone from TemplateCT golden (vmid 9100)')
    const applied = await run('apply', '--yes')
    expect(applied.code, applied.stdout + applied.stderr).toBe(0)
    const ct = sim.control.guest(120)
    expect(ct?.type).toBe('lxc')
    expect(ct?.config).toMatchObject({
      hostname: 'app',
      memory: '1024',
      cores: '2',
      rootfs: 'local-lvm:vm-120-disk-0,size=8G',
    })
    expect(ct?.config.template).toBeUndefined()
    expect(ct?.status).toBe('running')
    expect(sim.control.guest(9100)?.config.template).toBe('1')
    const again = await run('diff', '--detailed-exitcode')
    expect(again.code, again.stdout).toBe(0)
    expect(lastLine(again.stdout)).toBe('No changes. PVE matches git.')
  })

  it('drift and update: a host edit and a git change are config writes, never a re-clone', async () => {
    sim.control.driftSet(120, 'memory', '256')
    const drifted = await run('diff', '--detailed-exitcode')
    expect(drifted.code, drifted.stdout).toBe(2)
    expect(drifted.stdout).toMatch(/memory/)
    expect(drifted.stdout).not.toContain('full-clone')
    writeFileSync(path.join(root, 'lxc/lab/app.yaml'), app('2GiB'))
    commit('app: 2 GiB')
    const applied = await run('apply', '--yes')
    expect(applied.code, applied.stdout + applied.stderr).toBe(0)
    expect(sim.control.guest(120)?.config.memory).toBe('2048')
    expect(lastLine((await run('diff')).stdout)).toBe('No changes. PVE matches git.')
  })

  it('adopt and prune: undeclared, the clone is adopted read-only as an LXC; removed from git, it is pruned and the template kept', async () => {
    unlinkSync(path.join(root, 'lxc/lab/app.yaml'))
    const resources = path.join(root, 'clusters/lab/resources.yaml')
    writeFileSync(resources, readFileSync(resources, 'utf8').replace('  - ../../lxc/lab/app.yaml\n', ''))
    commit('app removed')
    const writes = sim.stats.writes()
    const adopted = await run('adopt', '--cluster', 'lab')
    // the exit code also reflects declared objects adopt will not overwrite; the clone's file is what matters
    expect(adopted.stdout).toContain('adopt: wrote lxc/lab/app.yaml (LXC)')
    expect(sim.stats.writes()).toBe(writes)
    const file = path.join(root, 'lxc/lab/app.yaml')
    expect(readFileSync(file, 'utf8')).toMatch(/vmid: 120/)
    // PVE does not record that a container is a clone: the adopted manifest names the template as a gap
    expect(adopted.stdout).toContain('gap LXC on pve1#120: spec.template=(unknown)')
    git(root, 'clean', '-fdq')
    // the last LXC of the cluster: the empty-desired guard holds the prune until it is allowed
    const guarded = await run('diff')
    expect(guarded.stdout).toMatch(/prune-guard/)
    const pruned = await run('apply', '--yes', '--allow-empty', 'LXC')
    expect(pruned.code, pruned.stdout + pruned.stderr).toBe(0)
    expect(sim.control.guest(120)).toBeUndefined()
    expect(sim.control.guest(9100)).toBeDefined()
    expect(lastLine((await run('diff')).stdout)).toBe('No changes. PVE matches git.')
  })
})
