/**
 * Containers and storage artifacts against the simulator: a CT template downloaded then used by an LXC with
 * mount points, artifacts on two nodes, and deferral when a download fails.
 */
import { describe, expect, it } from 'vitest'
import { useEnv, actionLines, cycle, failures, manifest } from './helpers.js'

const env = useEnv()

const ctt = (name: string, nodes: string[], filename = 'debian-12-standard_12.7-1_amd64.tar.zst') =>
  manifest({
    kind: 'CTTemplate',
    metadata: { name },
    spec: { nodes, storage: 'local', filename, url: `https://images.example/${filename}` },
  })

const lxc = (vmid: number, template: string, spec: Record<string, unknown> = {}) =>
  manifest({
    kind: 'LXC',
    metadata: { name: `ct${vmid}` },
    spec: {
      node: 'pve1',
      vmid,
      template,
      memory: '512MiB',
      cpu: { cores: 1 },
      root: { storage: 'local-lvm', size: '4GiB' },
      'mount-points': [{ storage: 'local-lvm', size: '2GiB', 'mount-point': '/srv/data', options: { backup: true } }],
      networks: [{ bridge: 'vmbr0', ip: 'dhcp' }],
      ...spec,
    },
  })

describe('LXC and artifacts (simulator)', () => {
  it('downloads the CT template, creates the container with a mount point, converges, drifts back, stops and prunes (E2ELXCCreatesConverges)', async () => {
    const desired = [ctt('debian-12', ['pve1']), lxc(200, 'debian-12')]
    const first = await cycle(env, desired)
    expect(actionLines(first.plan)).toEqual([
      'download CTTemplate/pve1/local/debian-12-standard_12.7-1_amd64.tar.zst',
      'create LXC/pve1/200(ct200)',
    ])
    expect(failures(first.report)).toEqual([])
    const g = env.sim.control.guest(200)!
    expect(g.type).toBe('lxc')
    expect(g.config.mp0).toMatch(/^local-lvm:vm-200-disk-\d+,.*mp=\/srv\/data/)
    expect(g.status).toBe('running')
    expect((await cycle(env, desired, { dryRun: true })).plan.actions).toEqual([])

    env.sim.control.driftSet(200, 'memory', '1024')
    const drift = await cycle(env, desired)
    expect(drift.plan.actions.map((a) => a.type)).toEqual([expect.stringMatching(/update/)])
    expect(failures(drift.report)).toEqual([])
    expect((await cycle(env, desired, { dryRun: true })).plan.actions).toEqual([])

    const stopped = [ctt('debian-12', ['pve1']), lxc(200, 'debian-12', { state: 'stopped' })]
    expect(failures((await cycle(env, stopped)).report)).toEqual([])
    expect(env.sim.control.guest(200)!.status).toBe('stopped')

    const pruned = await cycle(env, [ctt('debian-12', ['pve1'])], {
      policy: { allowEmpty: ['LXC'], pruneRatioLimit: 1 },
    })
    expect(pruned.plan.actions.map((a) => `${a.type} ${a.vmid}`)).toEqual(['delete 200'])
    expect(failures(pruned.report)).toEqual([])
    expect(env.sim.control.guest(200)).toBeUndefined()
    // artifacts are never pruned (E2EAbsentPruneNeverTouchesArtifacts)
    const empty = await cycle(env, [], { policy: { allowEmpty: ['LXC', 'VM'] } })
    expect(empty.plan.actions).toEqual([])
    expect(
      env.sim.control
        .storageContent('pve1', 'local')
        .some((v) => String(v.volid).endsWith('debian-12-standard_12.7-1_amd64.tar.zst')),
    ).toBe(true)
  })

  it('places an ISO on two nodes, one download each, then does nothing (E2ECTTMultiNodePlacesPerNode, ISOAlreadyPresentNoop)', async () => {
    const iso = manifest({
      kind: 'ISO',
      metadata: { name: 'alpine' },
      spec: {
        nodes: ['pve2', 'pve3'],
        storage: 'local',
        filename: 'alpine-3.20.iso',
        url: 'https://images.example/alpine-3.20.iso',
      },
    })
    const first = await cycle(env, [iso])
    expect(actionLines(first.plan)).toEqual([
      'download ISO/pve2/local/alpine-3.20.iso',
      'download ISO/pve3/local/alpine-3.20.iso',
    ])
    expect(failures(first.report)).toEqual([])
    for (const node of ['pve2', 'pve3'])
      expect(env.sim.control.storageContent(node, 'local').some((v) => v.volid === 'local:iso/alpine-3.20.iso')).toBe(
        true,
      )
    expect((await cycle(env, [iso], { dryRun: true })).plan.actions).toEqual([])
  })

  it('sends a declared checksum with the download and stays idempotent (architecture difference 15)', async () => {
    const url = 'https://images.example/netboot.iso'
    const sha256 = env.sim.control.remoteChecksum(url, 'sha256')
    const iso = manifest({
      kind: 'ISO',
      metadata: { name: 'netboot' },
      spec: {
        nodes: ['pve1'],
        storage: 'local',
        filename: 'netboot.iso',
        url,
        checksum: { algorithm: 'sha256', value: sha256 },
      },
    })
    const first = await cycle(env, [iso])
    expect(failures(first.report)).toEqual([])
    const sent = first.plan.actions[0]!.requests[0]!
    expect(sent.call === 'downloadUrl' && sent.params).toMatchObject({
      checksum: sha256,
      'checksum-algorithm': 'sha256',
    })
    expect((await cycle(env, [iso], { dryRun: true })).plan.actions).toEqual([])

    const wrong = manifest({
      kind: 'ISO',
      metadata: { name: 'other' },
      spec: {
        nodes: ['pve1'],
        storage: 'local',
        filename: 'other.iso',
        url,
        checksum: { algorithm: 'sha256', value: '0'.repeat(64) },
      },
    })
    const bad = await cycle(env, [wrong])
    expect(bad.report!.results[0]!.status).toBe('failed')
    expect(bad.report!.results[0]!.error).toMatch(/checksum mismatch/)
  })

  it('defers the container when its template download fails, then converges once the fault clears (E2EDeferralWhenPrerequisiteFails)', async () => {
    const desired = [ctt('alpine-ct', ['pve1'], 'alpine-3.20-default_20240908_amd64.tar.xz'), lxc(210, 'alpine-ct')]
    env.sim.control.setTaskBehaviour('download', { fail: 'download failed: 503 Service Unavailable' })
    const failed = await cycle(env, desired)
    expect(failed.report!.results.map((r) => [r.type, r.status])).toEqual([
      ['download', 'failed'],
      ['create', 'skipped'],
    ])
    expect(failed.report!.results[0]!.error).toContain('503 Service Unavailable')
    expect(failed.report!.results[1]!.skip!.code).toBe('deferred')
    expect(env.sim.control.guest(210)).toBeUndefined()
    env.sim.control.setTaskBehaviour('download', null)
    const recovered = await cycle(env, desired)
    expect(failures(recovered.report)).toEqual([])
    expect(env.sim.control.guest(210)).toBeDefined()
    expect((await cycle(env, desired, { dryRun: true })).plan.actions).toEqual([])
  })
})
