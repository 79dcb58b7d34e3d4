import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { compositionLines, maskedPaths, structuralMasks } from './adopt.js'

describe('composition lines', () => {
  const entries = ['- ../../vm/lab/a.yaml', '- ../../vm/lab/b.yaml']
  it.each([
    ['resources:\n  - ../../vm/lab/web.yaml\n', 'append these lines to'],
    ['# comment\nresources:\n    # guests\n    - ../../vm/lab/web.yaml\n\n', 'append these lines to'],
    ['resources: []\n', 'write this as'],
    [undefined, 'write this as'],
  ])('pasted as printed, the file lists the old and the new entries (%j)', (current, how) => {
    const paste = compositionLines(current, entries)
    expect(paste.how).toBe(how)
    const text = how === 'write this as' ? `${paste.lines.join('\n')}\n` : `${current}${paste.lines.join('\n')}\n`
    const listed = (parse(text) as { resources: string[] }).resources
    expect(listed.slice(-2)).toEqual(['../../vm/lab/a.yaml', '../../vm/lab/b.yaml'])
    if (current?.includes('web.yaml')) expect(listed[0]).toBe('../../vm/lab/web.yaml')
  })
  it('says where to add them when the list is not the end of the file', () => {
    const paste = compositionLines('resources:\n  - ../../vm/lab/web.yaml\nother: 1\n', entries)
    expect(paste).toEqual({ how: 'add these entries under resources: in', lines: entries.map((e) => `  ${e}`) })
  })
})

describe('masked values in adopted files', () => {
  const before = {
    apiVersion: 'proxops/v1alpha1',
    metadata: { name: 'web-01' },
    spec: {
      'pve-description': 'root pw hunter2-CANARY',
      tags: ['a', 'b-CANARY'],
      firewall: { rules: [{ comment: 'x CANARY' }] },
    },
  }
  const after = {
    apiVersion: 'proxops/v1alpha1',
    metadata: { name: 'web-01' },
    spec: {
      'pve-description': 'root pw (sensitive)',
      tags: ['a', 'b-(sensitive)'],
      firewall: { rules: [{ comment: 'x (sensitive)' }] },
    },
  }
  it('finds every string masking changed, by its path', () => {
    expect(maskedPaths(before, after)).toEqual([
      'spec.pve-description',
      'spec.tags[1]',
      'spec.firewall.rules[0].comment',
    ])
  })
  it('allows a mask only in free text (descriptions and comments)', () => {
    expect(structuralMasks(maskedPaths(before, after))).toEqual(['spec.tags[1]'])
    expect(structuralMasks(['apiVersion', 'metadata.name', 'spec.node'])).toEqual([
      'apiVersion',
      'metadata.name',
      'spec.node',
    ])
  })
})
