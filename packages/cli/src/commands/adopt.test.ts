import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { compositionLines } from './adopt.js'

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
