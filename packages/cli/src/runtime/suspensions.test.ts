import { describe, expect, it } from 'vitest'
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { addSuspension, readSuspensions, removeSuspension, suspensionHolds, SUSPENSIONS_FILE } from './suspensions.js'
import { parseObjectRef } from './targets.js'

const tmp = (): string => mkdtempSync(path.join(os.tmpdir(), 'proxops-suspend-'))

describe('suspensions in the data dir', () => {
  it('adds (replacing one of the same scope), removes, survives a new reader, and the file is private', () => {
    const dir = tmp()
    expect(readSuspensions(dir)).toEqual([])
    addSuspension(dir, { cluster: 'lab', object: 'VM/db', reason: 'one', since: '2026-01-01T00:00:00.000Z' })
    addSuspension(dir, { cluster: 'lab', reason: 'whole', since: '2026-01-01T00:00:01.000Z' })
    addSuspension(dir, { cluster: 'lab', object: 'VM/db', reason: 'two', since: '2026-01-01T00:00:02.000Z' })
    expect(readSuspensions(dir).map((s) => `${s.object ?? '*'}:${s.reason}`)).toEqual(['*:whole', 'VM/db:two'])
    expect(statSync(path.join(dir, SUSPENSIONS_FILE)).mode & 0o777).toBe(0o600)
    expect(removeSuspension(dir, { cluster: 'lab', object: 'VM/db' })).toBe(true)
    expect(removeSuspension(dir, { cluster: 'lab', object: 'VM/db' })).toBe(false)
    expect(readSuspensions(dir).map((s) => s.reason)).toEqual(['whole'])
    expect(JSON.parse(readFileSync(path.join(dir, SUSPENSIONS_FILE), 'utf8'))).toMatchObject({ format_version: 1 })
  })

  it('a damaged file is an error naming it, never "nothing suspended"', () => {
    const dir = tmp()
    writeFileSync(path.join(dir, SUSPENSIONS_FILE), '{"format_version":1,"suspensions":[{"cluster":"lab"}]}')
    expect(() => readSuspensions(dir)).toThrow(/suspensions\.json is not a ProxOps suspensions file.*fix or remove it/)
    writeFileSync(path.join(dir, SUSPENSIONS_FILE), 'not json')
    expect(() => readSuspensions(dir)).toThrow(/nothing is written while it is damaged/)
  })

  it("holds: the cluster's own suspensions only, with since, by and why", () => {
    const holds = suspensionHolds(
      'lab',
      [
        { cluster: 'lab', object: 'VM/db', reason: 'incident', since: 'T', by: 'ops' },
        { cluster: 'edge', reason: 'other cluster', since: 'T' },
      ],
      [],
      [{ kind: 'VM', name: 'db', addresses: ['VM/pve1/100(db)'] }],
      (t) => parseObjectRef(t, 'suspension'),
    )
    expect(holds).toEqual([
      {
        target: { kind: 'VM', name: 'db', addresses: ['VM/pve1/100(db)'] },
        code: 'suspended',
        message: 'suspended since T by ops: incident',
      },
    ])
  })
})
