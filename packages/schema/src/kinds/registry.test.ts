import { describe, expect, it } from 'vitest'
import { ALLOW_EMPTY_KINDS, GUEST_KINDS, KIND_ALIASES, KIND_ROOTS, KINDS, canonicalKind, schemaKind } from '../kinds.js'
import { parseManifest } from '../manifest/parse.js'
import { clone, validManifests } from '../test-support/manifests.js'
import { SCHEMA_KINDS } from './registry.js'

const PARTS = [
  'name',
  'aliases',
  'root',
  'description',
  'spec',
  'guest',
  'allowEmpty',
  'finalise',
  'references',
  'identity',
]

describe('the kind registry (kinds/contract.ts)', () => {
  it.each(SCHEMA_KINDS.map((k) => [k.name, k] as const))('%s has every part of the contract', (_, kind) => {
    expect(Object.keys(kind).sort()).toEqual([...PARTS].sort())
    for (const part of ['finalise', 'references', 'identity'] as const) expect(typeof kind[part]).toBe('function')
    expect(kind.spec.kind).toBe('schema')
  })

  it('spellings and kind roots name one kind each', () => {
    const spellings = KINDS.flatMap((k) => KIND_ALIASES[k].map((a) => a.toLowerCase()))
    expect(new Set(spellings).size).toBe(spellings.length)
    expect(new Set(KIND_ROOTS).size).toBe(KINDS.length)
    for (const k of KINDS) for (const a of KIND_ALIASES[k]) expect(canonicalKind(a.toUpperCase())).toBe(k)
  })

  it('the derived tables follow the entries', () => {
    expect(KINDS).toEqual(SCHEMA_KINDS.map((k) => k.name))
    expect(GUEST_KINDS).toEqual(['VM', 'TemplateVM', 'LXC', 'TemplateCT'])
    expect(ALLOW_EMPTY_KINDS).toEqual([
      'VM',
      'TemplateVM',
      'LXC',
      'TemplateCT',
      'BackupJob',
      'Pool',
      'Role',
      'Group',
      'User',
      'Token',
      'ACL',
      'Storage',
    ])
  })

  it.each(KINDS)('a valid %s declares at least one PVE object, and its references name registered kinds', (kind) => {
    const r = parseManifest(clone(validManifests[kind]))
    expect(r.ok).toBe(true)
    if (!r.ok) return
    const entry = schemaKind(kind)
    expect(entry.identity(r.manifest).length).toBeGreaterThan(0)
    for (const ref of entry.references(r.manifest)) expect(KINDS).toContain(ref.kind)
  })
})
