import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { type PveClient, createPveClient } from './client.js'
import { PveError, PveTaskFailedError } from './errors.js'
import { retryOnLockTimeout } from './retry.js'
import { type LocalPve, type Reply, type SeenRequest, ok, pveError, startLocalPve } from './test-support/local-pve.js'
import { pveDecodeForm } from './test-support/pve-form.js'
import { encodeSshKeys } from './wire/sshkeys.js'

const UPID = (type: string, id: string, node = 'pve1') =>
  `UPID:${node}:0012AB34:0A1B2C3D:6650F00D:${type}:${id}:root@pam!proxops:`

let pve: LocalPve
let c: PveClient
let routes: Record<string, (req: SeenRequest) => Reply>

beforeAll(async () => {
  pve = await startLocalPve((req) => {
    const route = routes[`${req.method} ${req.path}`]
    return route ? route(req) : pveError(501, `Method '${req.method} ${req.path}' not implemented`)
  })
  c = createPveClient({
    baseUrl: `${pve.url}/api2/json/`,
    auth: { type: 'token', tokenId: 'root@pam!proxops', secret: 'CANARY-secret-123' },
    tls: { fingerprint: pve.fingerprint },
    retry: { retries: 1, baseDelayMs: 1 },
  })
})
afterAll(async () => {
  await c.close()
  await pve.close()
})
beforeEach(() => {
  routes = {}
  pve.requests.length = 0
})

const form = (req: SeenRequest) => pveDecodeForm(req.body)

describe('reads decode PVE lenient JSON into typed results', () => {
  it('version, nodes, node status, nextid', async () => {
    routes = {
      'GET /version': () => ok({ version: '9.1.1', release: '9.1', repoid: 'abc12345' }),
      'GET /nodes': () =>
        ok([
          { node: 'pve1', status: 'online', maxcpu: '8', mem: 1024, ssl_fingerprint: 'AA:BB' },
          { node: 'pve2', status: 'offline' },
        ]),
      'GET /nodes/pve1/status': () =>
        ok({ uptime: '100', cpu: 0.1, pveversion: 'pve-manager/9.1.1', memory: { total: '2048', used: 1024 } }),
      'GET /cluster/nextid': (req) =>
        req.query.get('vmid') === '218'
          ? pveError(400, 'Parameter verification failed.', { vmid: 'VM 218 already exists' })
          : ok('100'),
    }
    expect(await c.version()).toEqual({ version: '9.1.1', release: '9.1', repoid: 'abc12345' })
    expect(await c.nodes()).toEqual([
      { node: 'pve1', status: 'online', maxcpu: 8, mem: 1024, ssl_fingerprint: 'AA:BB' },
      { node: 'pve2', status: 'offline' },
    ])
    expect(await c.nodeStatus('pve1')).toEqual({
      uptime: 100,
      cpu: 0.1,
      pveversion: 'pve-manager/9.1.1',
      memory: { total: 2048, used: 1024 },
    })
    expect(await c.nextId()).toBe(100)
    await expect(c.nextId(218)).rejects.toMatchObject({ code: 'PVE_ALREADY_EXISTS' })
  })

  it('cluster resources with the type filter, fresh guests lacking fields', async () => {
    routes = {
      'GET /cluster/resources': (req) =>
        ok([
          {
            id: 'qemu/100',
            type: 'qemu',
            vmid: 100,
            node: 'pve1',
            status: 'running',
            name: 'web-1',
            template: 0,
            tags: 'prod;web',
            maxmem: 2147483648,
          },
          { id: 'lxc/101', type: 'lxc', vmid: '101', node: 'pve1', status: 'unknown' },
          {
            id: 'storage/pve1/local',
            type: 'storage',
            node: 'pve1',
            storage: 'local',
            shared: 0,
            content: 'iso,vztmpl',
            filter: req.query.get('type'),
          },
        ]),
    }
    const rows = await c.clusterResources('vm')
    expect(pve.requests[0]!.query.get('type')).toBe('vm')
    expect(rows[0]).toEqual({
      id: 'qemu/100',
      type: 'qemu',
      vmid: 100,
      node: 'pve1',
      status: 'running',
      name: 'web-1',
      template: false,
      tags: 'prod;web',
      maxmem: 2147483648,
    })
    expect(rows[1]).toEqual({ id: 'lxc/101', type: 'lxc', vmid: 101, node: 'pve1', status: 'unknown' })
    expect(rows[2]!.shared).toBe(false)
  })

  it('guest lists, config (with current), pending, status', async () => {
    routes = {
      'GET /nodes/pve1/qemu': () =>
        ok([
          { vmid: '101', status: 'stopped', template: 1 },
          { vmid: 100, name: 'web-1', status: 'running', maxmem: '2147483648' },
        ]),
      'GET /nodes/pve1/lxc': () => ok([]),
      'GET /nodes/pve1/qemu/100/config': (req) =>
        ok({
          digest: 'd1',
          memory: req.query.get('current') === '1' ? '1024' : '2048',
          cores: 2,
          onboot: 1,
          tags: 'prod;web',
          sshkeys: 'ssh-ed25519%20AAAA',
        }),
      'GET /nodes/pve1/qemu/100/pending': () =>
        ok([
          { key: 'memory', value: '1024', pending: 2048 },
          { key: 'cores', value: 2 },
          { key: 'tags', delete: '1' },
        ]),
      'GET /nodes/pve1/lxc/101/status/current': () =>
        ok({ status: 'running', name: 'ct', uptime: 5, ha: { managed: 0 }, template: '' }),
    }
    expect(await c.listGuests('pve1', 'qemu')).toEqual([
      { vmid: 100, type: 'qemu', name: 'web-1', status: 'running', template: false, maxmem: 2147483648 },
      { vmid: 101, type: 'qemu', status: 'stopped', template: true },
    ])
    expect(await c.listGuests('pve1', 'lxc')).toEqual([])
    expect(await c.guestConfig('pve1', 'qemu', 100)).toEqual({
      digest: 'd1',
      values: { memory: '2048', cores: '2', onboot: '1', tags: 'prod;web', sshkeys: 'ssh-ed25519%20AAAA' },
    })
    expect((await c.guestConfig('pve1', 'qemu', 100, { current: true })).values.memory).toBe('1024')
    expect(pve.requests.at(-1)!.query.get('current')).toBe('1')
    expect(await c.guestPending('pve1', 'qemu', 100)).toEqual([
      { key: 'memory', value: '1024', pending: '2048' },
      { key: 'cores', value: '2' },
      { key: 'tags', delete: 1 },
    ])
    expect(await c.guestStatus('pve1', 'lxc', 101)).toEqual({
      status: 'running',
      name: 'ct',
      uptime: 5,
      haManaged: false,
      template: false,
    })
  })

  it('storage list and content', async () => {
    routes = {
      'GET /nodes/pve1/storage': () =>
        ok([
          {
            storage: 'local',
            type: 'dir',
            content: 'vztmpl,iso,backup',
            active: 1,
            enabled: '1',
            shared: 0,
            avail: '1000',
          },
        ]),
      'GET /nodes/pve1/storage/local/content': (req) =>
        ok([
          {
            volid: 'local:iso/debian.iso',
            content: req.query.get('content') ?? 'iso',
            format: 'iso',
            size: '1024',
            ctime: 1,
          },
        ]),
    }
    expect(await c.storages('pve1')).toEqual([
      {
        storage: 'local',
        type: 'dir',
        content: ['backup', 'iso', 'vztmpl'],
        active: true,
        enabled: true,
        shared: false,
        avail: 1000,
      },
    ])
    expect(await c.storageContent('pve1', 'local', 'iso')).toEqual([
      { volid: 'local:iso/debian.iso', content: 'iso', format: 'iso', size: 1024, ctime: 1 },
    ])
    expect(pve.requests.at(-1)!.query.get('content')).toBe('iso')
  })

  it('a shape PVE never sends is PVE_PROTOCOL naming the field', async () => {
    routes = { 'GET /nodes/pve1/qemu': () => ok([{ vmid: 'abc', status: 'running' }]) }
    const err = await c.listGuests('pve1', 'qemu').catch((e: unknown) => e as PveError)
    expect(err).toMatchObject({ code: 'PVE_PROTOCOL' })
    expect((err as PveError).message).toContain('qemu[0].vmid')
  })

  it('encodes path parameters (storage, UPID)', async () => {
    const upid = UPID('download', 'debian%2Eiso')
    routes = {
      [`GET /nodes/pve1/tasks/${upid}/status`]: () =>
        ok({ upid, node: 'pve1', type: 'download', id: 'x', status: 'running' }),
    }
    expect((await c.taskStatus({ node: 'pve1', upid })).status).toBe('running')
    expect(pve.requests[0]!.url).toContain(encodeURIComponent(upid))
  })
})

describe('writes: methods, paths and form bodies as PVE expects', () => {
  it('create, clone, power, template, delete, download return task refs', async () => {
    routes = {
      'POST /nodes/pve1/qemu': () => ok(UPID('qmcreate', '100')),
      'POST /nodes/pve1/lxc': () => ok(UPID('vzcreate', '101')),
      'POST /nodes/pve1/qemu/9000/clone': () => ok(UPID('qmclone', '9000')),
      'POST /nodes/pve1/qemu/100/status/start': () => ok(UPID('qmstart', '100')),
      'POST /nodes/pve1/qemu/100/status/shutdown': () => ok(UPID('qmshutdown', '100')),
      'POST /nodes/pve1/lxc/101/status/stop': () => ok(UPID('vzstop', '101')),
      'POST /nodes/pve1/qemu/100/status/reboot': () => ok(UPID('qmreboot', '100')),
      'POST /nodes/pve1/qemu/9000/template': () => ok(UPID('qmtemplate', '9000')),
      'POST /nodes/pve1/lxc/9001/template': () => ok(null),
      'DELETE /nodes/pve1/qemu/100': () => ok(UPID('qmdestroy', '100')),
      'POST /nodes/pve1/storage/local/download-url': () => ok(UPID('download', 'debian.iso')),
    }
    const before = c.writes
    const keys = encodeSshKeys('ssh-ed25519 AAAA+/= ops@laptop')
    const create = await c.createGuest('pve1', 'qemu', {
      vmid: 100,
      name: 'web-1',
      onboot: true,
      agent: false,
      tags: 'prod;web',
      boot: 'order=scsi0;net0',
      ipconfig0: 'ip=10.0.0.10/24,gw=10.0.0.1',
      sshkeys: keys,
    })
    expect(create).toEqual({ node: 'pve1', upid: UPID('qmcreate', '100') })
    const sent = pve.requests[0]!
    expect(sent.headers['content-type']).toBe('application/x-www-form-urlencoded')
    expect(form(sent)).toEqual({
      vmid: '100',
      name: 'web-1',
      onboot: '1',
      agent: '0',
      tags: 'prod;web',
      boot: 'order=scsi0;net0',
      ipconfig0: 'ip=10.0.0.10/24,gw=10.0.0.1',
      sshkeys: keys,
    })
    expect(sent.body).toContain('sshkeys=ssh-ed25519%2520AAAA%252B%252F%253D%2520ops%2540laptop')

    await c.createGuest('pve1', 'lxc', {
      vmid: 101,
      ostemplate: 'local:vztmpl/debian.tar.zst',
      features: 'nesting=1,mount=nfs;cifs',
    })
    expect(form(pve.requests.at(-1)!).features).toBe('nesting=1,mount=nfs;cifs')
    await c.cloneGuest('pve1', 'qemu', 9000, { newid: 100, full: true, target: 'pve2' })
    expect(form(pve.requests.at(-1)!)).toEqual({ newid: '100', full: '1', target: 'pve2' })
    await c.start('pve1', 'qemu', 100)
    await c.shutdown('pve1', 'qemu', 100, { timeoutSeconds: 120, forceStop: true })
    expect(form(pve.requests.at(-1)!)).toEqual({ timeout: '120', forceStop: '1' })
    await c.stop('pve1', 'lxc', 101)
    await c.reboot('pve1', 'qemu', 100)
    expect(await c.markTemplate('pve1', 'qemu', 9000)).toEqual({ node: 'pve1', upid: UPID('qmtemplate', '9000') })
    expect(await c.markTemplate('pve1', 'lxc', 9001)).toBeNull()
    await c.deleteGuest('pve1', 'qemu', 100)
    const del = pve.requests.at(-1)!
    expect(del.body).toBe('')
    expect(del.query.get('purge')).toBe('1')
    expect(del.query.has('destroy-unreferenced-disks')).toBe(false)
    await c.downloadUrl('pve1', 'local', {
      url: 'https://x/debian.iso?a=1&b=2',
      filename: 'debian.iso',
      content: 'iso',
      checksum: 'ab',
      'checksum-algorithm': 'sha256',
    })
    expect(form(pve.requests.at(-1)!).url).toBe('https://x/debian.iso?a=1&b=2')
    expect(c.writes - before).toBe(11)
  })

  it('updateConfig: qemu POST (task) with digest, qemu PUT when sync, lxc PUT (null)', async () => {
    routes = {
      'POST /nodes/pve1/qemu/100/config': () => ok(UPID('qmconfig', '100')),
      'PUT /nodes/pve1/qemu/100/config': () => ok(null),
      'PUT /nodes/pve1/lxc/101/config': () => ok(null),
    }
    expect(
      await c.updateConfig('pve1', 'qemu', 100, { cores: 4, delete: 'tags,description' }, { digest: 'abc' }),
    ).toEqual({
      node: 'pve1',
      upid: UPID('qmconfig', '100'),
    })
    expect(form(pve.requests[0]!)).toEqual({ cores: '4', delete: 'tags,description', digest: 'abc' })
    expect(await c.updateConfig('pve1', 'qemu', 100, { name: 'x' }, { sync: true })).toBeNull()
    expect(await c.updateConfig('pve1', 'lxc', 101, { memory: 1024 })).toBeNull()
    expect(pve.requests.map((r) => r.method)).toEqual(['POST', 'PUT', 'PUT'])
  })

  it('resize sends disk and size (grow forms) and accepts task or null', async () => {
    routes = {
      'PUT /nodes/pve1/qemu/100/resize': () => ok(UPID('resize', '100')),
      'PUT /nodes/pve1/lxc/101/resize': () => ok(null),
    }
    expect(await c.resizeDisk('pve1', 'qemu', 100, 'scsi0', '+2G', { digest: 'd' })).toMatchObject({
      upid: UPID('resize', '100'),
    })
    expect(form(pve.requests[0]!)).toEqual({ disk: 'scsi0', size: '+2G', digest: 'd' })
    expect(await c.resizeDisk('pve1', 'lxc', 101, 'rootfs', '40G')).toBeNull()
  })

  test.prop(
    [
      fc.dictionary(
        fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/),
        fc.oneof(fc.string({ unit: 'grapheme' }), fc.integer(), fc.boolean()),
        { maxKeys: 6 },
      ),
    ],
    {
      numRuns: 25,
    },
  )('any parameter values arrive intact through PVE-style decoding', async (params) => {
    delete params.sshkeys
    pve.requests.length = 0
    routes = { 'PUT /nodes/pve1/lxc/101/config': () => ok(null) }
    await c.updateConfig('pve1', 'lxc', 101, params)
    const expected = Object.fromEntries(
      Object.entries(params).map(([k, v]) => [k, typeof v === 'boolean' ? (v ? '1' : '0') : String(v)]),
    )
    expect(form(pve.requests[0]!)).toEqual(expected)
  })

  it('a write answering something other than a UPID is PVE_PROTOCOL', async () => {
    routes = { 'POST /nodes/pve1/qemu/100/status/start': () => ok(null) }
    await expect(c.start('pve1', 'qemu', 100)).rejects.toMatchObject({ code: 'PVE_PROTOCOL' })
  })

  it('refuses raw sshkeys before sending (PVE_PARAM naming the parameter, not counted as a write)', async () => {
    const before = c.writes
    const err = await c
      .updateConfig('pve1', 'qemu', 100, { sshkeys: 'ssh-ed25519 AAAA ops@laptop' })
      .catch((e: unknown) => e)
    expect(err).toMatchObject({ code: 'PVE_PARAM', params: { sshkeys: expect.stringContaining('urlencoded') } })
    expect(pve.requests).toHaveLength(0)
    expect(c.writes).toBe(before)
  })
})

describe('tasks', () => {
  const task = { node: 'pve1', upid: UPID('qmstart', '100') }
  const statusPath = `GET /nodes/pve1/tasks/${task.upid}/status`
  const logPath = `GET /nodes/pve1/tasks/${task.upid}/log`

  it('tolerates the brief 400 right after dispatch, then waits for OK', async () => {
    let n = 0
    routes = {
      [statusPath]: () => {
        n++
        if (n === 1) return pveError(400, 'Parameter verification failed.', { upid: 'no such task' })
        return ok({
          upid: task.upid,
          node: 'pve1',
          type: 'qmstart',
          id: '100',
          status: n < 4 ? 'running' : 'stopped',
          exitstatus: n < 4 ? undefined : 'OK',
        })
      },
    }
    expect(await c.waitTask(task, { pollIntervalMs: 5 })).toEqual({
      upid: task.upid,
      ok: true,
      exitstatus: 'OK',
      log: [],
    })
    expect(n).toBe(4)
  })

  it('keeps polling through a brief outage of the node, but gives up once it stays unreachable', async () => {
    let n = 0
    routes = {
      [statusPath]: () => {
        n++
        if (n <= 2) return pveError(595, 'No route to host')
        return ok({ upid: task.upid, node: 'pve1', type: 'qmstart', id: '100', status: 'stopped', exitstatus: 'OK' })
      },
    }
    expect((await c.waitTask(task, { pollIntervalMs: 5 })).ok).toBe(true)
    routes = { [statusPath]: () => pveError(595, 'No route to host') }
    const started = Date.now()
    const err = await c
      .waitTask(task, { pollIntervalMs: 5, unreachableTimeoutMs: 50, timeoutMs: 60_000 })
      .catch((e: unknown) => e)
    expect(err).toMatchObject({ code: 'PVE_TRANSIENT' })
    // it stopped on the unreachable limit, far before the task timeout
    expect(Date.now() - started).toBeLessThan(30_000)
  })

  it('WARNINGS: n is success', async () => {
    routes = { [statusPath]: () => ok({ upid: task.upid, status: 'stopped', exitstatus: 'WARNINGS: 2' }) }
    expect((await c.waitTask(task)).ok).toBe(true)
  })

  it('a failed task resolves ok=false with the last log lines; waitTaskOk throws PVE_TASK_FAILED with its reason', async () => {
    const lines = Array.from({ length: 30 }, (_, i) => ({ n: i + 1, t: `line ${i + 1}` }))
    lines.push({ n: 31, t: "TASK ERROR: can't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout" })
    routes = {
      [statusPath]: () =>
        ok({
          upid: task.upid,
          status: 'stopped',
          exitstatus: "can't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout",
        }),
      [logPath]: (req) => {
        const start = Number(req.query.get('start'))
        const limit = Number(req.query.get('limit'))
        return ok(lines.slice(start, start + limit), { total: lines.length })
      },
    }
    const result = await c.waitTask(task, { logLines: 5 })
    expect(result.ok).toBe(false)
    expect(result.log).toEqual(['line 27', 'line 28', 'line 29', 'line 30', lines[30]!.t])
    const err = await c.waitTaskOk(task, { logLines: 5 }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(PveTaskFailedError)
    expect(err).toMatchObject({ code: 'PVE_TASK_FAILED', reason: 'PVE_LOCK_TIMEOUT', upid: task.upid })
    expect((err as PveTaskFailedError).message).toContain('got timeout')
  })

  it('retryOnLockTimeout repeats a caller-chosen write whose task hit a lock timeout', async () => {
    let attempt = 0
    routes = {
      'PUT /nodes/pve1/qemu/100/resize': () => ok(UPID('resize', String(100 + ++attempt))),
      [`GET /nodes/pve1/tasks/${UPID('resize', '101')}/status`]: () =>
        ok({ upid: UPID('resize', '101'), status: 'stopped', exitstatus: "can't lock file 'x' - got timeout" }),
      [`GET /nodes/pve1/tasks/${UPID('resize', '101')}/log`]: () => ok([{ n: 1, t: 'TASK ERROR' }], { total: 1 }),
      [`GET /nodes/pve1/tasks/${UPID('resize', '102')}/status`]: () =>
        ok({ upid: UPID('resize', '102'), status: 'stopped', exitstatus: 'OK' }),
    }
    const result = await retryOnLockTimeout(
      async () => {
        const ref = await c.resizeDisk('pve1', 'qemu', 100, 'scsi0', '40G')
        return c.waitTaskOk(ref!)
      },
      { baseDelayMs: 1 },
    )
    expect(result.ok).toBe(true)
    expect(attempt).toBe(2)
  })

  it('times out with PVE_TASK_TIMEOUT carrying the last status', async () => {
    routes = { [statusPath]: () => ok({ upid: task.upid, status: 'running' }) }
    const err = await c.waitTask(task, { timeoutMs: 30, pollIntervalMs: 5 }).catch((e: unknown) => e)
    expect(err).toMatchObject({ code: 'PVE_TASK_TIMEOUT', lastStatus: 'running', upid: task.upid })
  })

  it('a 400 long after dispatch is an error, not a wait', async () => {
    routes = {
      [statusPath]: () => pveError(400, 'Parameter verification failed.', { upid: 'unable to parse worker upid' }),
    }
    await expect(c.waitTask(task, { startGraceMs: 0 })).rejects.toMatchObject({ code: 'PVE_PARAM' })
  })

  it('is cancellable', async () => {
    routes = { [statusPath]: () => ok({ upid: task.upid, status: 'running' }) }
    const ac = new AbortController()
    setTimeout(() => ac.abort(), 30)
    await expect(c.waitTask(task, { signal: ac.signal, pollIntervalMs: 1_000 })).rejects.toMatchObject({
      code: 'PVE_ABORTED',
    })
  })

  it('waitTemplate polls an LXC config until template=1 and unlocked', async () => {
    let n = 0
    routes = {
      'GET /nodes/pve1/lxc/9001/config': () => {
        n++
        return ok(n < 3 ? { digest: 'd', lock: 'create' } : { digest: 'd', template: 1 })
      },
    }
    await c.waitTemplate('pve1', 'lxc', 9001, { pollIntervalMs: 5 })
    expect(n).toBe(3)
  })
})
