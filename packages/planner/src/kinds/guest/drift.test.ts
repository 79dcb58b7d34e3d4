/** Drift classification per field, at the plan level. */
import { describe, expect, it } from 'vitest'
import {
  artifact,
  desired,
  GiB,
  inventory,
  liveCt,
  liveVm,
  lookup,
  lxc,
  policy,
  SECRETS,
  vm,
} from '../../fixtures.test.helpers.js'
import { plan } from '../../plan/plan.js'
import type { Plan } from '../../plan-types.js'
import { serializePlan } from '../../serialize.js'

const stopped = { status: 'stopped' }
const withTemplate = (m: ReturnType<typeof lxc>) => desired(artifact('CTTemplate', 'debian-12', 'debian-12.tar.zst'), m)
const inventoryWithTemplate = (guests: ReturnType<typeof liveCt>[]) =>
  inventory(guests, {
    volumes: [{ node: 'pve1', storage: 'local', volid: 'local:vztmpl/debian-12.tar.zst', content: 'vztmpl' }],
  })
const params = (p: Plan, i = 0): Record<string, unknown> => {
  const r = p.actions[i]?.requests.find((x) => x.call === 'updateConfig') as
    { params: Record<string, unknown> } | undefined
  return r?.params ?? {}
}
const off = (m: ReturnType<typeof vm>) => ({ ...m, spec: { ...m.spec, state: 'stopped' as const } })
const offCt = (m: ReturnType<typeof lxc>) => ({ ...m, spec: { ...m.spec, state: 'stopped' as const } })

describe('VM cpu', () => {
  it("an unset live cpu is PVE's default kvm64: declaring kvm64 plans nothing, another type is written", () => {
    const { cpu: _unset, ...noCpu } = liveVm(100, 'web', {}, stopped).config
    const live = { ...liveVm(100, 'web', {}, stopped), config: noCpu }
    expect(
      plan(desired(off(vm('web', 100, { cpu: { type: 'kvm64', cores: 2 } }))), inventory([live]), policy()).actions,
    ).toEqual([])
    const p = plan(desired(off(vm('web', 100, { cpu: { type: 'host', cores: 2 } }))), inventory([live]), policy())
    expect(params(p).cpu).toBe('host')
  })
})

describe('VM disks', () => {
  const disk = (over: object = {}) => ({
    storage: 'local-lvm',
    size: 32 * GiB,
    interface: 'scsi0',
    iothread: false,
    ...over,
  })

  it('a disk declared on another storage is a planned move (was an anomaly): move_disk with delete, its class by power', () => {
    const m = vm('web', 100, { disks: [disk({ storage: 'fast' })] })
    const p = plan(desired(off(m)), inventory([liveVm(100, 'web', {}, stopped)]), policy())
    expect(p.anomalies).toEqual([])
    expect(p.actions.map((a) => [a.id, a.type, a.disruption])).toEqual([
      ['VM/pve1/100(web)#move-disk:scsi0', 'move-disk', 'none'],
    ])
    expect(p.actions[0]?.diffs).toEqual([
      { field: 'spec.disks[0].storage', key: 'scsi0', before: 'local-lvm', after: 'fast' },
    ])
    expect(p.actions[0]?.requests).toEqual([
      {
        call: 'moveDisk',
        node: 'pve1',
        guest: 'qemu',
        vmid: 100,
        disk: 'scsi0',
        volume: 'local-lvm:vm-100-disk-0',
        storage: 'fast',
        digest: 'd100',
      },
    ])
    // a running VM's disk is mirrored online: hotplug, held back where the policy allows less
    const running = liveVm(100, 'web', {}, { status: 'running' })
    const online = plan(desired(m), inventory([running]), policy())
    expect(online.actions.map((a) => [a.type, a.disruption, a.requests.map((r) => r.call)])).toEqual([
      ['move-disk', 'hotplug', ['moveDisk']],
    ])
    const held = plan(desired(m), inventory([running]), policy({ disruption: 'none' }))
    expect(held.actions).toEqual([])
    expect(held.skips.map((k) => k.code)).toEqual(['disruption'])
    // PVE refuses `delete` for a volume a snapshot uses: a guest with snapshots is an anomaly, nothing is moved
    const snap = plan(desired(off(m)), inventory([liveVm(100, 'web', { parent: 'before' }, stopped)]), policy())
    expect(snap.actions).toEqual([])
    expect(snap.anomalies.map((a) => [a.code, a.field])).toEqual([['volume-pool', 'scsi0']])
    // a bare create form read back is no volume PVE allocated: still an anomaly
    const bare = plan(desired(off(m)), inventory([liveVm(100, 'web', { scsi0: 'local-lvm:32' }, stopped)]), policy())
    expect(bare.anomalies.map((a) => [a.code, a.field])).toEqual([['volume-pool', 'scsi0']])
  })

  it('a move comes first; the write after it grows and rewrites the moved slot (`moved`)', () => {
    const m = off(
      vm('web', 100, { memory: 1024 * 1024 ** 2, disks: [disk({ storage: 'fast', iothread: true, size: 64 * GiB })] }),
    )
    const p = plan(desired(m), inventory([liveVm(100, 'web', {}, stopped)]), policy())
    expect(p.actions.map((a) => [a.type, a.requests.map((r) => r.call)])).toEqual([
      ['move-disk', ['moveDisk']],
      ['update', ['resizeDisk', 'updateConfig']],
    ])
    const update = p.actions[1]?.requests[1] as { moved?: Record<string, string>; params: Record<string, unknown> }
    expect(update.moved).toEqual({ scsi0: 'local-lvm:vm-100-disk-0' })
    expect(update.params.scsi0).toBe('local-lvm:vm-100-disk-0,iothread=1,size=64G')
    expect(p.actions[1]?.dependsOn).toEqual([p.actions[0]?.id])
  })

  it('VMDiskIothreadDriftIsSafeInPlaceWrite: keeps vm-100-disk-0 and every unowned token; converged form does not drift', () => {
    const live = liveVm(100, 'web', { scsi0: 'local-lvm:vm-100-disk-0,backup=0,size=32G' }, { status: 'running' })
    const m = vm('web', 100, { disks: [disk({ iothread: true })] })
    const p = plan(desired(m), inventory([live]), policy())
    expect(p.actions[0]?.type).toBe('shutdown-then-update')
    expect(p.actions[0]?.disruption).toBe('reboot')
    expect(params(p).scsi0).toBe('local-lvm:vm-100-disk-0,backup=0,iothread=1,size=32G')
    const converged = liveVm(100, 'web', { scsi0: 'local-lvm:vm-100-disk-0,backup=0,iothread=1,size=32G' })
    expect(plan(desired(m), inventory([converged]), policy()).actions).toEqual([])
  })

  it('VMDiskNewSlotIsSafeCreateWrite / DiskNewSlotBareNoneIsSafeWrite', () => {
    const m = off(vm('web', 100, { disks: [disk(), disk({ interface: 'scsi1', size: 8 * GiB })] }))
    for (const scsi1 of [undefined, 'none', 'none,media=cdrom']) {
      const live = liveVm(100, 'web', scsi1 === undefined ? {} : { scsi1 }, stopped)
      const p = plan(desired(m), inventory([live]), policy())
      expect(params(p).scsi1).toBe('local-lvm:8')
      expect(p.anomalies).toEqual([])
    }
  })

  it('NewScsiSlotOnARunningVmIsHotplug', () => {
    const m = vm('web', 100, { disks: [disk(), disk({ interface: 'scsi1', size: 8 * GiB })] })
    const p = plan(desired(m), inventory([liveVm(100, 'web')]), policy())
    expect(p.actions[0]).toMatchObject({ type: 'update', disruption: 'hotplug' })
  })

  it('DiskLiveOnlyBareVolumeIsAnomalyNotWrite / DiskBareFormMatchingIsConvergedNoOp', () => {
    const m = off(vm('web', 100, { disks: [disk({ size: 8 * GiB })] }))
    const smaller = plan(desired(m), inventory([liveVm(100, 'web', { scsi0: 'local-lvm:4' }, stopped)]), policy())
    expect(smaller.actions).toEqual([])
    expect(smaller.anomalies.map((a) => a.field)).toEqual(['scsi0'])
    const same = plan(desired(m), inventory([liveVm(100, 'web', { scsi0: 'local-lvm:8' }, stopped)]), policy())
    expect(same.actions).toEqual([])
    expect(same.anomalies).toEqual([])
  })

  it('VMDriftAnomalyLiveOnlyDisk: exactly one anomaly, no scsi1 write', () => {
    const p = plan(
      desired(off(vm('web', 100))),
      inventory([liveVm(100, 'web', { scsi1: 'local-lvm:vm-100-disk-1,size=2G' }, stopped)]),
      policy(),
    )
    expect(p.actions).toEqual([])
    expect(p.anomalies).toHaveLength(1)
    expect(p.anomalies[0]?.message).toMatch(/scsi1.*not declared.*will not automatically remove/)
  })

  it('VMDriftAnomalyNoneSlotIsNotAnomaly and an IDE CD-ROM is not a live-only disk', () => {
    const p = plan(
      desired(off(vm('web', 100))),
      inventory([liveVm(100, 'web', { sata1: 'none,media=cdrom', ide2: 'local:iso/x.iso,media=cdrom' }, stopped)]),
      policy(),
    )
    expect(p.anomalies).toEqual([])
  })

  it('NonIdeCloudInitDriveIsReportedAsLiveOnlySlot', () => {
    const p = plan(
      desired(off(vm('web', 100))),
      inventory([liveVm(100, 'web', { scsi1: 'local-lvm:vm-100-cloudinit,media=cdrom' }, stopped)]),
      policy(),
    )
    expect(p.anomalies.map((a) => [a.code, a.field])).toEqual([['live-only-slot', 'scsi1']])
  })

  it('ImageSeededDiskComparesPoolOnly', () => {
    const m = off(
      vm('web', 100, { disks: [{ storage: 'local-lvm', image: 'img', interface: 'scsi0', iothread: false }] }),
    )
    const img = artifact('DiskImage', 'img', 'debian.qcow2')
    const vols = [{ node: 'pve1', storage: 'local', volid: 'local:import/debian.qcow2', content: 'import' }]
    expect(
      plan(
        desired(img, m),
        inventory([liveVm(100, 'web', { scsi0: 'local-lvm:vm-100-disk-0,size=3G' }, stopped)], { volumes: vols }),
        policy(),
      ).actions,
    ).toEqual([])
  })

  it('NeverACreateFormOverALiveVolume: every disk write on an occupied slot keeps the volume id', () => {
    const m = off(vm('web', 100, { disks: [disk({ discard: 'on', ssd: true, aio: 'native', size: 64 * GiB })] }))
    const p = plan(desired(m), inventory([liveVm(100, 'web', {}, stopped)]), policy())
    // option rewrite and growth of the same slot: one action, the resize first, the rewrite carrying the new size
    expect(p.actions.map((a) => a.type)).toEqual(['update'])
    expect(p.actions[0]?.requests).toEqual([
      { call: 'resizeDisk', node: 'pve1', guest: 'qemu', vmid: 100, disk: 'scsi0', size: '64G', digest: 'd100' },
      {
        call: 'updateConfig',
        node: 'pve1',
        guest: 'qemu',
        vmid: 100,
        params: { scsi0: 'local-lvm:vm-100-disk-0,aio=native,discard=on,size=64G,ssd=1' },
      },
    ])
  })

  it('SeveralResizesOfOneGuest: only the first in plan order carries the planned digest (each resize rewrites the config)', () => {
    const grown = [disk(), disk({ interface: 'scsi2', size: 16 * GiB }), disk({ interface: 'scsi10', size: 16 * GiB })]
    const live = liveVm(
      100,
      'web',
      { scsi2: 'local-lvm:vm-100-disk-1,size=8G', scsi10: 'local-lvm:vm-100-disk-2,size=8G' },
      { ...stopped, digest: 'd100' },
    )
    const p = plan(desired(off(vm('web', 100, { disks: grown }))), inventory([live]), policy())
    expect(p.actions.map((a) => a.id)).toEqual(['VM/pve1/100(web)#resize:scsi10', 'VM/pve1/100(web)#resize:scsi2'])
    expect(p.actions.map((a) => (a.requests[0] as { digest?: string }).digest)).toEqual(['d100', undefined])
    // with a config write, the write carries the digest and no resize does
    const written = plan(desired(off(vm('web', 100, { memory: 4096, disks: grown }))), inventory([live]), policy())
    expect(written.actions.map((a) => a.type)).toEqual(['update', 'resize', 'resize'])
    expect(written.actions.map((a) => (a.requests[0] as { digest?: string }).digest)).toEqual([
      'd100',
      undefined,
      undefined,
    ])
  })

  it('AResizeAloneIsItsOwnActionAfterTheConfigWrite', () => {
    const m = off(vm('web', 100, { memory: 4096, disks: [disk({ size: 64 * GiB })] }))
    const p = plan(desired(m), inventory([liveVm(100, 'web', {}, stopped)]), policy())
    expect(p.actions.map((a) => a.type)).toEqual(['update', 'resize'])
    expect(p.actions[1]?.requests[0]).toMatchObject({ call: 'resizeDisk', disk: 'scsi0', size: '64G' })
    expect(p.actions[1]?.requests[0]).not.toHaveProperty('digest')
    expect(p.actions[1]?.dependsOn).toEqual([p.actions[0]?.id])
  })
})

describe('VM NICs, PCI, hardware, EFI, TPM', () => {
  it('NicRewriteKeepsTheLiveMacAndUnownedTokens', () => {
    const m = off(
      vm('web', 100, { networks: [{ model: 'virtio', bridge: 'vmbr0', vlan: 20, firewall: true, slot: 'net0' }] }),
    )
    const p = plan(
      desired(m),
      inventory([liveVm(100, 'web', { net0: 'virtio=BC:24:11:AA:BB:CC,bridge=vmbr0,queues=4' }, stopped)]),
      policy(),
    )
    expect(params(p).net0).toBe('virtio=BC:24:11:AA:BB:CC,bridge=vmbr0,firewall=1,queues=4,tag=20')
  })

  it('UnpinnedMacNeverDrifts; a pinned MAC compares case-insensitively', () => {
    expect(
      plan(
        desired(off(vm('web', 100))),
        inventory([liveVm(100, 'web', { net0: 'virtio=BC:24:11:99:99:99,bridge=vmbr0' }, stopped)]),
        policy(),
      ).actions,
    ).toEqual([])
    const pinned = off(
      vm('web', 100, {
        networks: [{ model: 'virtio', bridge: 'vmbr0', mac: 'bc:24:11:99:99:99', firewall: false, slot: 'net0' }],
      }),
    )
    expect(
      plan(
        desired(pinned),
        inventory([liveVm(100, 'web', { net0: 'virtio=BC:24:11:99:99:99,bridge=vmbr0' }, stopped)]),
        policy(),
      ).actions,
    ).toEqual([])
  })

  it('VMDriftAnomalyLiveOnlyNIC', () => {
    const p = plan(
      desired(off(vm('web', 100))),
      inventory([liveVm(100, 'web', { net1: 'e1000=BC:24:11:00:00:09,bridge=vmbr1' }, stopped)]),
      policy(),
    )
    expect(p.actions).toEqual([])
    expect(p.anomalies.map((a) => [a.code, a.field])).toEqual([['live-only-slot', 'net1']])
  })

  it('PCI_LiveOnlyIsAnomaly and a declared device keeps PVE extra tokens', () => {
    const p = plan(
      desired(off(vm('web', 100))),
      inventory([liveVm(100, 'web', { hostpci0: '0000:17:00' }, stopped)]),
      policy(),
    )
    expect(p.anomalies.map((a) => a.field)).toEqual(['hostpci0'])
    const m = off(
      vm('web', 100, { hardware: { 'pci-devices': [{ slot: 'hostpci0', device: '0000:17:00', pcie: true }] } }),
    )
    const q = plan(desired(m), inventory([liveVm(100, 'web', { hostpci0: '0000:17:00,x-vga=1' }, stopped)]), policy())
    expect(params(q).hostpci0).toBe('0000:17:00,pcie=1,x-vga=1')
    expect(
      plan(desired(m), inventory([liveVm(100, 'web', { hostpci0: '0000:17:00,pcie=1,x-vga=1' }, stopped)]), policy())
        .actions,
    ).toEqual([])
  })

  it('MachineI440fxIsSentAsPcAndVersionedMachinesMatch', () => {
    const q35 = off(vm('web', 100, { hardware: { machine: 'q35' } }))
    expect(
      plan(desired(q35), inventory([liveVm(100, 'web', { machine: 'pc-q35-9.0' }, stopped)]), policy()).actions,
    ).toEqual([])
    const i440 = off(vm('web', 100, { hardware: { machine: 'i440fx' } }))
    expect(plan(desired(i440), inventory([liveVm(100, 'web', {}, stopped)]), policy()).actions).toEqual([])
    expect(
      params(plan(desired(i440), inventory([liveVm(100, 'web', { machine: 'q35' }, stopped)]), policy())).machine,
    ).toBe('pc')
  })

  it('EfiSecureBootConvergesByLiveFormRewriteKeepingMsCert; another pool is a move', () => {
    const m = off(
      vm('web', 100, {
        hardware: {
          bios: 'ovmf',
          'efi-disk': { storage: 'local-lvm', size: 4 * 1024 ** 2, template: '4m', 'secure-boot': 'enabled' },
        },
      }),
    )
    const live = liveVm(
      100,
      'web',
      { bios: 'ovmf', efidisk0: 'local-lvm:vm-100-disk-1,efitype=4m,ms-cert=2023,pre-enrolled-keys=0,size=4M' },
      stopped,
    )
    expect(params(plan(desired(m), inventory([live]), policy())).efidisk0).toBe(
      'local-lvm:vm-100-disk-1,efitype=4m,ms-cert=2023,pre-enrolled-keys=1,size=4M',
    )
    const other = liveVm(
      100,
      'web',
      { bios: 'ovmf', efidisk0: 'slow:vm-100-disk-1,efitype=4m,pre-enrolled-keys=1,size=4M' },
      stopped,
    )
    const p = plan(desired(m), inventory([other]), policy())
    expect(p.anomalies).toEqual([])
    expect(p.actions.map((a) => a.id)).toEqual(['VM/pve1/100(web)#move-disk:efidisk0'])
  })

  it('TpmVersionChangeIsAnAnomaly (PVE cannot change it)', () => {
    const m = off(vm('web', 100, { hardware: { tpm: { version: 'v2.0' } } }))
    const p = plan(
      desired(m),
      inventory([liveVm(100, 'web', { tpmstate0: 'local-lvm:vm-100-disk-2,size=4M,version=v1.2' }, stopped)]),
      policy(),
    )
    expect(p.actions).toEqual([])
    expect(p.anomalies[0]?.code).toBe('create-only-option')
    // without a declared version the existing state keeps its own: nothing to plan, no anomaly
    const unversioned = off(vm('web', 100, { hardware: { tpm: {} } }))
    const q = plan(
      desired(unversioned),
      inventory([liveVm(100, 'web', { tpmstate0: 'local-lvm:vm-100-disk-2,size=4M,version=v1.2' }, stopped)]),
      policy(),
    )
    expect([q.actions, q.anomalies]).toEqual([[], []])
  })

  it('CdromThreeState: absent block owns nothing, an ISO attaches, none detaches only when media is present', () => {
    const none = off(vm('web', 100, { hardware: { cdrom: { iso: 'none', media: 'cdrom' } } }))
    expect(
      params(
        plan(
          desired(none),
          inventory([liveVm(100, 'web', { ide2: 'local:iso/x.iso,media=cdrom' }, stopped)]),
          policy(),
        ),
      ).ide2,
    ).toBe('none,media=cdrom')
    expect(
      plan(desired(none), inventory([liveVm(100, 'web', { ide2: 'none,media=cdrom' }, stopped)]), policy()).actions,
    ).toEqual([])
    expect(
      plan(
        desired(off(vm('web', 100))),
        inventory([liveVm(100, 'web', { ide2: 'local:iso/x.iso,media=cdrom' }, stopped)]),
        policy(),
      ).actions,
    ).toEqual([])
  })

  it('OnlyTruthyOptionsAreOwned: a manifest cannot turn a live 1 off', () => {
    const m = off(vm('web', 100, { options: { onboot: false, agent: true } }))
    const p = plan(
      desired(m),
      inventory([liveVm(100, 'web', { onboot: '1', agent: 'enabled=0,fstrim_cloned_disks=1' }, stopped)]),
      policy(),
    )
    expect(params(p)).toEqual({ agent: '1,fstrim_cloned_disks=1' })
  })
})

describe('cloud-init', () => {
  it('CIDrift_CIPasswordRules: absent -> write once (as a reference); masked -> no write, never delete', () => {
    const m = off(vm('web', 100, { 'cloud-init-data': { 'ci-password-ref': 'cloud-init.passwords.default' } }))
    const a = plan(desired(m), inventory([liveVm(100, 'web', {}, stopped)]), policy())
    expect(params(a).cipassword).toEqual({ secret: { refs: ['cloud-init.passwords.default'], encoding: 'plain' } })
    expect(a.actions[0]?.diffs).toEqual([
      { field: 'spec.cloud-init-data.ci-password-ref', key: 'cipassword', after: '(sensitive)' },
    ])
    expect(
      plan(desired(m), inventory([liveVm(100, 'web', { cipassword: '**********' }, stopped)]), policy()).actions,
    ).toEqual([])
  })

  it('CloudInitSSHKeys_WireGrammar / DriftNoFlap: percent-encoded on write, compared as a decoded set', () => {
    const keys = ['ssh-ed25519 AAAAB alice@x', 'ssh-rsa AAAAC bob@y']
    const m = off(vm('web', 100, { 'cloud-init-data': { 'ssh-keys': keys } }))
    const p = plan(desired(m), inventory([liveVm(100, 'web', {}, stopped)]), policy())
    expect(params(p).sshkeys).toBe('ssh-ed25519%20AAAAB%20alice%40x%0Assh-rsa%20AAAAC%20bob%40y')
    const reordered = encodeURIComponent(`${keys[1]}\n${keys[0]}\n`)
    expect(
      plan(desired(m), inventory([liveVm(100, 'web', { sshkeys: reordered }, stopped)]), policy()).actions,
    ).toEqual([])
  })

  it('SshKeyRefsCompareThroughTheSecretsLookupButNeverLeakIntoThePlan', () => {
    const m = off(vm('web', 100, { 'cloud-init-data': { 'ssh-key-refs': ['cloud-init.ssh-keys.alice'] } }))
    const same = liveVm(
      100,
      'web',
      { sshkeys: encodeURIComponent(SECRETS['cloud-init.ssh-keys.alice'] as string) },
      stopped,
    )
    expect(plan(desired(m), inventory([same]), policy(), { secrets: lookup }).actions).toEqual([])
    const other = liveVm(100, 'web', { sshkeys: encodeURIComponent('ssh-ed25519 AAAAOTHER x@y') }, stopped)
    const p = plan(desired(m), inventory([other]), policy(), { secrets: lookup })
    expect(params(p).sshkeys).toEqual({ secret: { refs: ['cloud-init.ssh-keys.alice'], encoding: 'sshkeys' } })
    const text = serializePlan(p)
    for (const v of Object.values(SECRETS)) expect(text).not.toContain(v)
    expect(text).not.toContain('AAAAOTHER')
    expect(p.actions[0]?.diffs[0]).toMatchObject({ before: '(sensitive)', after: '(sensitive)' })
  })

  it('SshKeysStarSentinelLeavesTheValueToPVE', () => {
    const m = off(vm('web', 100, { 'cloud-init-data': { 'ssh-keys': ['*'] } }))
    expect(plan(desired(m), inventory([liveVm(100, 'web', { sshkeys: 'x' }, stopped)]), policy()).actions).toEqual([])
  })

  it('NameserversAndSearchDomainsCompareAsSets; ipconfig keeps unowned tokens', () => {
    const m = off(
      vm('web', 100, {
        'cloud-init-data': {
          nameservers: ['1.1.1.1', '9.9.9.9'],
          ipconfigs: [{ nic: 0, ip: '10.0.0.5/24', gateway: '10.0.0.1' }],
        },
      }),
    )
    const live = liveVm(
      100,
      'web',
      { nameserver: '9.9.9.9 1.1.1.1', ipconfig0: 'gw=10.0.0.1,ip=10.0.0.5/24,ip6=auto' },
      stopped,
    )
    expect(plan(desired(m), inventory([live]), policy()).actions).toEqual([])
  })

  it('Clone_DrivePoolMismatchIsAnomaly; a non-clone drive on another pool is rewritten', () => {
    const hw = { 'cloud-init': { enabled: true, storage: 'local-lvm', size: '4M' } }
    const tmpl = vm('golden', 9000, {}, 'TemplateVM')
    const clone = off(vm('web', 100, { disks: [], clone: 'golden', hardware: hw }))
    const live = liveVm(100, 'web', { ide2: 'other:vm-100-cloudinit,media=cdrom' }, stopped)
    const p = plan(
      desired(tmpl, clone),
      inventory([live, liveVm(9000, 'golden', { template: '1' }, stopped)]),
      policy(),
    )
    expect(p.anomalies.map((a) => [a.code, a.field])).toEqual([['volume-pool', 'ide2']])
    const own = off(vm('web', 100, { hardware: hw }))
    expect(params(plan(desired(own), inventory([live]), policy())).ide2).toBe('local-lvm:cloudinit')
  })
})

describe('tags', () => {
  it('TagsAreWrittenAsPVEStoresThem and any live spelling of the same set does not drift', () => {
    const m = off(vm('web', 100, { tags: ['Web', 'prod'] }))
    expect(params(plan(desired(m), inventory([liveVm(100, 'web', { tags: 'x' }, stopped)]), policy())).tags).toBe(
      'prod;proxops;web',
    )
    for (const tags of ['prod;proxops;web', 'web,prod,proxops', 'PROD web proxops']) {
      expect(plan(desired(m), inventory([liveVm(100, 'web', { tags }, stopped)]), policy()).actions).toEqual([])
    }
  })

  it('ClaimingAnUntaggedObjectIsAVisibleTagWrite', () => {
    const p = plan(desired(off(vm('web', 100))), inventory([liveVm(100, 'web', { tags: '' }, stopped)]), policy())
    expect(p.actions[0]?.diffs).toEqual([{ field: 'spec.tags', key: 'tags', before: '', after: 'proxops' }])
  })
})

describe('LXC', () => {
  const ct = (over: Partial<ReturnType<typeof lxc>['spec']> = {}) => offCt(lxc('ct', 200, over))
  const live = (over: Record<string, string> = {}) => liveCt(200, 'ct', over, stopped)
  // the container's CTTemplate is declared and present, so only the container is planned
  const desired = (m: ReturnType<typeof lxc>) => withTemplate(m)
  const inventory = (guests: ReturnType<typeof liveCt>[] = []) => inventoryWithTemplate(guests)

  it('LXCRootfsSizeDriftIsAnomaly (shrink) / LXCRootfsBareFormSizeDriftIsAnomaly / growth is a resize', () => {
    const shrink = plan(desired(ct()), inventory([live({ rootfs: 'local-lvm:vm-200-disk-0,size=16G' })]), policy())
    expect(shrink.actions).toEqual([])
    expect(shrink.anomalies.map((a) => [a.code, a.field])).toEqual([['volume-shrink', 'rootfs']])
    expect(
      plan(desired(ct()), inventory([live({ rootfs: 'local-lvm:4' })]), policy()).anomalies.map((a) => a.field),
    ).toEqual(['rootfs'])
    const grow = plan(desired(ct()), inventory([live({ rootfs: 'local-lvm:vm-200-disk-0,size=4G' })]), policy())
    expect(grow.actions[0]?.requests[0]).toMatchObject({ call: 'resizeDisk', guest: 'lxc', disk: 'rootfs', size: '8G' })
  })

  it('a root filesystem on another storage moves with move_volume; a running container is shut down and started again', () => {
    const stoppedCt = plan(desired(ct({ root: { storage: 'fast', size: 8 * GiB } })), inventory([live()]), policy())
    expect(stoppedCt.actions.map((a) => [a.type, a.disruption, a.requests.map((r) => r.call)])).toEqual([
      // a shutdown first whatever the plan read: pve-container moves no volume of a running container
      ['move-disk', 'none', ['shutdown', 'moveDisk']],
    ])
    const running = liveCt(200, 'ct', {}, { status: 'running' })
    const started = lxc('ct', 200, { root: { storage: 'fast', size: 8 * GiB } })
    const p = plan(desired(started), inventory([running]), policy())
    expect(p.actions.map((a) => [a.type, a.disruption, a.requests.map((r) => r.call)])).toEqual([
      ['move-disk', 'stop', ['shutdown', 'moveDisk', 'start']],
    ])
    expect(plan(desired(started), inventory([running]), policy({ disruption: 'reboot' })).actions).toEqual([])
  })

  it('LXCRootfsAbsentIsEmptyNewSlot', () => {
    const l = live()
    const { rootfs: _drop, ...rest } = l.config
    const p = plan(desired(ct()), inventory([{ ...l, config: rest }]), policy())
    expect(params(p).rootfs).toBe('local-lvm:8')
    expect(p.anomalies).toEqual([])
  })

  it('LXCDriftAnomalyLiveOnlyMP', () => {
    const p = plan(desired(ct()), inventory([live({ mp1: 'local-lvm:vm-200-disk-1,mp=/data,size=1G' })]), policy())
    expect(p.anomalies.map((a) => [a.code, a.field])).toEqual([['live-only-slot', 'mp1']])
  })

  it('MountPointOptionsConvergeByLiveFormRewrite; a bind at the slot is an anomaly', () => {
    const m = ct({
      'mount-points': [
        {
          storage: 'local-lvm',
          size: GiB,
          'mount-point': '/data',
          slot: 'mp0',
          options: { backup: false, 'mount-options': 'noatime' },
        },
      ],
    })
    const p = plan(desired(m), inventory([live({ mp0: 'local-lvm:vm-200-disk-1,mp=/data,size=1G' })]), policy())
    expect(params(p).mp0).toBe('local-lvm:vm-200-disk-1,mp=/data,backup=0,mountoptions=noatime,size=1G')
    const bind = plan(desired(m), inventory([live({ mp0: '/srv/data,mp=/data' })]), policy())
    expect(bind.anomalies.map((a) => a.code)).toEqual(['volume-kind'])
  })

  it('BindMountHostPathIsNeverRepointed; guest path and ro converge', () => {
    const m = ct({
      'bind-mounts': [{ 'host-path': '/tank/media/', 'mount-point': '/media', slot: 'mp0', 'read-only': true }],
    })
    const moved = plan(desired(m), inventory([live({ mp0: '/tank/other,mp=/media' })]), policy())
    expect(moved.actions).toEqual([])
    expect(moved.anomalies.map((a) => a.code)).toEqual(['bind-path'])
    expect(params(plan(desired(m), inventory([live({ mp0: '/tank/media,mp=/m' })]), policy())).mp0).toBe(
      '/tank/media,mp=/media,ro=1',
    )
  })

  it('LXCToCreateParams_KeyctlTrueBlocks / LXCDrift_KeyctlTrueLiveOffIsAnomalyNoWrite', () => {
    const m = ct({ options: { keyctl: true } })
    const create = plan(desired(m), inventory(), policy())
    expect(create.actions).toEqual([])
    expect(create.skips.map((s) => s.code)).toEqual(['invalid-desired'])
    const drift = plan(desired(m), inventory([live()]), policy())
    expect(drift.actions).toEqual([])
    expect(drift.anomalies.map((a) => a.code)).toEqual(['unsupported-option'])
  })

  it('LXCDrift_UnprivilegedTrueLiveOffIsAnomalyNoWrite', () => {
    const p = plan(desired(ct({ options: { unprivileged: true } })), inventory([live({ unprivileged: '0' })]), policy())
    expect(p.actions).toEqual([])
    expect(p.anomalies[0]?.message).toContain('recreate required')
  })

  it('NestingIsWrittenThroughFeaturesKeepingOtherFeatures', () => {
    const p = plan(desired(ct({ options: { nesting: true } })), inventory([live({ features: 'fuse=1' })]), policy())
    expect(params(p).features).toBe('fuse=1,nesting=1')
  })

  it('LxcNicRewriteKeepsHwaddrAndNameComesFirst', () => {
    const m = ct({ networks: [{ bridge: 'vmbr1', firewall: true, ip: '10.0.0.9/24', gw: '10.0.0.1', slot: 'net0' }] })
    expect(params(plan(desired(m), inventory([live()]), policy())).net0).toBe(
      'name=eth0,bridge=vmbr1,firewall=1,gw=10.0.0.1,hwaddr=BC:24:11:00:00:02,ip=10.0.0.9/24,type=veth',
    )
  })

  it('LXC memory on a running container is hotplug; hostname is immediate', () => {
    const p = plan(desired(lxc('ct', 200, { memory: 1024 })), inventory([liveCt(200, 'ct')]), policy())
    expect(p.actions[0]).toMatchObject({ type: 'update', disruption: 'hotplug' })
  })
})

describe('create-only and verbatim fields', () => {
  it('ExtraKeysAreSentOnCreateOnlyAndNeverCompared (a gap is listed)', () => {
    const m = off(vm('web', 100, { extra: { balloon: '1024', args: '-no-hpet' } }))
    const create = plan(desired(m), inventory(), policy())
    expect(create.actions[0]?.requests[0]).toMatchObject({ params: { balloon: '1024', args: '-no-hpet' } })
    const live = plan(desired(m), inventory([liveVm(100, 'web', { balloon: '2048' }, stopped)]), policy())
    expect(live.actions).toEqual([])
    expect(live.gaps).toEqual([
      { address: 'VM/pve1/100(web)', field: 'spec.extra', note: 'sent on create only; never compared' },
    ])
  })

  it('DescriptionTrailingNewlineDoesNotFlap (PVE trims it on read)', () => {
    const m = off(vm('web', 100, { 'pve-description': 'hello\nworld\n' }))
    expect(
      plan(desired(m), inventory([liveVm(100, 'web', { description: 'hello\nworld' }, stopped)]), policy()).actions,
    ).toEqual([])
  })
})

describe('digest', () => {
  it('EveryConfigUpdateCarriesThePlanTimeDigest', () => {
    const p = plan(
      desired(off(vm('web', 100, { memory: 1024 }))),
      inventory([liveVm(100, 'web', {}, { status: 'stopped', digest: 'abc' })]),
      policy(),
    )
    expect(p.actions[0]?.digest).toBe('abc')
    expect(p.actions[0]?.requests[0]).toMatchObject({ call: 'updateConfig', digest: 'abc' })
  })
})
