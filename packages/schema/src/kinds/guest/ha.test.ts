import { describe, expect, it } from 'vitest'
import { parseManifest } from '../../manifest/parse.js'
import { clone, validManifests } from '../../test-support/manifests.js'

const parse = (kind: 'VM' | 'LXC' | 'TemplateVM', spec: Record<string, unknown>) => {
  const doc = clone(validManifests[kind]) as { spec: Record<string, unknown> }
  Object.assign(doc.spec, spec)
  return parseManifest(doc)
}
const problems = (kind: 'VM' | 'LXC' | 'TemplateVM', spec: Record<string, unknown>) => {
  const r = parse(kind, spec)
  return r.ok ? [] : r.issues.map((i) => `${i.path.join('.')}: ${i.message}`)
}

describe('spec.ha', () => {
  it('defaults max_restart and max_relocate to PVE defaults and strict to false', () => {
    const r = parse('VM', { ha: {} })
    expect(r.ok && r.manifest.kind === 'VM' && r.manifest.spec.ha).toEqual({
      max_restart: 1,
      max_relocate: 1,
      strict: false,
    })
    const l = parse('LXC', { ha: { state: 'ignored', nodes: { pve1: 2, pve2: 1 } } })
    expect(l.ok && l.manifest.kind === 'LXC' && l.manifest.spec.ha?.nodes).toEqual({ pve1: 2, pve2: 1 })
  })

  it('the requested state agrees with spec.state', () => {
    expect(problems('VM', { state: 'started', ha: { state: 'stopped' } })).toEqual([
      'spec.ha.state: ha.state stopped needs spec.state: stopped',
    ])
    expect(problems('VM', { state: 'stopped', ha: { state: 'started' } })).toEqual([
      'spec.ha.state: ha.state started needs spec.state: started',
    ])
    expect(problems('VM', { state: 'stopped', ha: { state: 'disabled' } })).toEqual([])
    expect(problems('VM', { state: 'started', ha: { state: 'bogus' } })[0]).toMatch(/^spec\.ha\.state: must be one of/)
  })

  it('the node preference names spec.node among its highest priorities', () => {
    const node = (validManifests.VM as { spec: { node: string } }).spec.node
    expect(problems('VM', { ha: { nodes: { [node]: 1, other: 2 } } })).toEqual([
      `spec.ha.nodes: spec.node ${node} must be listed with the highest priority (2); HA would move the guest to the node it prefers`,
    ])
    expect(problems('VM', { ha: { nodes: { [node]: 2, other: 2 } } })).toEqual([])
    expect(problems('VM', { ha: { nodes: {} } })).toEqual(['spec.ha.nodes: name at least one node, or remove ha.nodes'])
    expect(problems('VM', { ha: { strict: true } })).toEqual(['spec.ha.strict: strict needs ha.nodes'])
    expect(problems('VM', { ha: { nodes: { [node]: 1001 } } })[0]).toMatch(
      /^spec\.ha\.nodes\..+: must be between 0 and 1000/,
    )
  })

  it('templates cannot be HA resources; unknown keys are named', () => {
    expect(problems('TemplateVM', { ha: {} })).toEqual([
      'spec.ha: a TemplateVM cannot be an HA resource: remove spec.ha',
    ])
    expect(problems('VM', { ha: { group: 'g1' } })[0]).toMatch(
      /^spec\.ha\.group: unknown field "spec\.ha\.group" \(known: state, max_restart/,
    )
  })
})
