/**
 * Image-seeded template, clone, and cloud-init with SOPS references against the simulator:
 * secrets come from a real SOPS file decrypted by @proxops/sops and never appear in plan or report.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { decryptSops, encryptSops, readCredentials } from '@proxops/sops'
import { serializePlan } from '../src/index.js'
import { useEnv, actionLines, cycle, failures, manifest, small, testVm } from './helpers.js'

const env = useEnv()

const image = manifest({
  kind: 'DiskImage',
  metadata: { name: 'debian-cloud' },
  spec: {
    nodes: ['pve1'],
    storage: 'local',
    filename: 'debian-12-genericcloud-amd64.qcow2',
    url: 'https://images.example/debian-12-genericcloud-amd64.qcow2',
  },
})

/** a cloud-init drive on local-lvm */
const CLOUD_INIT = { 'cloud-init': { enabled: true, storage: 'local-lvm' } }

const template = testVm(
  9000,
  {
    cpu: { type: 'host', cores: 1 },
    disks: [{ storage: 'local-lvm', image: 'debian-cloud', controller: 'virtio-scsi-single' }],
    hardware: CLOUD_INIT,
  },
  'debian-tpl',
  'TemplateVM',
)

const clone = (cores = 2) =>
  testVm(
    300,
    {
      clone: 'debian-tpl',
      disks: undefined,
      memory: '2GiB',
      cpu: { type: 'host', cores },
      'cloud-init-data': { 'ci-user': 'ops', ipconfigs: [{ nic: 0, ip: '10.0.0.30/24', gateway: '10.0.0.1' }] },
    },
    'app',
  )

describe('templates, clones and cloud-init (simulator)', () => {
  it('seeds a template from a downloaded image, marks it, clones a VM from it, starts it, and corrects drift without re-cloning (E2ECloneProvisionLifecycle)', async () => {
    const desired = [image, template, clone()]
    const first = await cycle(env, desired)
    expect(failures(first.report)).toEqual([])
    expect(actionLines(first.plan)).toEqual([
      'download DiskImage/pve1/local/debian-12-genericcloud-amd64.qcow2',
      'create TemplateVM/pve1/9000(debian-tpl)',
      'clone VM/pve1/300(app)',
    ])
    const tpl = env.sim.control.guest(9000)!
    expect(tpl.config.template).toBe('1')
    expect(tpl.config.scsi0).toMatch(/base-9000-disk/)
    const vm = env.sim.control.guest(300)!
    expect(vm.config.template).toBeUndefined()
    expect(vm.config.ciuser).toBe('ops')
    expect(vm.config.ipconfig0).toBe('ip=10.0.0.30/24,gw=10.0.0.1')
    expect(vm.config.tags).toBe('proxops')

    // ProxOps starts a `started` clone in the same action (the reference waits a cycle), so it converges at once
    expect(vm.status).toBe('running')
    expect((await cycle(env, desired, { dryRun: true })).plan.actions).toEqual([])

    // E2ECloneDriftCorrectsWithoutReclone
    env.sim.control.driftSet(300, 'memory', '4096')
    const drift = await cycle(env, desired)
    expect(drift.plan.actions.map((a) => a.type)).not.toContain('clone')
    expect(failures(drift.report)).toEqual([])
    expect(env.sim.control.guest(300)!.config.memory).toBe('2048')
    expect((await cycle(env, desired, { dryRun: true })).plan.actions).toEqual([])

    // E2EClonePruneRespectsOwnership: dropping the VM prunes the clone, never the template
    const pruned = await cycle(env, [image, template], { policy: { pruneRatioLimit: 1, allowEmpty: ['VM'] } })
    expect(pruned.plan.actions.map((a) => `${a.type} ${a.vmid}`)).toEqual(['delete 300'])
    expect(failures(pruned.report)).toEqual([])
    expect(env.sim.control.guest(300)).toBeUndefined()
    expect(env.sim.control.guest(9000)).toBeDefined()
  })

  it('keeps the cloud-init drive a clone inherited instead of allocating a new one (Clone_DriveNotRewritten)', async () => {
    const withDrive = testVm(
      301,
      {
        clone: 'debian-tpl',
        disks: undefined,
        cpu: { type: 'host', cores: 1 },
        hardware: CLOUD_INIT,
        'cloud-init-data': { 'ci-user': 'deploy' },
      },
      'app2',
    )
    const desired = [image, template, withDrive]
    const first = await cycle(env, desired, { policy: { pruneBudget: 0 } })
    expect(failures(first.report)).toEqual([])
    const g = env.sim.control.guest(301)!
    expect(g.config.ide2).toMatch(/^local-lvm:vm-301-cloudinit,media=cdrom/)
    expect(Object.keys(g.config).filter((k) => /^unused\d+$/.test(k))).toEqual([])
    expect(g.config.ciuser).toBe('deploy')
    expect((await cycle(env, desired, { policy: { pruneBudget: 0 }, dryRun: true })).plan.actions).toEqual([])
  })

  it('writes cloud-init keys and password from a SOPS file at execute time; no value reaches plan or report', async () => {
    // the examples' test-only key (public on purpose): the test encrypts its own canaries to it
    const keys = readFileSync(new URL('../../../examples/repository/keys/test-only.agekey', import.meta.url), 'utf8')
    const identity = keys.split('\n').find((l) => l.startsWith('AGE-SECRET-KEY-'))!
    const recipient = /public key: (age1\S+)/.exec(keys)![1]!
    const canaryKey = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICanaryCanaryCanaryCanaryCanaryCanary00000 canary@test'
    const canaryPassword = 'canary-pass-0c4b'
    const sopsText = await encryptSops(
      `cloud-init:\n  ssh-keys:\n    alice: ${canaryKey}\n  passwords:\n    default: ${canaryPassword}\n`,
      {
        recipients: [recipient],
        file: 'secrets.sops.yaml',
      },
    )
    expect(sopsText).not.toContain('canary')
    const credentials = readCredentials(
      await decryptSops(sopsText, { identities: [identity], file: 'secrets.sops.yaml' }),
      { cluster: 'homelab' },
    )
    const secrets: Record<string, string> = {}
    for (const ref of ['cloud-init.ssh-keys.alice', 'cloud-init.passwords.default'])
      secrets[ref] = credentials.resolveRef(ref).reveal()

    const vm = testVm(
      310,
      {
        node: 'pve2',
        ...small('4GiB'),
        hardware: CLOUD_INIT,
        'cloud-init-data': {
          'ci-user': 'ops',
          'ssh-key-refs': ['cloud-init.ssh-keys.alice'],
          'ci-password-ref': 'cloud-init.passwords.default',
        },
      },
      'ci',
    )
    const first = await cycle(env, [vm], { secrets, policy: { pruneBudget: 0 } })
    expect(failures(first.report)).toEqual([])
    const text = serializePlan(first.plan) + JSON.stringify(first.report)
    expect(text).not.toContain('canary')
    expect(text).not.toContain('CanaryCanary')
    const g = env.sim.control.guest(310)!
    expect(decodeURIComponent(g.config.sshkeys!)).toBe(canaryKey)
    expect(g.config.cipassword).toBeDefined()
    expect(g.config.cipassword).not.toBe(canaryPassword)
    const second = await cycle(env, [vm], { secrets, dryRun: true, policy: { pruneBudget: 0 } })
    expect(second.plan.actions).toEqual([])
  })
})
