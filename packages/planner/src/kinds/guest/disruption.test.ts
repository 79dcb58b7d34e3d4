import { describe, expect, it } from 'vitest'
import { desired, inventory, liveVm, policy, vm } from '../../fixtures.test.helpers.js'
import { DISRUPTION_POLICIES, parseConfigText, parseManifest } from '@proxops/schema'
import { allowed, classify, isDisruptionPolicy, maxClass, type GuestRuntime } from './disruption.js'
import { plan } from '../../plan/plan.js'

const qemu = (over: Partial<GuestRuntime> = {}): GuestRuntime => ({
  type: 'qemu',
  running: true,
  hotplug: new Set(['network', 'disk', 'usb']),
  numa: false,
  ...over,
})

describe('disruption classes from PVE hotplug rules', () => {
  it('a stopped guest takes every write at once', () => {
    for (const key of ['cores', 'memory', 'scsi0', 'bios'])
      expect(classify(key, false, qemu({ running: false }))).toBe('none')
  })

  it('tags and cloud-init data land at once on a running VM: their fields say so (Owned.running)', () => {
    const m = vm('web', 100, {
      tags: ['web'],
      'cloud-init-data': {
        'ssh-keys': ['ssh-ed25519 AAAAB alice@x'],
        'ci-password-ref': 'cloud-init.passwords.default',
        ipconfigs: [{ nic: 0, ip: '10.0.0.5/24', gateway: '10.0.0.1' }],
      },
    })
    const p = plan(desired(m), inventory([liveVm(100, 'web', { ipconfig0: 'ip=dhcp' })]), policy())
    expect(p.actions).toHaveLength(1)
    expect(p.actions[0]).toMatchObject({ type: 'update', disruption: 'none' })
    expect(p.actions[0]?.diffs.map((d) => d.key).sort()).toEqual(['cipassword', 'ipconfig0', 'sshkeys', 'tags'])
    // the same keys by name alone are not exempt: a running VM's unknown write is a reboot
    for (const key of ['tags', 'ipconfig0', 'sshkeys']) expect(classify(key, false, qemu())).toBe('reboot')
  })

  it('qemu: NICs and new scsi/virtio disks hotplug; the rest reboot', () => {
    expect(classify('net0', false, qemu())).toBe('hotplug')
    expect(classify('net0', false, qemu({ hotplug: new Set() }))).toBe('reboot')
    expect(classify('scsi1', true, qemu())).toBe('hotplug')
    expect(classify('sata1', true, qemu())).toBe('reboot')
    expect(classify('scsi0', false, qemu())).toBe('reboot')
    expect(classify('memory', false, qemu())).toBe('reboot')
    expect(classify('memory', false, qemu({ hotplug: new Set(['memory']), numa: true }))).toBe('hotplug')
    expect(classify('cores', false, qemu())).toBe('reboot')
  })

  it('qemu vmconfig_update_net: a re-link (bridge, tag, trunks, firewall, rate) is live without network hotplug', () => {
    const none = qemu({ hotplug: new Set() })
    const before = 'virtio=BC:24:11:00:00:01,bridge=vmbr0'
    expect(
      classify('net0', false, none, {
        before,
        after: 'virtio=bc:24:11:00:00:01,bridge=vmbr1,tag=5,firewall=1,rate=10',
      }),
    ).toBe('hotplug')
    expect(
      classify('net0', false, none, {
        before,
        after: 'model=virtio,macaddr=BC:24:11:00:00:01,bridge=vmbr0,trunks=2;3',
      }),
    ).toBe('hotplug')
    for (const after of [
      'e1000=BC:24:11:00:00:01,bridge=vmbr0',
      'virtio=BC:24:11:00:00:02,bridge=vmbr0',
      'virtio=BC:24:11:00:00:01,bridge=vmbr0,queues=4',
      'virtio=BC:24:11:00:00:01,bridge=vmbr0,mtu=9000',
      'virtio=BC:24:11:00:00:01',
    ]) {
      expect(classify('net0', false, none, { before, after })).toBe('reboot')
    }
    expect(classify('net1', true, none, { before: undefined, after: before })).toBe('reboot')
  })

  it('qemu vmconfig_update_disk: a CD drive that stays one changes its medium live (change_medium), a new one waits', () => {
    const none = qemu({ hotplug: new Set() })
    expect(classify('ide2', false, none, { before: 'local:iso/a.iso,media=cdrom', after: 'none,media=cdrom' })).toBe(
      'hotplug',
    )
    expect(classify('ide2', true, none, { before: 'none,media=cdrom', after: 'local:iso/a.iso,media=cdrom' })).toBe(
      'hotplug',
    )
    expect(classify('ide2', true, qemu(), { before: undefined, after: 'local:iso/a.iso,media=cdrom' })).toBe('reboot')
    expect(
      classify('ide2', false, none, {
        before: 'local:iso/a.iso,media=cdrom',
        after: 'local-lvm:vm-100-disk-1,size=4G',
      }),
    ).toBe('reboot')
  })

  it('lxc: memory, cores, NICs and new mount points hotplug; DNS and features reboot', () => {
    const ct = qemu({ type: 'lxc' })
    expect(classify('memory', false, ct)).toBe('hotplug')
    expect(classify('net0', false, ct)).toBe('hotplug')
    expect(classify('mp0', true, ct)).toBe('hotplug')
    expect(classify('mp0', false, ct)).toBe('reboot')
    expect(classify('nameserver', false, ct)).toBe('reboot')
    expect(classify('hostname', false, ct)).toBe('none')
  })

  it('policies are levels; allow is everything', () => {
    expect(maxClass(['none', 'hotplug', 'reboot'])).toBe('reboot')
    expect(allowed('stop', 'allow')).toBe(true)
    expect(allowed('hotplug', 'none')).toBe(false)
    expect(allowed('hotplug', 'hotplug')).toBe(true)
    expect(allowed('reboot', 'hotplug')).toBe(false)
  })
})

describe('the disruption policies: one list for the config, the annotation and the planner', () => {
  it('the planner accepts exactly what the config and the proxops/disruption annotation accept', () => {
    for (const p of [...DISRUPTION_POLICIES, 'always', 'Stop', 'hot-plug']) {
      const config =
        parseConfigText(`reconcile:\n  disruption: "${p}"\n`, '/repo/proxops.yaml', { dir: '/repo' }).errors.length ===
        0
      const annotation = parseManifest({
        apiVersion: 'proxops/v1alpha1',
        kind: 'VM',
        metadata: { name: 'web', annotations: { 'proxops/disruption': p } },
        spec: {
          node: 'pve1',
          vmid: 100,
          memory: '1GiB',
          cpu: { type: 'host', cores: 1 },
          disks: [{ storage: 'local-lvm', size: '8GiB' }],
        },
      }).ok
      expect([p, isDisruptionPolicy(p), annotation]).toEqual([p, config, config])
    }
    expect(() => plan(desired(), inventory(), policy({ disruption: 'always' as never }))).toThrow(
      /unknown disruption policy "always"/,
    )
  })
})
