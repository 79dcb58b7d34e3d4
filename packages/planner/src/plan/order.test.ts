import { fc, test } from '@fast-check/vitest'
import { expect } from 'vitest'
import { sortDiffs } from '../kit/draft.js'
import type { FieldDiff } from '../plan-types.js'

const diff = fc.record({
  field: fc.constantFrom('spec.a', 'spec.b', 'spec.c'),
  key: fc.constantFrom('cores', 'cpu', 'memory', 'net0', 'scsi0'),
  after: fc.string({ maxLength: 3 }),
})

// sortDiffs orders in place by key, then field, and keeps the order of equal entries
test.prop([fc.array(diff, { maxLength: 40 })])(
  'sortDiffs orders like a stable sort by key, then field',
  (list: FieldDiff[]) => {
    const expected = [...list].sort((a, b) =>
      a.key < b.key ? -1 : a.key > b.key ? 1 : a.field < b.field ? -1 : a.field > b.field ? 1 : 0,
    )
    const input = [...list]
    const sorted = sortDiffs(input)
    expect(sorted).toBe(input) // in place
    expect(sorted).toEqual(expected)
    // equal keys and fields keep their order (stability): the same objects in the same positions
    sorted.forEach((d, i) => expect(d).toBe(expected[i]))
  },
)
