/** The field table: each row's key is built once, from the row, for create, compare and the disruption class. */
import { describe, expect, it } from 'vitest'
import { artifact, desired, inventory, lxc, policy, vm } from '../fixtures.test.helpers.js'
import { classify } from './disruption.js'
import { plan } from './plan.js'
import { adoptBlock, FIELD_TABLE, fieldPath } from './table.js'

const full = vm('web', 100, {
  hardware: { sockets: 2, numa: true, bios: 'ovmf', serial0: 'socket' },
  options: { onboot: true, protection: true, acpi: true, tablet: true, startup: 'order=1' },
  'cloud-init-data': { 'ci-user': 'admin', nameservers: ['1.1.1.1'], 'search-domains': ['lan'] },
})
const fullCt = lxc('cache', 200, {
  swap: 256,
  dns: { hostname: 'cache', nameservers: ['1.1.1.1'], domain: 'lan' },
  options: { protection: false, onboot: true, console: true, startup: 'order=2' },
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
      for (const r of FIELD_TABLE[type]) {
        expect(params[r.key], `${type} ${r.key}`).toBeDefined()
        expect(action.diffs.filter((d) => d.key === r.key).map((d) => d.field)).toEqual([fieldPath(r)])
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
    const take = (k: string) => live[k]
    expect(adoptBlock('qemu', 'options', take)).toEqual({ protection: true, startup: 'order=3' })
    expect(adoptBlock('qemu', 'memory', take)).toEqual({ memory: '1536MiB' })
    expect(adoptBlock('qemu', 'cpu', () => undefined)).toEqual({ cores: 1 })
    expect(adoptBlock('lxc', 'options', take)).toEqual({ onboot: false, protection: true, startup: 'order=3' })
  })
})
