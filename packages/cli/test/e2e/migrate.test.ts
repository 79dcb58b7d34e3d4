/**
 * Moving guests through the CLI against the simulator's migration (qemu-server migrate_vm and
 * PVE::QemuMigrate, pve-container migrate_vm and PVE::LXC::Migrate, pve-ha-manager's placement), logged in as
 * root@pam with a ticket (PVE refuses a raw hostpci to every API token): a changed spec.node moves a running VM
 * with a local disk online, a stopped VM offline and a running container with a restart; a VM with a raw hostpci
 * is blocked in diff; a VM moved by hand is moved back; an HA guest that HA recovered on another node after a node
 * failure is left there. Each apply is followed by a diff with no changes.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { Simulator } from '@proxops/pve-sim'
import type { PveClient } from '@proxops/pve-client'
import { createPveClient } from '@proxops/pve-client'
import { CANARY, CTT_DEB, baseEnv, git, makeRepo, proxops, startLab, vmManifest, waitFor } from './harness.js'

vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 })

const started = (text: string) => text.replace('  state: stopped\n', '  state: started\n')
const onNode = (text: string, node: string) => text.replace(/^ {2}node: \w+$/m, `  node: ${node}`)
const ct = (node: string) => `apiVersion: proxops/v1alpha1
kind: LXC
metadata:
  name: cache
spec:
  node: ${node}
  vmid: 152
  template: deb
  state: started
  memory: 512MiB
  cpu: {cores: 1}
  root: {storage: local-lvm, size: 4GiB}
  networks: [{bridge: vmbr0, ip: dhcp}]
`
const gpu = (node: string) =>
  onNode(vmManifest('gpu', 153), node) +
  `  hardware:
    pci-devices:
      - slot: hostpci0
        device: "0000:17:00"
`
const FILES = {
  web: 'vm/lab/web.yaml',
  cold: 'vm/lab/cold.yaml',
  cache: 'lxc/lab/cache.yaml',
  gpu: 'vm/lab/gpu.yaml',
  deb: 'ctt/lab/deb.yaml',
}

/** the cluster entry logs in as root@pam with its password (a ticket), from the environment */
function session(sim: Simulator, repo: string) {
  const env = baseEnv(repo, { PROXOPS_PVE_USER: 'root@pam', PROXOPS_PVE_PASSWORD: CANARY.password })
  const run = (...args: string[]) => proxops(args, { cwd: repo, env })
  const admin: PveClient = createPveClient({
    baseUrl: sim.url,
    auth: { type: 'ticket', username: 'root@pam', password: CANARY.password },
    tls: { fingerprint: sim.fingerprint! },
  })
  const commit = (file: string, text: string, message: string) => {
    writeFileSync(path.join(repo, file), text)
    git(repo, 'add', '-A')
    git(repo, 'commit', '-q', '-m', message)
  }
  const nodeOf = async (vmid: number) => (await admin.clusterResources('vm')).find((r) => r.vmid === vmid)?.node
  /** apply must succeed, and the diff after it must plan nothing */
  const converge = async () => {
    const apply = await run('apply', '--yes')
    expect(apply.code, apply.stdout + apply.stderr).toBe(0)
    const diff = await run('diff')
    expect(diff.stdout + diff.stderr).toContain('No changes')
    expect(diff.code).toBe(0)
    return apply
  }
  return { run, admin, commit, nodeOf, converge }
}

describe('moving guests', () => {
  let sim: Simulator
  let repo: string
  let s: ReturnType<typeof session>
  beforeAll(async () => {
    sim = await startLab({ taskDurationMs: 20 })
    repo = await makeRepo(sim, {
      clusterExtra: '      auth: ticket',
      sops: false,
      manifests: {
        // a container's template must be declared on its node (the schema's dependency-node check)
        [FILES.deb]: CTT_DEB.replace('nodes: [pve1]', 'nodes: [pve1, pve2]'),
        [FILES.web]: started(vmManifest('web', 150)),
        [FILES.cold]: vmManifest('cold', 151),
        [FILES.cache]: ct('pve1'),
        [FILES.gpu]: gpu('pve1'),
      },
    })
    s = session(sim, repo)
  })
  afterAll(async () => {
    await s?.admin.close()
    await sim?.close()
    rmSync(repo, { recursive: true, force: true })
  })

  it('a changed spec.node migrates: online, offline, restart; then no changes', async () => {
    await s.converge()
    s.commit(FILES.web, onNode(readFileSync(path.join(repo, FILES.web), 'utf8'), 'pve2'), 'move web')
    s.commit(FILES.cold, onNode(vmManifest('cold', 151), 'pve2'), 'move cold')
    s.commit(FILES.cache, ct('pve2'), 'move cache')
    const diff = await s.run('diff')
    expect(diff.stdout).toMatch(
      /# VM\/pve2\/150\(web\) will be migrated[^\n]*\(disruption: hotplug\)\n[^\n]*online \(live\) migration to pve2/,
    )
    expect(diff.stdout).toMatch(/scsi0[^\n]*local-lvm:vm-150-disk-0[^\n]*local-lvm on pve2/)
    const json = JSON.parse((await s.run('diff', '--output', 'json')).stdout) as {
      plans: { actions: { vmid: number; type: string; disruption: string }[] }[]
    }
    expect(json.plans[0]!.actions.map((a) => [a.vmid, a.type, a.disruption])).toEqual([
      [150, 'migrate', 'hotplug'],
      [151, 'migrate', 'none'],
      [152, 'migrate', 'reboot'],
    ])
    await s.converge()
    expect([await s.nodeOf(150), await s.nodeOf(151), await s.nodeOf(152)]).toEqual(['pve2', 'pve2', 'pve2'])
    expect((await s.admin.guestStatus('pve2', 'qemu', 150)).status).toBe('running')
    expect((await s.admin.guestStatus('pve2', 'lxc', 152)).status).toBe('running')
  })

  it('a VM with a raw hostpci device is blocked in diff, and apply sends no migration', async () => {
    s.commit(FILES.gpu, gpu('pve2'), 'move gpu')
    const diff = await s.run('diff')
    expect(diff.stdout).toContain('migration-refused')
    expect(diff.stdout).toMatch(/local device hostpci0 is bound to this node/)
    const apply = await s.run('apply', '--yes')
    expect(apply.stdout).not.toMatch(/~ VM\/pve2\/153/)
    expect(await s.nodeOf(153)).toBe('pve1')
    s.commit(FILES.gpu, gpu('pve1'), 'gpu stays')
    const after = await s.run('diff', '--detailed-exitcode')
    expect(after.stdout).toContain('No changes')
    expect(after.code).toBe(0)
  })

  it('a VM moved by hand is moved back', async () => {
    await s.admin.waitTaskOk(
      await s.admin.migrateGuest('pve2', 'qemu', 150, { target: 'pve1', online: 1, 'with-local-disks': 1 }),
    )
    expect(await s.nodeOf(150)).toBe('pve1')
    const diff = await s.run('diff')
    expect(diff.stdout).toMatch(/# VM\/pve2\/150\(web\) will be migrated[\s\S]*on node pve1, declared on pve2/)
    await s.converge()
    expect(await s.nodeOf(150)).toBe('pve2')
  })
})

describe('an HA guest HA moved', () => {
  let sim: Simulator
  let repo: string
  let s: ReturnType<typeof session>
  const FILE = 'vm/lab/ha.yaml'
  // its disk on a shared storage: HA recovers it on another node, where a local disk would not be
  const manifest = started(vmManifest('ha', 160, { node: 'pve1' }))
    .replace('storage: local-lvm', 'storage: nas')
    .concat('  ha:\n    nodes: { pve1: 2, pve2: 1 }\n')
  beforeAll(async () => {
    sim = await startLab({ taskDurationMs: 20, haLagMs: 20 })
    repo = await makeRepo(sim, { sops: false, clusterExtra: '      auth: ticket', manifests: { [FILE]: manifest } })
    s = session(sim, repo)
    await s.admin.request('POST', '/storage', {
      params: { storage: 'nas', type: 'nfs', server: '10.0.0.9', export: '/vms', content: 'images' },
    })
  })
  afterAll(async () => {
    await s?.admin.close()
    await sim?.close()
    rmSync(repo, { recursive: true, force: true })
  })

  it('is left where HA put it after a node failure: no plan, no anomaly, and status says where and why', async () => {
    await s.converge()
    sim.control.failNode('pve1', { fenceDelayMs: 0, agentLockMs: 0 })
    await waitFor(async () => ((await s.nodeOf(160)) === 'pve2' ? true : undefined))
    await waitFor(async () =>
      (await s.admin.guestStatus('pve2', 'qemu', 160)).status === 'running' ? true : undefined,
    )
    const diff = await s.run('diff', '--output', 'json')
    const plan = (JSON.parse(diff.stdout) as { plans: { actions: unknown[]; anomalies: unknown[] }[] }).plans[0]!
    expect(plan.actions).toEqual([])
    expect(plan.anomalies).toEqual([])
    const status = await s.run('status')
    expect(status.stdout).toMatch(/VM +ha +160 +converged\n +on node pve2: on node pve2, where HA placed it/)
  })
})
