/**
 * Backup jobs over raw HTTP, each test named after the PVE function it follows: pve-manager PVE::API2::Backup
 * (create_job, read_job, update_job, delete_job, index, $schedule_param_check), PVE::VZDump
 * verify_vzdump_parameters / $verify_notes_template, pve-storage validate_prune_backups and the
 * pve-calendar-event format (pve-common PVE::CalendarEvent over proxmox-time's parser).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apidocForTests } from '../apidoc/test-data.js'
import { startSimulator, type Simulator } from '../index.js'
import { form, raw, type RawResponse } from './test-support/raw.js'

let sim: Simulator
const req = (method: string, path: string, params?: Record<string, string>): Promise<RawResponse> => {
  const headers = { Authorization: sim.token.header }
  if (!params) return raw(sim, method, `/api2/json${path}`, { headers })
  const f = form(params)
  return raw(sim, method, `/api2/json${path}`, { headers: { ...headers, ...f.headers }, body: f.body })
}
const data = <T>(r: RawResponse): T => (r.json as { data: T }).data
const failure = (r: RawResponse): [number, string, unknown] => {
  const j = r.json as { message: string; errors?: unknown }
  return [r.status, j.message, j.errors]
}

const schema = apidocForTests()

beforeAll(async () => {
  sim = await startSimulator({ authFailureDelayMs: 0, log: () => {} })
})
afterAll(async () => {
  await sim.close()
})

describe('PVE::API2::Backup create_job / read_job / index', () => {
  it('create_job stores the job; read_job returns it with id, type, enabled=1 and prune-backups as an object', async () => {
    const r = await req('POST', '/cluster/backup', {
      id: 'nightly',
      schedule: 'mon..fri 02:30',
      storage: 'local',
      vmid: '100,101',
      mode: 'snapshot',
      compress: 'zstd',
      'prune-backups': 'keep-last=3,keep-daily=7',
      'notes-template': '{{guestname}} on {{node}}',
      comment: 'proxops',
    })
    expect([r.status, data(r)]).toEqual([200, null])
    const job = data<Record<string, unknown>>(await req('GET', '/cluster/backup/nightly'))
    expect(job).toEqual({
      id: 'nightly',
      type: 'vzdump',
      enabled: 1,
      schedule: 'mon..fri 02:30',
      storage: 'local',
      vmid: '100,101',
      mode: 'snapshot',
      compress: 'zstd',
      'prune-backups': { 'keep-daily': '7', 'keep-last': '3' },
      'notes-template': '{{guestname}} on {{node}}',
      comment: 'proxops',
    })
    // the index adds next-run (checked below); read_job does not
    expect(data<Record<string, unknown>[]>(await req('GET', '/cluster/backup'))).toEqual([
      { ...job, 'next-run': expect.any(Number) },
    ])
  })

  it('create_job without an id generates a uuid; a duplicate id dies; read_job of a missing id is a 400', async () => {
    expect((await req('POST', '/cluster/backup', { schedule: 'daily', all: '1' })).status).toBe(200)
    const ids = data<{ id: string }[]>(await req('GET', '/cluster/backup')).map((j) => j.id)
    expect(ids[1]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(failure(await req('POST', '/cluster/backup', { id: 'nightly', schedule: 'daily', all: '1' }))).toEqual([
      500,
      "Job 'nightly' already exists\n",
      undefined,
    ])
    expect(failure(await req('GET', '/cluster/backup/nope'))).toEqual([
      400,
      'Parameter verification failed.\n',
      { id: "No such job 'nope'" },
    ])
    await req('DELETE', `/cluster/backup/${ids[1] as string}`)
  })

  it('$schedule_param_check: starttime+dow become the schedule; neither, or both, are refused', async () => {
    await req('POST', '/cluster/backup', { id: 'legacy', starttime: '21:00', dow: 'sat,sun', all: '1' })
    expect(data<Record<string, unknown>>(await req('GET', '/cluster/backup/legacy')).schedule).toBe('sat,sun 21:00')
    await req('POST', '/cluster/backup', {
      id: 'legacy2',
      starttime: '21:00',
      dow: 'mon,tue,wed,thu,fri,sat,sun',
      all: '1',
    })
    expect(data<Record<string, unknown>>(await req('GET', '/cluster/backup/legacy2')).schedule).toBe('21:00')
    expect(failure(await req('POST', '/cluster/backup', { id: 'xx', all: '1' }))[2]).toEqual({
      schedule: "neither 'starttime' nor 'schedule' were set",
    })
    expect(
      failure(await req('POST', '/cluster/backup', { id: 'xx', all: '1', schedule: 'daily', starttime: '1:00' }))[2],
    ).toEqual({
      starttime: "'starttime' and 'schedule' cannot both be set",
    })
    await req('DELETE', '/cluster/backup/legacy')
    await req('DELETE', '/cluster/backup/legacy2')
  })

  it('verify_vzdump_parameters: selection conflicts, a missing selection, exclude implies all, notes-template checks', async () => {
    const create = (p: Record<string, string>) => req('POST', '/cluster/backup', { id: 'vv', schedule: 'daily', ...p })
    expect(failure(await create({ all: '1', vmid: '100' }))[2]).toEqual({ all: "option conflicts with option 'vmid'" })
    await req('POST', '/pools', { poolid: 'p' })
    expect(failure(await create({ pool: 'p', vmid: '100' }))[2]).toEqual({
      pool: "option conflicts with option 'vmid'",
    })
    expect(failure(await create({ storage: 'local' }))[2]).toEqual({ vmid: 'property is missing' })
    expect(failure(await create({ vmid: '100', storage: 'local', 'notes-template': 'a\\tb {{vmname}}' }))[2]).toEqual({
      'notes-template': "found unknown: escape sequence '\\t' at char 1, variable 'vmname' at char 9\n",
    })
    await create({ exclude: '100' })
    expect(data<Record<string, unknown>>(await req('GET', '/cluster/backup/vv'))).toMatchObject({
      all: 1,
      exclude: '100',
    })
    await req('DELETE', '/cluster/backup/vv')
  })
})

describe('PVE::API2::Backup update_job / delete_job', () => {
  it('update_job merges, deletes listed options, and a new selection replaces the old one', async () => {
    await req('POST', '/cluster/backup', { id: 'uu', schedule: 'daily', vmid: '100', comment: 'c', mode: 'stop' })
    expect((await req('PUT', '/cluster/backup/uu', { all: '1', exclude: '101', delete: 'comment,mode' })).status).toBe(
      200,
    )
    const job = data<Record<string, unknown>>(await req('GET', '/cluster/backup/uu'))
    expect(job).toEqual({ id: 'uu', type: 'vzdump', enabled: 1, schedule: 'daily', all: 1, exclude: '101' })
    await req('PUT', '/cluster/backup/uu', { vmid: '102', enabled: '0' })
    expect(data<Record<string, unknown>>(await req('GET', '/cluster/backup/uu'))).toEqual({
      id: 'uu',
      type: 'vzdump',
      enabled: 0,
      schedule: 'daily',
      vmid: '102',
    })
  })

  it('update_job refuses unknown deletions, an empty update, a missing job; delete_job of a missing job is a 400', async () => {
    expect(failure(await req('PUT', '/cluster/backup/uu', { delete: 'schedule' }))[2]).toEqual({
      delete: "unknown option 'schedule'",
    })
    expect(failure(await req('PUT', '/cluster/backup/uu', {}))).toEqual([500, 'no options specified\n', undefined])
    expect(failure(await req('PUT', '/cluster/backup/nope', { mode: 'stop' }))).toEqual([
      500,
      'no such vzdump job\n',
      undefined,
    ])
    expect((await req('DELETE', '/cluster/backup/uu')).status).toBe(200)
    expect(failure(await req('DELETE', '/cluster/backup/uu'))).toEqual([
      400,
      'Parameter verification failed.\n',
      { id: "No such job 'uu'" },
    ])
  })
})

describe.skipIf(!schema)('the API schema: pve-calendar-event and prune-backups (validate_prune_backups)', () => {
  it('a schedule proxmox-time cannot parse is a 400 naming the event', async () => {
    const r = await req('POST', '/cluster/backup', { id: 'bad', schedule: 'mon..fri 25:00:99', all: '1' })
    expect(r.status).toBe(400)
    expect((r.json as { errors: Record<string, string> }).errors.schedule).toMatch(
      /^invalid format - invalid calendar event 'mon\.\.fri 25:00:99' - unable to parse calendar event/,
    )
  })

  it('keep-all with a positive keep-N is refused; nothing positive is stored as keep-all=1', async () => {
    const r = await req('POST', '/cluster/backup', {
      id: 'kk',
      schedule: 'daily',
      all: '1',
      'prune-backups': 'keep-all=1,keep-last=2',
    })
    expect((r.json as { errors: Record<string, string> }).errors['prune-backups']).toBe(
      'invalid format - keep-all cannot be set together with other options.\n',
    )
    await req('POST', '/cluster/backup', { id: 'kk', schedule: 'daily', all: '1', 'prune-backups': 'keep-last=0' })
    expect(data<Record<string, unknown>>(await req('GET', '/cluster/backup/kk'))['prune-backups']).toEqual({
      'keep-all': '1',
    })
    await req('DELETE', '/cluster/backup/kk')
  })
})
