/**
 * Crash safety of the built CLI process during disk moves (issue 38): a declared storage change moves a running VM's
 * disk online (qemu-server move_vm_disk, a `qmmove` task) and a stopped container's root filesystem (pve-container
 * move_volume, a `move_volume` task). The simulator holds the seed's move task (its control's task hold) so that
 * `apply --yes` is SIGKILLed while PVE copies, never before or after by chance of timing; then PVE finishes what it
 * started (the hold is released) and the next apply must converge or fail with a reason, one more converges,
 * `diff --detailed-exitcode` exits 0, the data written to each disk is on the volume its config names, on the
 * declared storage, nothing of the guests is left on the other storage, no lock, and the repository is untouched.
 * Seeds chain on one simulator, each moving the disks back; PROXOPS_SOAK multiplies them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '@proxops/pve-sim'
import { commit, doc, makeRepo, runCli, sleep, startCli, type Repo } from './cli-harness.js'
import { runs } from './soak.js'

const TEMPLATE = 'debian-12-standard_12.7-1_amd64.tar.zst'
const FILES = { vm: 'vm/c/disk.yaml', ct: 'lxc/c/disk.yaml', tpl: 'ctt/c/debian.yaml' }
const STORAGES = ['local-lvm', 'local-zfs'] as const
const NEXT_APPLY_BOUND_MS = 30_000

function desired(storage: string): Record<string, string> {
  return {
    [FILES.tpl]: doc(
      'CTTemplate',
      'debian-12-standard',
      `nodes: [pve1]\nstorage: local\nfilename: ${TEMPLATE}\nurl: https://downloads.example.invalid/${TEMPLATE}`,
    ),
    [FILES.vm]: doc(
      'VM',
      'disk-600',
      `node: pve1\nvmid: 600\nstate: started\nmemory: 512MiB\ncpu: {type: x86-64-v2-AES, cores: 1}\n` +
        `disks:\n  - {storage: ${storage}, size: 1GiB}\nnetworks:\n  - {bridge: vmbr0}`,
    ),
    [FILES.ct]: doc(
      'LXC',
      'disk-601',
      `node: pve1\nvmid: 601\ntemplate: debian-12-standard\nstate: stopped\nmemory: 512MiB\ncpu: {cores: 1}\n` +
        `root: {storage: ${storage}, size: 1GiB}\nnetworks:\n  - {bridge: vmbr0, iface: eth0, ip: dhcp}`,
    ),
  }
}

const SLOTS: [number, string][] = [
  [600, 'scsi0'],
  [601, 'rootfs'],
]

describe('SIGKILL of the CLI while PVE moves a disk', { timeout: 240_000 }, () => {
  let sim: Simulator
  let repo: Repo
  const volumeOf = (vmid: number, key: string) => sim.control.guest(vmid)?.config[key]?.split(',')[0] ?? ''

  beforeAll(async () => {
    sim = await startSimulator({
      nodes: ['pve1', 'pve2'],
      taskDurationMs: 40,
      resourcesLagMs: 0,
      authFailureDelayMs: 0,
      log: () => {},
    })
    sim.control.addVolume('pve1', 'local', { filename: TEMPLATE, content: 'vztmpl' })
    repo = makeRepo(sim, desired('local-lvm'))
    commit(repo, { 'proxops.yaml': 'reconcile:\n  task-timeout: 60s\n' }, 'task timeout')
    const first = await runCli(['apply', '--yes'], repo)
    expect(first.code, first.stdout + first.stderr).toBe(0)
    for (const [vmid, key] of SLOTS) sim.control.writeVolume('pve1', volumeOf(vmid, key), `data of ${vmid}`)
  }, 60_000)
  afterAll(async () => {
    repo?.cleanup()
    await sim?.close()
  })

  const seeds = Array.from({ length: runs(2) }, (_, i) => i)
  it.each(seeds)('seed %i: killed during the move, the next apply recovers and nothing is lost', async (i) => {
    const to = STORAGES[(i + 1) % 2] as string
    const from = STORAGES[i % 2] as string
    // each seed holds the other guest's move: a VM's qmmove, then a container's move_volume
    const held = i % 2 === 0 ? 'qmmove' : 'move_volume'
    const at = `seed ${i} (${held} held, disks to ${to})`
    commit(repo, desired(to), `seed ${i}: disks to ${to}`)
    sim.control.setTaskBehaviour(held, { hold: true })
    const apply = startCli(['apply', '--yes'], repo)
    let exited = false
    void apply.done.then(() => (exited = true))
    while (!exited && !sim.control.tasks().some((t) => t.type === held && t.status === 'running')) await sleep(5)
    apply.child.kill('SIGKILL')
    const killed = await apply.done
    expect(killed.signal, `${at}: the apply ended before its move task ran: ${killed.stdout}`).toBe('SIGKILL')

    // PVE finishes the move it started; the next apply ends in bounded time, converged or failed with a reason
    sim.control.setTaskBehaviour(held, null)
    sim.control.settle()
    const started = Date.now()
    const next = await runCli(['apply', '--yes'], repo)
    expect(Date.now() - started, at).toBeLessThan(NEXT_APPLY_BOUND_MS)
    expect(next.signal, at).toBeNull()
    if (next.code !== 0) {
      expect(next.stdout + next.stderr, at).toMatch(/failed/)
      const again = await runCli(['apply', '--yes'], repo)
      expect(again.code, `${at}: ${again.stdout}${again.stderr}`).toBe(0)
    }
    const diff = await runCli(['diff', '--detailed-exitcode'], repo)
    expect(diff.code, `${at}: ${diff.stdout}\n${diff.stderr}`).toBe(0)

    for (const [vmid, key] of SLOTS) {
      const volid = volumeOf(vmid, key)
      expect(volid, `${at}: ${vmid}`).toMatch(new RegExp(`^${to}:`))
      expect(sim.control.readVolume('pve1', volid), `${at}: ${vmid}`).toBe(`data of ${vmid}`)
      const g = sim.control.guest(vmid)
      expect(g?.lock, `${at}: ${vmid}`).toBeUndefined()
      expect(
        Object.keys(g?.config ?? {}).filter((k) => k.startsWith('unused')),
        `${at}: ${vmid}`,
      ).toEqual([])
    }
    const left = sim.control.storageContent('pve1', from).map((v) => String(v.volid))
    expect(
      left.filter((v) => /-60[01]-/.test(v)),
      at,
    ).toEqual([])
    expect(sim.control.guest(600)?.status, at).toBe('running')
    expect(sim.control.guest(601)?.status, at).toBe('stopped')
    expect(repo.gitStatus(), at).toBe('')
  })
})
