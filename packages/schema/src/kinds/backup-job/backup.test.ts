import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { parseManifest } from '../../manifest/parse.js'
import { calendarEventError } from './calendar-event.js'
import { requiresOf } from '../../pve-requires.js'
import { backupJobSpecSchema } from './schema.js'

const job = (spec: Record<string, unknown>, name = 'nightly') => ({
  apiVersion: 'proxops/v1alpha1',
  kind: 'backupjob',
  metadata: { name },
  spec: { schedule: 'daily', storage: 'local', selection: { vmids: [101, 100, 101] }, ...spec },
})
const issues = (doc: unknown) => {
  const r = parseManifest(doc)
  return r.ok ? [] : r.issues.map((i) => [i.code, i.path.join('.'), i.message] as const)
}

describe('BackupJob manifests (PVE::API2::Backup create_job parameters)', () => {
  it('every job option PVE accepts only with another (pve-requires.ts) has that other one required or absent', () => {
    // the spec's fields are PVE's option names: a pair whose first field exists must have its partner required
    const entries = backupJobSpecSchema.entries as Record<string, { type: string }>
    for (const endpoint of ['POST /cluster/backup', 'PUT /cluster/backup/{id}'] as const)
      for (const [param, requires] of Object.entries(requiresOf(endpoint))) {
        if (!(param in entries)) continue
        expect(entries[requires]?.type, `${param} requires ${requires}`).not.toBeUndefined()
        expect(entries[requires]?.type, `${param} requires ${requires}`).not.toBe('optional')
      }
    const noStorage = job({ 'notes-template': '{{guestname}}' })
    delete (noStorage.spec as { storage?: string }).storage
    expect(issues(noStorage).map((i) => i[1])).toEqual(['spec.storage'])
  })

  it('normalises: id from the name, vmids sorted and unique, enabled defaults to true', () => {
    const r = parseManifest(job({ schedule: ' mon..fri 02:30 ' }))
    expect(r.ok && r.manifest.kind === 'BackupJob' && r.manifest.spec).toEqual({
      id: 'nightly',
      schedule: 'mon..fri 02:30',
      storage: 'local',
      selection: { vmids: [100, 101] },
      enabled: true,
    })
  })

  it('refuses a schedule PVE cannot parse, naming the field (schedule-invalid)', () => {
    expect(issues(job({ schedule: 'every night' }))).toEqual([
      [
        'schedule-invalid',
        'spec.schedule',
        '"every night" is not a PVE calendar event: unable to parse calendar event',
      ],
    ])
  })

  it('selection: exactly one of vmids, pool, all; exclude only with all (selection-invalid)', () => {
    expect(issues(job({ selection: { vmids: [100], pool: 'prod' } }))[0]?.slice(0, 2)).toEqual([
      'selection-invalid',
      'spec.selection',
    ])
    expect(issues(job({ selection: {} }))[0]?.[0]).toBe('selection-invalid')
    expect(issues(job({ selection: { pool: 'prod', exclude: [100] } }))[0]?.slice(0, 2)).toEqual([
      'selection-invalid',
      'spec.selection.exclude',
    ])
    const all = parseManifest(job({ selection: { all: true, exclude: [105, 104] } }))
    expect(all.ok && all.manifest.spec).toMatchObject({ selection: { all: true, exclude: [104, 105] } })
  })

  it('prune-backups as validate_prune_backups: nothing positive is keep-all, keep-all with keep-N is refused', () => {
    const none = parseManifest(job({ 'prune-backups': { 'keep-last': 0 } }))
    expect(none.ok && none.manifest.spec).toMatchObject({ 'prune-backups': { 'keep-all': 1 } })
    const some = parseManifest(job({ 'prune-backups': { 'keep-last': 3, 'keep-daily': 7, 'keep-all': false } }))
    expect(some.ok && some.manifest.spec).toMatchObject({ 'prune-backups': { 'keep-daily': 7, 'keep-last': 3 } })
    expect(issues(job({ 'prune-backups': { 'keep-all': true, 'keep-last': 2 } }))[0]?.slice(0, 2)).toEqual([
      'field-invalid',
      'spec.prune-backups.keep-all',
    ])
  })

  it('notes-template as $verify_notes_template; an id PVE cannot take is refused with a hint', () => {
    expect(issues(job({ 'notes-template': '{{vmname}}' }))[0]?.[2]).toMatch(
      /^found unknown: variable 'vmname' at char 4/,
    )
    expect(issues(job({ 'notes-template': '{{guestname}}\\n{{vmid}}' }))).toEqual([])
    expect(issues(job({}, '9-nightly'))[0]?.slice(0, 2)).toEqual(['field-invalid', 'metadata.name'])
    expect(issues(job({ id: 'e4c7d3a8-uuid' }, '9-nightly'))).toEqual([])
  })
})

// the grammar is proxmox-time's: every value it accepts is a list/range/repetition of in-range components
describe('calendarEventError (property)', () => {
  const comp = (max: number) =>
    fc.oneof(
      fc.constant('*'),
      fc.integer({ min: 0, max: max - 1 }).map(String),
      fc
        .tuple(fc.integer({ min: 0, max: max - 1 }), fc.integer({ min: 0, max: max - 1 }))
        .map(([a, b]) => `${Math.min(a, b)}..${Math.max(a, b)}`),
      fc.tuple(fc.integer({ min: 0, max: max - 1 }), fc.integer({ min: 1, max: max - 1 })).map(([a, r]) => `${a}/${r}`),
    )
  const day = fc.constantFrom('mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun')
  test.prop([fc.option(day), comp(24), comp(60), fc.option(comp(60)), fc.boolean()])(
    'accepts [weekday] hour:minute[:second] [UTC]',
    (d, h, mi, s, utc) => {
      const text = `${d ? `${d} ` : ''}${h}:${mi}${s === null ? '' : `:${s}`}${utc ? ' UTC' : ''}`
      expect(calendarEventError(text)).toBeNull()
    },
  )
  test.prop([fc.integer({ min: 0, max: 23 }), fc.integer({ min: 60, max: 999 })])(
    'refuses a minute out of range after an hour',
    (h, mi) => {
      expect(calendarEventError(`${h}:${mi}`)).not.toBeNull()
    },
  )
})
