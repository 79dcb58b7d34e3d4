import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { optionType, qemuVolumeKeysInOrder, type GuestType } from './options.js'

/**
 * The model's hand-written option table must agree with the official schema on the
 * JSON type of every config option it knows. The schema is read at test time (never copied into the repo);
 * without it the check is skipped.
 */
const apidocPath =
  process.env.PROXOPS_PVE_APIDOC ?? fileURLToPath(new URL('../../../../../shared/pve-api/apidoc.json', import.meta.url))
const haveApidoc = existsSync(apidocPath)

interface Node {
  path: string
  info?: Record<string, { parameters?: { properties?: Record<string, { type?: string }> } }>
  children?: Node[]
}

function createParams(path: string): Record<string, { type?: string }> {
  const doc = JSON.parse(readFileSync(apidocPath, 'utf8')) as Node[]
  const stack = [...doc]
  while (stack.length > 0) {
    const n = stack.pop() as Node
    if (n.path === path) return n.info?.POST?.parameters?.properties ?? {}
    stack.push(...(n.children ?? []))
  }
  return {}
}

describe.skipIf(!haveApidoc)('option types agree with apidoc.json', () => {
  for (const [type, path] of [
    ['qemu', '/nodes/{node}/qemu'],
    ['lxc', '/nodes/{node}/lxc'],
  ] as [GuestType, string][]) {
    it(`${type} create parameters`, () => {
      const props = createParams(path)
      const mismatches: string[] = []
      for (const [name, schema] of Object.entries(props)) {
        const key = name.replace('[n]', '0')
        const ours = optionType(type, key)
        if (ours === undefined) continue // API-only parameters (storage, start, ...) are not config options
        if (schema.type !== ours) mismatches.push(`${key}: schema ${schema.type}, model ${ours}`)
      }
      expect(mismatches).toEqual([])
      expect(Object.keys(props).length).toBeGreaterThan(30)
    })
  }
})

describe('qemuVolumeKeysInOrder (qemu-server valid_drive_names, as foreach_volume walks a config)', () => {
  it('orders the drives by bus (ide, scsi, virtio, sata), then by index, efidisk0 and tpmstate0 last; others out', () => {
    const keys = ['tpmstate0', 'sata0', 'scsi10', 'net0', 'scsi2', 'efidisk0', 'unused0', 'virtio0', 'ide2']
    expect(qemuVolumeKeysInOrder(keys)).toEqual([
      'ide2',
      'scsi2',
      'scsi10',
      'virtio0',
      'sata0',
      'efidisk0',
      'tpmstate0',
    ])
  })
})
