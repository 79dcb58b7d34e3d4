/** The field table: each row's key is built once, from the row, for create, compare and the disruption class. */
import { describe, expect, it } from 'vitest'
import { artifact, desired, inventory, liveCt, liveVm, lxc, policy, vm } from '../../fixtures.test.helpers.js'
import { classify } from './disruption.js'
import { plan } from '../../plan/plan.js'
import { adoptBlock, tableRows } from './table.js'

const full = vm('web', 100, {
  'pve-description': 'a web server',
  hardware: { sockets: 2, numa: true, bios: 'ovmf', serial0: 'socket', machine: 'q35', display: 'std' },
  options: {
    onboot: true,
    protection: true,
    acpi: true,
    tablet: true,
    startup: 'order=1',
    agent: true,
    hotplug: ['disk', 'network'],
  },
  'cloud-init-data': { 'ci-user': 'admin', nameservers: ['1.1.1.1'], 'search-domains': ['lan'] },
})
const fullCt = lxc('cache', 200, {
  'pve-description': 'a cache',
  swap: 256,
  arch: 'arm64',
  dns: { hostname: 'cache', nameservers: ['1.1.1.1'], domain: 'lan' },
  options: { protection: false, onboot: true, console: true, startup: 'order=2', unprivileged: true },
})

describe('field table', () => {
  it('every row of a fully declared guest is sent once on create, under its manifest path', () => {
    const p = plan(
      desired(artifact('CTTemplate', 'debian-12', 'debian-12.tar.zst'), full, fullCt),
      inventory([]),
      policy(),
    )
    for (const [type, m] of [
      ['qemu', full],
      ['lxc', fullCt],
    ] as const) {
      const action = p.actions.find((a) => a.vmid === m.spec.vmid)!
      const create = action.requests[0]
      if (create?.call !== 'createGuest') throw new Error(`${type}: not a create`)
      const params: Record<string, unknown> = create.params
      for (const r of tableRows(type)) {
        expect(params[r.key], `${type} ${r.key}`).toBeDefined()
        expect(action.diffs.filter((d) => d.key === r.key).map((d) => d.field)).toEqual([r.field])
      }
    }
  })

  it('rows that PVE applies at once are class none on a running guest; the others follow the kind rule', () => {
    const running = { running: true, hotplug: new Set<string>(), numa: false }
    expect(classify('onboot', false, { type: 'qemu', ...running })).toBe('none')
    expect(classify('nameserver', false, { type: 'qemu', ...running })).toBe('none')
    expect(classify('nameserver', false, { type: 'lxc', ...running })).toBe('reboot')
    expect(classify('cores', false, { type: 'lxc', ...running })).toBe('hotplug')
    expect(classify('acpi', false, { type: 'qemu', ...running })).toBe('reboot')
  })

  it('adopt reads a block back through the rows (PVE defaults for absent keys; truthy-only flags only when on)', () => {
    const live: Record<string, string> = { onboot: '0', protection: '1', startup: 'order=3', memory: 'current=1536' }
    const reader = { take: (k: string) => live[k], gap: () => {} }
    expect(adoptBlock('qemu', 'options', reader)).toEqual({ protection: true, startup: 'order=3' })
    expect(adoptBlock('qemu', 'memory', reader)).toEqual({ memory: '1536MiB' })
    expect(adoptBlock('qemu', 'cpu', { take: () => undefined, gap: () => {} })).toEqual({ cores: 1, type: 'kvm64' })
    expect(adoptBlock('lxc', 'options', reader)).toEqual({ onboot: false, protection: true, startup: 'order=3' })
  })

  it('adopt records what a row cannot say as gaps: tokens beside the head, pinned machine versions, unknown values', () => {
    const live: Record<string, string> = {
      vga: 'std,memory=32',
      agent: 'enabled=1,fstrim_cloned_disks=1',
      machine: 'pc-q35-8.1',
      hotplug: '1',
      arch: 'riscv64',
    }
    const gaps: string[] = []
    const reader = {
      take: (k: string) => live[k],
      gap: (field: string, value: string, note: string) => gaps.push(`${field}=${value}: ${note}`),
    }
    expect(adoptBlock('qemu', 'hardware', reader)).toEqual({ machine: 'q35', display: 'std' })
    // hotplug 1 is qemu-server's default set (pve-hotplug-features)
    expect(adoptBlock('qemu', 'options', reader)).toEqual({ agent: true, hotplug: ['network', 'disk', 'usb'] })
    expect(adoptBlock('lxc', 'arch', reader)).toEqual({})
    expect(gaps).toEqual([
      'machine=pc-q35-8.1: pinned machine version is not modelled (adopted as the family)',
      'vga.memory=32: option not modelled',
      'agent.fstrim_cloned_disks=1: option not modelled',
      'arch=riscv64: not modelled (amd64, i686, arm64)',
    ])
  })

  it('adopt reports hotplug 0 (no hotplug at all) as a gap: a manifest owns only a non-empty list', () => {
    const gaps: string[] = []
    const reader = {
      take: (k: string) => (k === 'hotplug' ? '0' : undefined),
      gap: (field: string, value: string, note: string) => gaps.push(`${field}=${value}: ${note}`),
    }
    expect(adoptBlock('qemu', 'options', reader).hotplug).toBeUndefined()
    expect(gaps).toEqual(['hotplug=0: an empty set is not modelled (only a non-empty list is owned)'])
  })

  it("a create-only row is an anomaly on drift, never a write; a headed flag keeps PVE's other tokens", () => {
    const ct = lxc('cache', 200, { options: { unprivileged: true } })
    const p = plan(
      desired(artifact('CTTemplate', 'debian-12', 'debian-12.tar.zst'), ct),
      inventory([liveCt(200, 'cache', { unprivileged: '0' })]),
      policy(),
    )
    expect(p.actions.filter((a) => a.vmid === 200)).toEqual([])
    expect(p.anomalies.map((a) => [a.code, a.field])).toEqual([['create-only-option', 'unprivileged']])
    const v = vm('web', 100, { options: { agent: true } })
    const q = plan(desired(v), inventory([liveVm(100, 'web', { agent: '0,fstrim_cloned_disks=1' })]), policy())
    expect(q.actions.flatMap((a) => a.requests).slice(0, 1)).toMatchObject([
      { call: 'updateConfig', params: { agent: '1,fstrim_cloned_disks=1' } },
    ])
  })

  it('cpu: the head is the type, hidden is spec.options.hidden, flags are read by adopt and not sent (a gap)', () => {
    const v = vm('web', 100, { cpu: { type: 'host', cores: 2, flags: ['+aes'] }, options: { hidden: true } })
    const q = plan(desired(v), inventory([liveVm(100, 'web', { cpu: 'host,flags=+aes' })]), policy())
    expect(q.actions.flatMap((a) => a.requests).slice(0, 1)).toMatchObject([
      { call: 'updateConfig', params: { cpu: 'host,flags=+aes,hidden=1' } },
    ])
    expect(q.gaps.filter((g) => g.field === 'spec.cpu.flags').map((g) => g.note)).toEqual([
      'parsed, not sent (reference behaviour)',
    ])
    const created = plan(desired(v), inventory([]), policy()).actions[0]!.requests[0]
    expect(created).toMatchObject({ call: 'createGuest', params: { cpu: 'host,hidden=1' } })
    const live: Record<string, string> = { cpu: 'host,hidden=1,flags=+aes;-pcid,phys-bits=host' }
    const gaps: string[] = []
    const reader = { take: (k: string) => live[k], gap: (f: string, value: string) => gaps.push(`${f}=${value}`) }
    expect(adoptBlock('qemu', 'cpu', reader)).toEqual({ cores: 1, type: 'host', flags: ['+aes', '-pcid'] })
    expect(adoptBlock('qemu', 'options', reader)).toEqual({ hidden: true })
    expect(gaps).toEqual(['cpu.phys-bits=host'])
  })
})
