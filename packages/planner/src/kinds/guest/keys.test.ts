/** Unmanaged live keys: every key no field owns is listed in the plan's gaps; executing keys are called out. */
import { describe, expect, it } from 'vitest'
import { artifact, desired, inventory, liveCt, liveVm, lxc, policy, vm } from '../../fixtures.test.helpers.js'
import { plan } from '../../plan/plan.js'
import { defaultBootDevices, isDerivedBoot } from './drives.js'
import { executes, isBookkeeping } from './keys.js'

const stopped = { status: 'stopped' }

describe('unmanaged live keys', () => {
  it('UnmanagedQemuKeysAreListed (hookscript, args and host devices called out; PVE bookkeeping left out)', () => {
    const live = liveVm(
      100,
      'web',
      {
        hookscript: 'local:snippets/hook.pl',
        args: '-no-hpet',
        usb0: 'host=1234:5678',
        serial1: '/dev/ttyS1',
        ostype: 'l26',
        onboot: '1',
        balloon: '0',
        smbios1: 'uuid=7b1c3a3e-0000-4000-8000-000000000001',
        vmgenid: '7b1c3a3e-0000-4000-8000-000000000002',
        meta: 'creation-qemu=9.0.2,ctime=1700000000',
      },
      stopped,
    )
    const p = plan(desired(vm('web', 100, { state: 'stopped' })), inventory([live]), policy())
    expect(p.actions).toEqual([])
    expect(p.gaps.map((g) => [g.field, g.note.startsWith('unmanaged, changes what the guest executes')])).toEqual([
      ['args', true],
      ['balloon', false],
      ['hookscript', true],
      ['onboot', false],
      ['ostype', false],
      ['serial1', true],
      ['usb0', true],
    ])
    expect(p.gaps.every((g) => g.address === 'VM/pve1/100(web)' && g.unmanaged === true)).toBe(true)
    // the structured form status reads: what each executing key does, absent for the ordinary ones
    expect(p.gaps.filter((g) => g.executes !== undefined).map((g) => [g.field, g.executes])).toEqual([
      ['args', 'raw arguments added to the QEMU command line'],
      ['hookscript', 'a hook script the host runs at every power change'],
      ['serial1', 'a host device or socket connected to the guest'],
      ['usb0', 'a host device passed to the guest'],
    ])
    // values are never copied into the plan (a hook path or raw argument may carry anything)
    expect(JSON.stringify(p.gaps)).not.toContain('-no-hpet')
  })

  it('a clone does not list the keys its declared template declares; a key neither declares still is', () => {
    const hardware = { bios: 'ovmf', machine: 'q35', serial0: 'socket' } as const
    const tmpl = vm('golden', 9000, { hardware, options: { agent: true } }, 'TemplateVM')
    const clone = vm('web', 100, { state: 'stopped', disks: [], clone: 'golden' })
    const inherited = { bios: 'ovmf', machine: 'q35', serial0: 'socket', agent: '1' }
    const live = liveVm(
      100,
      'web',
      { ...inherited, scsi0: 'local-lvm:vm-100-disk-0,size=8G', args: '-no-hpet' },
      stopped,
    )
    const golden = liveVm(9000, 'golden', { ...inherited, template: '1' }, stopped)
    const gaps = (d: ReturnType<typeof desired>) =>
      plan(d, inventory([live, golden]), policy())
        .gaps.filter((g) => g.address === 'VM/pve1/100(web)')
        .map((g) => g.field)
    expect(gaps(desired(tmpl, clone))).toEqual(['args'])
    // a template that does not declare them: the same keys are nobody's, all listed
    expect(gaps(desired(vm('golden', 9000, {}, 'TemplateVM'), clone))).toEqual([
      'agent',
      'args',
      'bios',
      'machine',
      'serial0',
    ])
  })

  it('a key the manifest owns is not unmanaged; smbios1 with more than its uuid is', () => {
    const m = vm('web', 100, { state: 'stopped', options: { onboot: true } })
    const live = liveVm(100, 'web', { onboot: '1', smbios1: 'uuid=1,manufacturer=acme' }, stopped)
    expect(plan(desired(m), inventory([live]), policy()).gaps.map((g) => g.field)).toEqual(['smbios1'])
  })

  it('UnmanagedLxcKeysAreListed (devN, hookscript and raw lxc lines called out as gaps, not errors)', () => {
    const m = lxc('cache', 200, { state: 'stopped' })
    const live = liveCt(
      200,
      'cache',
      {
        dev0: '/dev/dri/renderD128,gid=104',
        hookscript: 'local:snippets/ct-hook.sh',
        lxc: 'lxc.cgroup2.devices.allow: c 226:* rwm',
        features: 'nesting=1',
        arch: 'amd64',
        ostype: 'debian',
      },
      stopped,
    )
    const p = plan(
      desired(artifact('CTTemplate', 'debian-12', 'debian-12.tar.zst'), m),
      inventory([live], {
        volumes: [{ node: 'pve1', storage: 'local', volid: 'local:vztmpl/debian-12.tar.zst', content: 'vztmpl' }],
      }),
      policy(),
    )
    expect(p.actions).toEqual([])
    expect(p.anomalies).toEqual([])
    expect(p.gaps.map((g) => g.field)).toEqual(['dev0', 'features', 'hookscript', 'lxc'])
    expect(p.gaps.filter((g) => g.executes !== undefined).map((g) => g.field)).toEqual(['dev0', 'hookscript', 'lxc'])
    expect(p.gaps.find((g) => g.field === 'lxc')?.note).toContain('raw lxc.* lines')
  })

  it('the executing keys and PVE bookkeeping per guest kind', () => {
    expect(executes('qemu', 'hostpci3')).toBeDefined()
    expect(executes('qemu', 'cicustom')).toBeDefined()
    expect(executes('qemu', 'memory')).toBeUndefined()
    expect(executes('lxc', 'dev12')).toBeDefined()
    expect(executes('lxc', 'args')).toBeUndefined()
    expect(isBookkeeping('qemu', 'smbios1', { smbios1: 'uuid=abc' })).toBe(true)
    expect(isBookkeeping('qemu', 'smbios1', { smbios1: 'uuid=abc,serial=x' })).toBe(false)
    expect(isBookkeeping('lxc', 'arch', { arch: 'amd64' })).toBe(true)
    expect(isBookkeeping('qemu', 'ostype', { ostype: 'l26' })).toBe(false)
  })

  // qemu-server: create_vm writes get_default_bootdevices when no boot was given; update_vm_api appends CD
  // drives added later (not cloud-init drives)
  it('DerivedBootOrderIsBookkeeping (get_default_bootdevices, CD drives appended by update_vm_api)', () => {
    const disk = 'local-lvm:vm-100-disk-0,size=8G'
    const cd = 'local:iso/debian.iso,media=cdrom'
    const ci = 'local-lvm:vm-100-cloudinit,media=cdrom'
    const base = { scsi1: disk, virtio0: disk, net1: 'virtio=BC:24:11:00:00:01,bridge=vmbr0' }
    // ide before scsi before virtio before sata, the first CD drive (a cloud-init drive counts), the first NIC
    expect(defaultBootDevices({ ...base, sata0: disk, ide2: ci, ide3: cd })).toEqual(['scsi1', 'ide2', 'net1'])
    expect(defaultBootDevices({ ide0: 'none,media=cdrom' })).toEqual(['ide0'])
    const derived = (boot: string, extra: Record<string, string> = {}) =>
      isDerivedBoot({ ...base, ...extra, boot }) && isBookkeeping('qemu', 'boot', { ...base, ...extra, boot })
    expect(derived('order=scsi1;net1')).toBe(true)
    expect(derived('order=scsi1;ide2;net1', { ide2: cd })).toBe(true)
    expect(derived('order=scsi1;net1;ide2', { ide2: cd })).toBe(true)
    expect(derived('order=scsi1;net1;ide2;ide3', { ide2: cd, ide3: cd })).toBe(true)
    expect(derived('')).toBe(true)
    // chosen by someone: reported when nobody declares it
    expect(derived('order=net1;scsi1')).toBe(false)
    expect(derived('order=scsi1')).toBe(false)
    expect(derived('order=virtio0;net1')).toBe(false)
    expect(derived('order=scsi1;net1;ide2', { ide2: ci })).toBe(false)
    expect(derived('cdn')).toBe(false)
    expect(derived('order=scsi1;net1,legacy=cdn')).toBe(false)
  })

  it('a VM whose boot order was chosen lists it; the derived one is not listed', () => {
    const cfg = { scsi0: 'local-lvm:vm-100-disk-0,size=8G', net0: 'virtio=BC:24:11:00:00:01,bridge=vmbr0' }
    const fields = (boot: string) =>
      plan(
        desired(vm('web', 100, { state: 'stopped' })),
        inventory([liveVm(100, 'web', { ...cfg, boot }, stopped)]),
        policy(),
      )
        .gaps.map((g) => g.field)
        .filter((f) => f === 'boot')
    expect(fields('order=scsi0;net0')).toEqual([])
    expect(fields('order=net0;scsi0')).toEqual(['boot'])
  })
})
