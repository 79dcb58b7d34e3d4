/**
 * Moving disks through the CLI against the simulator's qemu-server move_vm_disk and pve-container move_volume: a
 * declared storage change of a running VM's disk is an online move (hotplug class) and of a stopped container's root
 * filesystem an offline one, both shown with their class in diff; apply converges, the data written to each disk is
 * on its new volume, and nothing is left on the old storage. Then the diff plans nothing.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { Simulator } from '@proxops/pve-sim'
import { CTT_DEB, git, makeRepo, proxops, startLab, vmManifest } from './harness.js'

vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 })

const FILES = { web: 'vm/lab/web.yaml', cache: 'lxc/lab/cache.yaml', deb: 'ctt/lab/deb.yaml' }
const web = (storage: string) =>
  vmManifest('web', 160)
    .replace('  state: stopped\n', '  state: started\n')
    .replace('storage: local-lvm', `storage: ${storage}`)
const cache = (storage: string) => `apiVersion: proxops/v1alpha1
kind: LXC
metadata:
  name: cache
spec:
  node: pve1
  vmid: 161
  template: deb
  state: stopped
  memory: 512MiB
  cpu: {cores: 1}
  root: {storage: ${storage}, size: 4GiB}
  networks: [{bridge: vmbr0, ip: dhcp}]
`

describe('moving disks to the storage git declares', () => {
  let sim: Simulator
  let repo: string
  const run = (...args: string[]) => proxops(args, { cwd: repo })
  const volids = (storage: string) => sim.control.storageContent('pve1', storage).map((v) => String(v.volid))
  const volumeOf = (vmid: number, key: string) => sim.control.guest(vmid)?.config[key]?.split(',')[0] ?? ''

  beforeAll(async () => {
    sim = await startLab({ taskDurationMs: 20 })
    repo = await makeRepo(sim, {
      manifests: { [FILES.deb]: CTT_DEB, [FILES.web]: web('local-lvm'), [FILES.cache]: cache('local-lvm') },
    })
  })
  afterAll(async () => {
    await sim?.close()
    rmSync(repo, { recursive: true, force: true })
  })

  it('a running VM moves online and a stopped container offline; the data moves, no volume is left behind', async () => {
    const first = await run('apply', '--yes')
    expect(first.code, first.stdout + first.stderr).toBe(0)
    sim.control.writeVolume('pve1', volumeOf(160, 'scsi0'), 'web data')
    sim.control.writeVolume('pve1', volumeOf(161, 'rootfs'), 'cache data')

    for (const [file, text] of [
      [FILES.web, web('local-zfs')],
      [FILES.cache, cache('local-zfs')],
    ] as const)
      writeFileSync(path.join(repo, file), text)
    git(repo, 'commit', '-qam', 'disks to local-zfs')
    expect(readFileSync(path.join(repo, FILES.web), 'utf8')).toContain('storage: local-zfs')

    const diff = await run('diff')
    expect(diff.stdout).toMatch(/# VM\/pve1\/160\(web\) will have a disk moved[^\n]*\(disruption: hotplug\)/)
    // a change without disruption shows no class
    expect(diff.stdout).toMatch(/# LXC\/pve1\/161\(cache\) will have a disk moved [^\n]*in place\)\n/)
    expect(diff.stdout).toContain('spec.root.storage (rootfs): "local-lvm" -> "local-zfs"')
    const json = JSON.parse((await run('diff', '--output', 'json')).stdout) as {
      plans: { actions: { vmid: number; type: string; disruption: string }[]; anomalies: unknown[] }[]
    }
    expect(json.plans[0]!.anomalies).toEqual([])
    expect(json.plans[0]!.actions.map((a) => [a.vmid, a.type, a.disruption])).toEqual([
      [160, 'move-disk', 'hotplug'],
      [161, 'move-disk', 'none'],
    ])

    const apply = await run('apply', '--yes')
    expect(apply.code, apply.stdout + apply.stderr).toBe(0)
    const after = await run('diff')
    expect(after.stdout + after.stderr).toContain('No changes')
    expect(after.code).toBe(0)

    expect(volumeOf(160, 'scsi0')).toMatch(/^local-zfs:/)
    expect(volumeOf(161, 'rootfs')).toMatch(/^local-zfs:/)
    expect(sim.control.readVolume('pve1', volumeOf(160, 'scsi0'))).toBe('web data')
    expect(sim.control.readVolume('pve1', volumeOf(161, 'rootfs'))).toBe('cache data')
    expect(sim.control.guest(160)?.status).toBe('running')
    expect(sim.control.guest(161)?.status).toBe('stopped')
    // the sources were freed, and no config names them as unused
    expect(volids('local-lvm').filter((v) => /-16[01]-/.test(v))).toEqual([])
    for (const vmid of [160, 161])
      expect(Object.keys(sim.control.guest(vmid)?.config ?? {}).filter((k) => k.startsWith('unused'))).toEqual([])
  })
})
