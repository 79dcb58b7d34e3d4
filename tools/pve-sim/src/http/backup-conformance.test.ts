/**
 * Backup jobs over raw HTTP, each test named after the PVE function it follows: pve-manager PVE::API2::Backup
 * (create_job, read_job, update_job, delete_job, index, $schedule_param_check), PVE::VZDump
 * verify_vzdump_parameters / $verify_notes_template, check_pool_exist, the assert_param_permission_* checks,
 * pve-storage validate_prune_backups and the pve-calendar-event format (pve-common PVE::CalendarEvent over
 * proxmox-time's parser, and its compute_next_event for `next-run`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apidocForTests } from '../apidoc/test-data.js'
import { startSimulator, type Simulator } from '../index.js'
import { apiRequest, dataOf, form, raw, type RawResponse } from './test-support/raw.js'

let sim: Simulator
const req = (method: string, path: string, params?: Record<string, string>): Promise<RawResponse> =>
  apiRequest(sim, { Authorization: sim.token.header }, method, path, params)
const data = dataOf
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
    // parse_property_string reads a boolean as 1/0 (parse_boolean); integers stay the text they were
    expect(data<Record<string, unknown>>(await req('GET', '/cluster/backup/kk'))['prune-backups']).toEqual({
      'keep-all': 1,
    })
    await req('DELETE', '/cluster/backup/kk')
  })

  it('fleecing and performance are checked as property strings and read back as objects', async () => {
    const bad = await req('POST', '/cluster/backup', {
      id: 'ff',
      schedule: 'daily',
      all: '1',
      performance: 'max-workers=0',
    })
    expect((bad.json as { errors: Record<string, string> }).errors.performance).toMatch(
      /max-workers: value must have a minimum value of 1/,
    )
    await req('POST', '/cluster/backup', {
      id: 'ff',
      schedule: 'daily',
      all: '1',
      fleecing: 'storage=local-lvm,yes',
      performance: 'pbs-entries-max=2048,max-workers=4',
    })
    const job = data<Record<string, unknown>>(await req('GET', '/cluster/backup/ff'))
    expect([job.fleecing, job.performance]).toEqual([
      { enabled: 1, storage: 'local-lvm' },
      { 'max-workers': '4', 'pbs-entries-max': '2048' },
    ])
    await req('DELETE', '/cluster/backup/ff')
  })
})

describe('PVE::API2::Backup index: next-run (Proxmox::RS::CalendarEvent compute_next_event from now)', () => {
  it('a job with a schedule lists the next event after now, enabled or not; read_job has no next-run', async () => {
    await req('POST', '/cluster/backup', { id: 'five', schedule: '*:0/5', all: '1' })
    await req('POST', '/cluster/backup', { id: 'midnight', schedule: 'daily', all: '1', enabled: '0' })
    const before = Math.floor(Date.now() / 1000)
    const list = data<Record<string, unknown>[]>(await req('GET', '/cluster/backup'))
    const after = Math.floor(Date.now() / 1000)
    const nextRun = (id: string) => list.find((j) => j.id === id)?.['next-run']
    // the simulated nodes keep UTC: every fifth minute and midnight fall on multiples of 300 s and 86400 s
    const next = (step: number) => [before, after].map((t) => (Math.floor(t / step) + 1) * step)
    expect(next(300)).toContain(nextRun('five'))
    expect(next(86_400)).toContain(nextRun('midnight'))
    expect(data<Record<string, unknown>>(await req('GET', '/cluster/backup/five'))).not.toHaveProperty('next-run')
    await req('DELETE', '/cluster/backup/five')
    await req('DELETE', '/cluster/backup/midnight')
  })
})

describe('PVE::API2::Backup create_job / update_job: check_pool_exist', () => {
  it('a pool that does not exist is a 403 before the schedule or the selection are looked at', async () => {
    expect(failure(await req('POST', '/cluster/backup', { id: 'pp', pool: 'nope' }))).toEqual([
      403,
      "Permission check failed (pool 'nope' does not exist)\n",
      undefined,
    ])
    await req('POST', '/pools', { poolid: 'existing' })
    expect((await req('POST', '/cluster/backup', { id: 'pp', schedule: 'daily', pool: 'existing' })).status).toBe(200)
    expect(failure(await req('PUT', '/cluster/backup/pp', { pool: 'nope' }))[0]).toBe(403)
    expect(data<Record<string, unknown>>(await req('GET', '/cluster/backup/pp')).pool).toBe('existing')
    await req('DELETE', '/cluster/backup/pp')
  })
})

describe.skipIf(!schema)('the API schema: `requires` of create_job / update_job', () => {
  it('notes-template and protected require storage in the same request, also on update', async () => {
    await req('POST', '/cluster/backup', { id: 'nt', schedule: 'daily', all: '1', storage: 'local' })
    const r = await req('PUT', '/cluster/backup/nt', { 'notes-template': '{{guestname}}' })
    expect(failure(r)).toEqual([
      400,
      'Parameter verification failed.\n',
      { storage: "missing property required by 'notes-template'" },
    ])
    const p = await req('POST', '/cluster/backup', { id: 'pr', schedule: 'daily', all: '1', protected: '1' })
    expect(failure(p)[2]).toEqual({ storage: "missing property required by 'protected'" })
    expect(
      (await req('PUT', '/cluster/backup/nt', { 'notes-template': '{{guestname}}', storage: 'local' })).status,
    ).toBe(200)
    await req('DELETE', '/cluster/backup/nt')
  })
})

describe.skipIf(!schema)('PVE::API2::Backup assert_param_permission_create / _update', () => {
  const asOps = (method: string, path: string, params?: Record<string, string>): Promise<RawResponse> => {
    const f = params ? form(params) : undefined
    return raw(sim, method, `/api2/json${path}`, {
      headers: { Authorization: ops, ...(f?.headers ?? {}) },
      ...(f ? { body: f.body } : {}),
    })
  }
  let ops = ''
  const grant = (path: string, roles: string, propagate = '0') =>
    req('PUT', '/access/acl', { path, roles, users: 'backup@pve', propagate })

  beforeAll(async () => {
    await req('POST', '/access/users', { userid: 'backup@pve' })
    const t = data<{ 'full-tokenid': string; value: string }>(
      await req('POST', '/access/users/backup%40pve/token/jobs', { privsep: '0' }),
    )
    ops = `PVEAPIToken=${t['full-tokenid']}=${t.value}`
    await req('POST', '/access/roles', { roleid: 'JobAdmin', privs: 'Sys.Modify,Sys.Audit' })
    await grant('/', 'JobAdmin')
    await req('POST', '/pools', { poolid: 'guarded' })
  })

  it('the storage (local without one) needs Datastore.Allocate; root-only options are a 400', async () => {
    const create = (p: Record<string, string>) =>
      asOps('POST', '/cluster/backup', { schedule: 'daily', all: '1', ...p })
    expect(failure(await create({ id: 'j1' }))).toEqual([
      403,
      'Permission check failed (/storage/local, Datastore.Allocate)\n',
      undefined,
    ])
    await grant('/storage/local', 'PVEDatastoreAdmin')
    expect(failure(await create({ id: 'j1', tmpdir: '/tmp' }))).toEqual([
      400,
      'Parameter verification failed.\n',
      { tmpdir: 'Only root may set this option.' },
    ])
    expect(failure(await create({ id: 'j1', pool: 'guarded', all: '0' }))).toEqual([
      403,
      'Permission check failed (/pool/guarded, VM.Backup)\n',
      undefined,
    ])
    expect((await create({ id: 'j1' })).status).toBe(200)
  })

  it('update_job: a new storage, a deleted one (local) and the stored job storage need Datastore.Allocate', async () => {
    expect(failure(await asOps('PUT', '/cluster/backup/j1', { storage: 'local-lvm' }))[1]).toBe(
      'Permission check failed (/storage/local-lvm, Datastore.Allocate)\n',
    )
    // a job root made on a storage the token may not allocate on stays out of its reach
    await req('POST', '/cluster/backup', { id: 'j2', schedule: 'daily', all: '1', storage: 'local-lvm' })
    expect(failure(await asOps('PUT', '/cluster/backup/j2', { comment: 'mine' }))[1]).toBe(
      'Permission check failed (/storage/local-lvm, Datastore.Allocate)\n',
    )
    expect((await asOps('PUT', '/cluster/backup/j1', { comment: 'ok', delete: 'storage' })).status).toBe(200)
    await req('DELETE', '/cluster/backup/j1')
    await req('DELETE', '/cluster/backup/j2')
  })
})
