/**
 * Integration tests against the PVE simulator (tools/pve-sim) over real HTTPS: every endpoint the client types,
 * every error class, the form-encoding pitfalls of pve-http-server's decode_urlencoded, and secret canaries.
 */
import { inspect } from 'node:util'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { type Simulator, apidocForTests, startSimulator } from '@proxops/pve-sim'
import { type PveClient, createPveClient, createPveReadOnlyClient } from './client.js'
import { PveError, type PveParamError, PveTaskFailedError } from './errors.js'
import { retryOnLockTimeout } from './retry.js'
import { captureLogger } from './test-support/local-pve.js'
import type { RequestEvent } from './transport.js'
import { decodeSshKeys, encodeSshKeys } from './wire/sshkeys.js'
import { parsePropertyString } from './wire/property-string.js'
import { parseSize } from './wire/size.js'

const TOKEN_SECRET = 'CANARY-SIM-TOKEN-0d0b4a51'
const ROOT_PASSWORD = 'CANARY-SIM-ROOT;pw=x&y+z'
const CANARIES = [TOKEN_SECRET, ROOT_PASSWORD, encodeURIComponent(ROOT_PASSWORD)]
const fastWait = { pollIntervalMs: 20, timeoutMs: 20_000 }

let sim: Simulator
let c: PveClient
const logger = captureLogger()
const events: RequestEvent[] = []
const seenErrors: unknown[] = []

function token(secret = TOKEN_SECRET) {
  return { type: 'token' as const, tokenId: 'root@pam!proxops', secret }
}

async function failure(p: Promise<unknown>): Promise<PveError> {
  try {
    await p
  } catch (err) {
    seenErrors.push(err)
    expect(err).toBeInstanceOf(PveError)
    return err as PveError
  }
  throw new Error('expected a rejection')
}

beforeAll(async () => {
  sim = await startSimulator({
    taskDurationMs: 30,
    authFailureDelayMs: 10,
    tokens: [{ id: 'root@pam!proxops', secret: TOKEN_SECRET }],
    rootPassword: ROOT_PASSWORD,
    log: () => {},
  })
  c = createPveClient({
    baseUrl: sim.url,
    auth: token(),
    tls: { fingerprint: sim.fingerprint! },
    retry: { retries: 3, baseDelayMs: 5, maxDelayMs: 20 },
    logger,
    onRequest: (e) => events.push(e),
  })
})

afterAll(async () => {
  // secrets never appear in any error, log line or object rendering seen during the whole file
  const rendered = [
    ...seenErrors.map(
      (e) => `${String(e)} ${inspect(e, { depth: 6, showHidden: true })} ${JSON.stringify(e)} ${(e as Error).stack}`,
    ),
    logger.lines.join('\n'),
    inspect(c, { depth: 6, showHidden: true }),
    JSON.stringify(events),
  ].join('\n')
  for (const canary of CANARIES) expect(rendered).not.toContain(canary)
  expect(seenErrors.length).toBeGreaterThan(10)
  await c?.close()
  await sim?.close()
})

beforeEach(() => {
  sim.control.clearFaults()
})

let nextVmid = 200
const vmid = () => nextVmid++

async function createVm(id: number, params: Record<string, string | number | boolean> = {}, node = 'pve1') {
  const ref = await c.createGuest(node, 'qemu', {
    vmid: id,
    name: `vm-${id}`,
    memory: 512,
    scsi0: 'local-lvm:1',
    net0: 'virtio,bridge=vmbr0',
    ...params,
  })
  await c.waitTaskOk(ref, fastWait)
}

describe('TLS and auth over real HTTPS', () => {
  it('works with the pinned fingerprint and with the certificate as a CA', async () => {
    for (const tls of [{ fingerprint: sim.fingerprint! }, { ca: sim.caPem! }]) {
      const client = createPveClient({ baseUrl: sim.apiUrl, auth: token(), tls })
      expect((await client.version()).release).toBe('9.1')
      await client.close()
    }
  })

  it('refuses an unverified certificate and a wrong pin', async () => {
    const plain = createPveClient({ baseUrl: sim.url, auth: token(), retry: { retries: 0 } })
    expect((await failure(plain.version())).code).toBe('PVE_TLS')
    await plain.close()
    const pinned = createPveClient({ baseUrl: sim.url, auth: token(), tls: { fingerprint: '00'.repeat(32) } })
    const err = await failure(pinned.version())
    expect(err.code).toBe('PVE_TLS_FINGERPRINT')
    expect(err.message).toContain(sim.fingerprint!)
    await pinned.close()
  })

  it('ticket auth: login, cookie, CSRF on writes', async () => {
    const t = createPveClient({
      baseUrl: sim.url,
      auth: { type: 'ticket', username: 'root@pam', password: ROOT_PASSWORD },
      tls: { ca: sim.caPem! },
      logger,
    })
    expect((await t.version()).version).toMatch(/^9\.1/)
    const id = vmid()
    const ref = await t.createGuest('pve1', 'qemu', { vmid: id, memory: 256 })
    expect((await t.waitTask(ref, fastWait)).ok).toBe(true)
    await t.updateConfig('pve1', 'qemu', id, { description: 'via ticket' }, { sync: true })
    expect((await t.guestConfig('pve1', 'qemu', id)).values.description).toBe('via ticket')
    await t.close()
  })

  it('ticket auth: an expired ticket (401 No ticket) leads to one new login and the request succeeds', async () => {
    let logins = 0
    const t = createPveClient({
      baseUrl: sim.url,
      auth: { type: 'ticket', username: 'root@pam', password: ROOT_PASSWORD },
      tls: { ca: sim.caPem! },
      // the client's clock stands still, so it never renews on its own and only the 401 can tell it
      now: () => 0,
      onRequest: (e) => {
        if (e.path === '/access/ticket') logins++
        events.push(e)
      },
    })
    await t.version()
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 3 * 3_600_000 })
    try {
      expect((await t.version()).release).toBe('9.1')
    } finally {
      vi.useRealTimers()
    }
    expect(logins).toBe(2)
    expect(events.filter((e) => e.path === '/version' && e.status === 401).length).toBeGreaterThanOrEqual(1)
    await t.close()
  })

  it('wrong password and revoked token are PVE_AUTH', async () => {
    const t = createPveClient({
      baseUrl: sim.url,
      auth: { type: 'ticket', username: 'root@pam', password: `${ROOT_PASSWORD}-wrong` },
      tls: { ca: sim.caPem! },
      logger,
    })
    expect((await failure(t.version())).code).toBe('PVE_AUTH')
    await t.close()
    sim.control.revokeToken()
    try {
      const err = await failure(c.version())
      expect(err.code).toBe('PVE_AUTH')
      expect(err.status).toBe(401)
    } finally {
      sim.control.restoreToken()
    }
  })

  it('root@pam-only options are PVE_PERMISSION for a token (qemu answers 500, lxc 403)', async () => {
    const id = vmid()
    await createVm(id)
    const qemu = await failure(c.updateConfig('pve1', 'qemu', id, { args: '-no-reboot' }, { sync: true }))
    expect(qemu).toMatchObject({ code: 'PVE_PERMISSION', status: 500 })
    const ct = vmid()
    sim.control.addVolume('pve1', 'local', { filename: 'perm-test.tar.zst', content: 'vztmpl', size: 1024 })
    await c.waitTaskOk(
      await c.createGuest('pve1', 'lxc', {
        vmid: ct,
        ostemplate: 'local:vztmpl/perm-test.tar.zst',
        rootfs: 'local-lvm:1',
      }),
      fastWait,
    )
    const lxc = await failure(c.updateConfig('pve1', 'lxc', ct, { features: 'keyctl=1' }))
    expect(lxc).toMatchObject({ code: 'PVE_PERMISSION', status: 403 })
  })
})

describe('reads', () => {
  // pve-access-control API2/AccessControl.pm permissions: a caller may always read its own privileges
  it('privileges(path): the privileges of this token on one ACL path, sorted', async () => {
    const privs = await c.privileges('/vms/4242')
    expect(privs).toEqual(expect.arrayContaining(['SDN.Use', 'Sys.Modify', 'VM.Allocate', 'VM.Config.Options']))
    expect(privs).toEqual([...privs].sort())
    // the read-only client has it too (diff runs the preflight)
    expect(await c.readOnly().privileges('/')).toEqual(await c.privileges('/'))
  })

  it('version, nodes, node status, cluster resources, nextid', async () => {
    expect(await c.version()).toMatchObject({ version: expect.stringMatching(/^9\.1/), release: '9.1' })
    expect((await c.nodes()).map((n) => n.node)).toEqual(['pve1', 'pve2', 'pve3'])
    const st = await c.nodeStatus('pve2')
    expect(st.uptime).toBeGreaterThan(0)
    expect(st.pveversion).toMatch(/^pve-manager\/9\.1/)
    expect(st.memory!.total).toBeGreaterThan(st.memory!.used!)
    // an unknown node name is PVE's 500 hostname-lookup failure: permanent, not retried
    expect(await failure(c.nodeStatus('nosuchnode'))).toMatchObject({
      code: 'PVE_FAILED',
      pveMessage: expect.stringMatching(/hostname lookup/),
    })
    const id = vmid()
    await createVm(id)
    const rows = await c.clusterResources('vm')
    expect(rows.find((r) => r.vmid === id)).toMatchObject({ id: `qemu/${id}`, type: 'qemu', node: 'pve1' })
    expect((await c.clusterResources('storage')).some((r) => r.type === 'storage')).toBe(true)
    const free = await c.nextId()
    expect(free).toBeGreaterThanOrEqual(100)
    expect(await c.nextId(free)).toBe(free)
    expect((await failure(c.nextId(id))).code).toBe('PVE_ALREADY_EXISTS')
    expect(await c.vmidFree(id)).toBe(false)
    expect(await c.vmidFree(free)).toBe(true)
  })

  it('storage list and content', async () => {
    const storages = await c.storages('pve1')
    expect(storages.find((s) => s.storage === 'local')).toMatchObject({
      type: 'dir',
      active: true,
      enabled: true,
      shared: false,
    })
    expect(storages.find((s) => s.storage === 'local')!.content).toContain('iso')
    sim.control.addVolume('pve1', 'local', { filename: 'alpine.iso', content: 'iso', size: 1024 * 1024 })
    const iso = await c.storageContent('pve1', 'local', 'iso')
    expect(iso).toContainEqual(
      expect.objectContaining({ volid: 'local:iso/alpine.iso', content: 'iso', size: 1024 * 1024 }),
    )
  })

  it('the read-only client reads everything and never writes', async () => {
    const ro = createPveReadOnlyClient({ baseUrl: sim.url, auth: token(), tls: { fingerprint: sim.fingerprint! } })
    const writesBefore = sim.stats.writes()
    const id = vmid()
    await createVm(id)
    const afterCreate = sim.stats.writes()
    await ro.version()
    await ro.clusterResources('vm')
    await ro.guestConfig('pve1', 'qemu', id, { current: true })
    await ro.guestPending('pve1', 'qemu', id)
    await ro.guestStatus('pve1', 'qemu', id)
    await ro.listGuests('pve1', 'qemu')
    await ro.storages('pve1')
    await ro.storageContent('pve1', 'local')
    expect(sim.stats.writes()).toBe(afterCreate)
    expect(afterCreate).toBeGreaterThan(writesBefore)
    expect('createGuest' in ro || 'request' in ro || 'deleteGuest' in ro).toBe(false)
    expect('createGuest' in c.readOnly()).toBe(false)
    await ro.close()
  })
})

// PVE_PARAM answers come from the simulator's schema check: skipped without the PVE API schema (a fresh clone)
const schemaIt = it.skipIf(!apidocForTests())

describe('qemu lifecycle and the form-encoding pitfalls', () => {
  const keys = [
    'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGz0+/x= ops@laptop',
    'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHk9 ci@runner',
  ]
  let id: number

  it('create keeps ; and = inside values, booleans as 1/0, sshkeys urlencoded', async () => {
    id = vmid()
    const writes = c.writes
    const ref = await c.createGuest('pve1', 'qemu', {
      vmid: id,
      name: 'web-1',
      memory: 1024,
      cores: 1,
      onboot: true,
      agent: '1',
      tags: 'Web;prod;web',
      boot: 'order=scsi0;ide2;net0',
      ipconfig0: 'ip=10.0.0.10/24,gw=10.0.0.1',
      description: 'a+b & c; d=e',
      scsi0: 'local-lvm:2,discard=on,ssd=1',
      ide2: 'local-lvm:cloudinit',
      net0: 'virtio,bridge=vmbr0,firewall=1',
      sshkeys: encodeSshKeys(keys),
    })
    expect(ref.upid).toMatch(/^UPID:pve1:.*:qmcreate:/)
    expect(c.writes - writes).toBe(1)
    expect((await c.waitTaskOk(ref, fastWait)).exitstatus).toBe('OK')
    const cfg = await c.guestConfig('pve1', 'qemu', id)
    expect(cfg.digest).toMatch(/^[0-9a-f]{40}$/)
    expect(cfg.values).toMatchObject({
      name: 'web-1',
      memory: '1024',
      cores: '1',
      onboot: '1',
      tags: 'prod;web',
      boot: 'order=scsi0;ide2;net0',
      ipconfig0: 'ip=10.0.0.10/24,gw=10.0.0.1',
      description: 'a+b & c; d=e',
    })
    expect(decodeSshKeys(cfg.values.sshkeys!)).toBe(keys.join('\n'))
    const scsi0 = parsePropertyString(cfg.values.scsi0!, { defaultKey: 'file' })
    expect(scsi0).toMatchObject({ discard: 'on', ssd: '1', size: '2G' })
  })

  schemaIt('a boolean sent as "true" is a PVE_PARAM error with the per-parameter map', async () => {
    const err = await failure(c.updateConfig('pve1', 'qemu', id, { onboot: 'true' }, { sync: true }))
    expect(err.code).toBe('PVE_PARAM')
    expect((err as PveParamError).params.onboot).toMatch(/boolean/)
  })

  schemaIt('unknown parameter is PVE_PARAM', async () => {
    const err = await failure(c.updateConfig('pve1', 'qemu', id, { pool: 'x' }, { sync: true }))
    expect(err.code).toBe('PVE_PARAM')
    expect(Object.keys((err as PveParamError).params)).toContain('pool')
  })

  it('list, status, digest-guarded update, digest mismatch', async () => {
    expect((await c.listGuests('pve1', 'qemu')).find((g) => g.vmid === id)).toMatchObject({
      name: 'web-1',
      status: 'stopped',
      template: false,
    })
    expect((await c.nodeGuests('pve1', 'qemu')).find((g) => g.vmid === id)).toMatchObject({ status: 'stopped' })
    expect(events.at(-1)).toMatchObject({ path: '/nodes/{node}/qemu', status: 200 })
    expect(await c.guestStatus('pve1', 'qemu', id)).toMatchObject({ status: 'stopped' })
    const { digest } = await c.guestConfig('pve1', 'qemu', id)
    const ref = await c.updateConfig('pve1', 'qemu', id, { cores: 2 }, { digest })
    expect(ref).not.toBeNull()
    await c.waitTaskOk(ref!, fastWait)
    expect((await c.guestConfig('pve1', 'qemu', id)).values.cores).toBe('2')
    const err = await failure(c.updateConfig('pve1', 'qemu', id, { cores: 3 }, { digest, sync: true }))
    expect(err.code).toBe('PVE_DIGEST_MISMATCH')
  })

  it('start, pending changes on a running VM (current=1 vs default), reboot applies them', async () => {
    await c.waitTaskOk(await c.start('pve1', 'qemu', id), fastWait)
    expect((await c.guestStatus('pve1', 'qemu', id)).status).toBe('running')
    await c.updateConfig('pve1', 'qemu', id, { cores: 4 }, { sync: true })
    expect((await c.guestConfig('pve1', 'qemu', id)).values.cores).toBe('4')
    expect((await c.guestConfig('pve1', 'qemu', id, { current: true })).values.cores).toBe('2')
    expect(await c.guestPending('pve1', 'qemu', id)).toContainEqual(
      expect.objectContaining({ key: 'cores', value: '2', pending: '4' }),
    )
    await c.waitTaskOk(await c.reboot('pve1', 'qemu', id), fastWait)
    expect((await c.guestConfig('pve1', 'qemu', id, { current: true })).values.cores).toBe('4')
  })

  it('task status and paged task log (numbered lines, total, final TASK line)', async () => {
    const ref = await c.reboot('pve1', 'qemu', id)
    await c.waitTaskOk(ref, fastWait)
    const status = await c.taskStatus(ref)
    expect(status).toMatchObject({
      upid: ref.upid,
      node: 'pve1',
      type: 'qmreboot',
      id: String(id),
      status: 'stopped',
      exitstatus: 'OK',
    })
    const all = await c.taskLog(ref)
    expect(all.total).toBe(all.lines.length)
    expect(all.lines[0]!.n).toBe(1)
    expect(all.lines.at(-1)!.t).toBe('TASK OK')
    const last = await c.taskLog(ref, { start: all.total - 1, limit: 1 })
    expect(last.lines).toEqual([all.lines.at(-1)])
  })

  schemaIt('client and simulator agree on the number of writes', async () => {
    const mine = c.writes
    const theirs = sim.stats.writes()
    const sent = () => sim.stats.requests.filter((r) => r.method !== 'GET').length
    const sentBefore = sent()
    await c.updateConfig('pve1', 'qemu', id, { description: 'counted' }, { sync: true })
    await c.waitTaskOk((await c.updateConfig('pve1', 'qemu', id, { description: 'counted twice' }))!, fastWait)
    await failure(c.updateConfig('pve1', 'qemu', id, { onboot: 'yes please' }, { sync: true }))
    await c.guestConfig('pve1', 'qemu', id)
    // the client counts writes sent; the simulator's writes() only those whose handler ran (not the 400)
    expect(c.writes - mine).toBe(3)
    expect(sent() - sentBefore).toBe(3)
    expect(sim.stats.writes() - theirs).toBe(2)
  })

  it('start on a running VM: the task fails (PVE_TASK_FAILED with log lines)', async () => {
    const result = await c.waitTask(await c.start('pve1', 'qemu', id), fastWait)
    expect(result.ok).toBe(false)
    expect(result.exitstatus).toMatch(/already running/)
    expect(result.log.at(-1)).toMatch(/TASK ERROR/)
    const err = await failure(c.waitTaskOk(await c.start('pve1', 'qemu', id), fastWait))
    expect(err).toBeInstanceOf(PveTaskFailedError)
    expect((err as PveTaskFailedError).exitstatus).toMatch(/already running/)
  })

  it('destroying a running VM is refused (PVE_FAILED), shutdown then works', async () => {
    expect((await failure(c.deleteGuest('pve1', 'qemu', id))).code).toBe('PVE_FAILED')
    await c.waitTaskOk(await c.shutdown('pve1', 'qemu', id, { timeoutSeconds: 30, forceStop: true }), fastWait)
    expect((await c.guestStatus('pve1', 'qemu', id)).status).toBe('stopped')
    await c.waitTaskOk(await c.stop('pve1', 'qemu', id), fastWait)
  })

  it('resize grows (relative and absolute); shrinking fails inside the task', async () => {
    const ref = await c.resizeDisk('pve1', 'qemu', id, 'scsi0', '+1G')
    await c.waitTaskOk(ref!, fastWait)
    const size = () =>
      c
        .guestConfig('pve1', 'qemu', id)
        .then((cfg) => parseSize(parsePropertyString(cfg.values.scsi0!, { defaultKey: 'file' }).size!))
    expect(await size()).toBe(3 * 1024 ** 3)
    await c.waitTaskOk((await c.resizeDisk('pve1', 'qemu', id, 'scsi0', '4G'))!, fastWait)
    expect(await size()).toBe(4 * 1024 ** 3)
    const shrink = await c.waitTask((await c.resizeDisk('pve1', 'qemu', id, 'scsi0', '1G'))!, fastWait)
    expect(shrink.ok).toBe(false)
    expect(shrink.exitstatus).toMatch(/shrinking disks is not supported/)
  })

  it('template, linked clone, delete; then NotFound', async () => {
    await c.waitTaskOk((await c.markTemplate('pve1', 'qemu', id))!, fastWait)
    expect((await c.guestConfig('pve1', 'qemu', id)).values.template).toBe('1')
    const clone = vmid()
    await c.waitTaskOk(await c.cloneGuest('pve1', 'qemu', id, { newid: clone, name: 'web-2' }), fastWait)
    const cfg = await c.guestConfig('pve1', 'qemu', clone)
    expect(cfg.values.name).toBe('web-2')
    expect(cfg.values.tags).toBe('prod;web')
    await c.waitTaskOk(await c.deleteGuest('pve1', 'qemu', clone), fastWait)
    const err = await failure(c.guestConfig('pve1', 'qemu', clone))
    expect(err.code).toBe('PVE_NOT_FOUND')
    expect(err.status).toBe(500)
  })
})

describe('lxc', () => {
  it('create, PUT config (null), start/stop state errors, template answers null and its vztemplate worker is found (PVE::API2::LXC template)', async () => {
    const id = vmid()
    sim.control.addVolume('pve1', 'local', {
      filename: 'debian-12-standard_12.7-1_amd64.tar.zst',
      content: 'vztmpl',
      size: 1024,
    })
    const ref = await c.createGuest('pve1', 'lxc', {
      vmid: id,
      hostname: 'ct-1',
      ostemplate: 'local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst',
      rootfs: 'local-lvm:2',
      net0: 'name=eth0,bridge=vmbr0,ip=dhcp',
      features: 'nesting=1',
      tags: 'b,A',
      memory: 256,
    })
    await c.waitTaskOk(ref, fastWait)
    expect(await c.updateConfig('pve1', 'lxc', id, { memory: 512, description: 'x;y=z' })).toBeNull()
    const cfg = await c.guestConfig('pve1', 'lxc', id)
    expect(cfg.values).toMatchObject({ memory: '512', description: 'x;y=z', tags: 'a;b', hostname: 'ct-1' })
    expect(parsePropertyString(cfg.values.net0!)).toMatchObject({ name: 'eth0', bridge: 'vmbr0', ip: 'dhcp' })
    expect((await failure(c.stop('pve1', 'lxc', id))).code).toBe('PVE_FAILED')
    expect((await c.listGuests('pve1', 'lxc')).some((g) => g.vmid === id)).toBe(true)
    await c.waitTaskOk((await c.resizeDisk('pve1', 'lxc', id, 'rootfs', '+1G'))!, fastWait)
    // power: start, reboot, shutdown; a running CT refuses a second start at once (500, not in a task)
    await c.waitTaskOk(await c.start('pve1', 'lxc', id), fastWait)
    expect((await c.guestStatus('pve1', 'lxc', id)).status).toBe('running')
    expect((await failure(c.start('pve1', 'lxc', id))).code).toBe('PVE_FAILED')
    await c.waitTaskOk(await c.reboot('pve1', 'lxc', id), fastWait)
    await c.waitTaskOk(await c.shutdown('pve1', 'lxc', id, { timeoutSeconds: 10, forceStop: true }), fastWait)
    expect((await c.guestStatus('pve1', 'lxc', id)).status).toBe('stopped')
    // full clone to another id, then destroy it
    const copy = vmid()
    await c.waitTaskOk(await c.cloneGuest('pve1', 'lxc', id, { newid: copy, hostname: 'ct-2', full: true }), fastWait)
    expect((await c.guestConfig('pve1', 'lxc', copy)).values.hostname).toBe('ct-2')
    await c.waitTaskOk(await c.deleteGuest('pve1', 'lxc', copy), fastWait)
    expect((await failure(c.guestConfig('pve1', 'lxc', copy))).code).toBe('PVE_NOT_FOUND')
    // PVE::API2::LXC template answers null but forks vztemplate, listed as active before the answer
    // (RESTEnvironment fork_worker): the client returns that worker, waited on like any task
    // a held worker outlives the two requests however loaded the machine is (the default 30 ms may not)
    sim.control.setTaskBehaviour('vztemplate', { hold: true })
    const worker = await c.markTemplate('pve1', 'lxc', id)
    sim.control.setTaskBehaviour('vztemplate', null)
    expect(worker?.upid).toMatch(new RegExp(`:vztemplate:${id}:`))
    await c.waitTaskOk(worker!, fastWait)
    expect((await c.guestConfig('pve1', 'lxc', id)).values.template).toBe('1')
    await c.waitTemplate('pve1', 'lxc', id, fastWait)
  })
})

describe('pools (PVE::API2::Pool)', () => {
  it('create_pool, update_pool (add, allow-move, delete), read_pool members, delete_pool refused while not empty', async () => {
    await c.createPool({ poolid: 'cl-web', comment: 'managed-by=proxops web' })
    await c.createPool({ poolid: 'cl-web/blue' })
    await c.createPool({ poolid: 'cl-db' })
    const id = vmid()
    await createVm(id, { pool: 'cl-web/blue' })
    expect((await c.pools()).filter((p) => p.poolid.startsWith('cl-'))).toEqual([
      { poolid: 'cl-db' },
      { poolid: 'cl-web', comment: 'managed-by=proxops web' },
      { poolid: 'cl-web/blue' },
    ])
    expect(await c.pool('cl-web/blue')).toEqual({
      poolid: 'cl-web/blue',
      members: [expect.objectContaining({ type: 'qemu', id: `qemu/${id}`, vmid: id, node: 'pve1' })],
    })
    const moved = await failure(c.updatePool({ poolid: 'cl-db', vms: String(id) }))
    expect(moved.message).toContain(`VM ${id} belongs already to pool 'cl-web/blue' and 'allow-move' is not set`)
    await c.updatePool({ poolid: 'cl-db', vms: String(id), 'allow-move': true })
    expect((await c.pool('cl-db')).members.map((m) => m.vmid)).toEqual([id])
    expect((await c.pool('cl-web/blue')).members).toEqual([])
    expect((await failure(c.deletePool('cl-db'))).message).toContain(`pool 'cl-db' is not empty (contains VM ${id})`)
    await c.updatePool({ poolid: 'cl-db', vms: String(id), delete: true })
    await c.deletePool('cl-db')
    expect((await c.pools()).map((p) => p.poolid)).not.toContain('cl-db')
  })
})

describe('snapshots (pve-guest-common PVE::AbstractConfig snapshot_create / snapshot_delete)', () => {
  it('createSnapshot, snapshots without `current`, the digest changes, deleteSnapshot; a used name fails in the task', async () => {
    const id = vmid()
    await createVm(id)
    const before = (await c.guestConfig('pve1', 'qemu', id)).digest
    await c.waitTaskOk(await c.createSnapshot('pve1', 'qemu', id, 'proxops-a', { description: 'safety' }), fastWait)
    const cfg = await c.guestConfig('pve1', 'qemu', id)
    expect(cfg.digest).not.toBe(before)
    expect(cfg.values.parent).toBe('proxops-a')
    const list = await c.readOnly().snapshots('pve1', 'qemu', id)
    expect(list).toEqual([{ name: 'proxops-a', snaptime: expect.any(Number) as number, description: 'safety' }])
    const again = await c.waitTask(await c.createSnapshot('pve1', 'qemu', id, 'proxops-a'), fastWait)
    expect(again.ok).toBe(false)
    expect(again.exitstatus).toContain(`snapshot name 'proxops-a' already used`)
    await c.waitTaskOk(await c.deleteSnapshot('pve1', 'qemu', id, 'proxops-a'), fastWait)
    expect(await c.snapshots('pve1', 'qemu', id)).toEqual([])
    expect((await c.guestConfig('pve1', 'qemu', id)).values.parent).toBeUndefined()
  })
})

describe('migration (qemu-server migrate_vm_precondition and migrate_vm)', () => {
  it('migratePrecondition reads the local disks and allowed nodes; migrateGuest moves the VM with its disk', async () => {
    const id = vmid()
    await createVm(id)
    const pre = await c.readOnly().migratePrecondition('pve1', 'qemu', id)
    expect(pre).toMatchObject({
      running: false,
      allowedNodes: ['pve2', 'pve3'],
      localResources: [],
      mappedResources: [],
      localDisks: [{ volid: `local-lvm:vm-${id}-disk-0`, cdrom: false, drive: 'scsi0' }],
    })
    expect(Object.keys(pre.notAllowed)).toEqual(['pve2', 'pve3'])
    const task = await c.migrateGuest('pve1', 'qemu', id, { target: 'pve2', 'with-local-disks': 1 })
    expect(task.upid).toContain(':qmigrate:')
    await c.waitTaskOk(task, fastWait)
    expect((await c.guestConfig('pve2', 'qemu', id)).values.scsi0).toContain(`local-lvm:vm-${id}-disk-0`)
  })

  it('migratePrecondition names the snapshots that reference each local disk (foreach_volid referenced_in_snapshot)', async () => {
    const id = vmid()
    await createVm(id)
    for (const snapname of ['b-second', 'a-first'])
      await c.waitTaskOk(await c.createSnapshot('pve1', 'qemu', id, snapname), fastWait)
    const pre = await c.readOnly().migratePrecondition('pve1', 'qemu', id)
    expect(pre.localDisks).toEqual([
      { volid: `local-lvm:vm-${id}-disk-0`, cdrom: false, drive: 'scsi0', snapshots: ['a-first', 'b-second'] },
    ])
  })
})

describe('artifacts', () => {
  it('download-url with a checksum; re-download without one fails in the task', async () => {
    const url = 'https://images.example/alpine-virt.iso?x=1&y=2'
    sim.control.setRemoteFile(url, { content: 'alpine iso bytes' })
    const checksum = sim.control.remoteChecksum(url, 'sha256')
    const params = { url, filename: 'alpine-virt.iso', content: 'iso', checksum, 'checksum-algorithm': 'sha256' }
    await c.waitTaskOk(await c.downloadUrl('pve1', 'local', params), fastWait)
    expect(await c.storageContent('pve1', 'local', 'iso')).toContainEqual(
      expect.objectContaining({ volid: 'local:iso/alpine-virt.iso' }),
    )
    const again = await c.waitTask(
      await c.downloadUrl('pve1', 'local', { url, filename: 'alpine-virt.iso', content: 'iso' }),
      fastWait,
    )
    expect(again.ok).toBe(false)
    expect(again.exitstatus).toMatch(/refusing to override existing file/)
  })

  it('a wrong file extension is PVE_PARAM', async () => {
    const err = await failure(
      c.downloadUrl('pve1', 'local', { url: 'https://x/y.bin', filename: 'y.bin', content: 'iso' }),
    )
    expect(err.code).toBe('PVE_PARAM')
    expect((err as PveParamError).params.filename).toMatch(/extension/)
  })
})

describe('error classes from the simulator', () => {
  it('AlreadyExists on create with a used vmid', async () => {
    const id = vmid()
    await createVm(id)
    expect((await failure(c.createGuest('pve1', 'qemu', { vmid: id }))).code).toBe('PVE_ALREADY_EXISTS')
  })

  it('Locked with the lock value', async () => {
    const id = vmid()
    await createVm(id)
    sim.control.setLock(id, 'backup')
    try {
      const err = await failure(c.updateConfig('pve1', 'qemu', id, { name: 'x' }, { sync: true }))
      expect(err.code).toBe('PVE_LOCKED')
      expect((err as { lock?: string }).lock).toBe('backup')
    } finally {
      sim.control.setLock(id, null)
    }
  })

  it('LockTimeout, and retryOnLockTimeout gets through once the lock is released', async () => {
    const id = vmid()
    await createVm(id)
    sim.control.setFlockContention(id, true)
    const err = await failure(c.updateConfig('pve1', 'qemu', id, { name: 'locked' }, { sync: true }))
    expect(err.code).toBe('PVE_LOCK_TIMEOUT')
    let attempts = 0
    await retryOnLockTimeout(
      async () => {
        if (++attempts === 2) sim.control.setFlockContention(id, false)
        return c.updateConfig('pve1', 'qemu', id, { name: 'unlocked' }, { sync: true })
      },
      { baseDelayMs: 5 },
    )
    expect(attempts).toBe(2)
    expect((await c.guestConfig('pve1', 'qemu', id)).values.name).toBe('unlocked')
  })

  it('NotFound for a VM on the wrong node', async () => {
    const id = vmid()
    await createVm(id)
    const err = await failure(c.guestConfig('pve2', 'qemu', id))
    expect(err.code).toBe('PVE_NOT_FOUND')
  })

  it('NotImplemented for an unknown path', async () => {
    const err = await failure(c.get('/nodes/{node}/no-such-endpoint', { pathParams: { node: 'pve1' } }))
    expect(err.code).toBe('PVE_NOT_IMPLEMENTED')
    expect(err.status).toBe(501)
  })

  it('Transient: reads retry through a 5xx/596 burst; writes are not retried', async () => {
    const before = events.length
    sim.control.failNext({ method: 'GET', path: '/version', status: 503, count: 1 })
    sim.control.failNext({ method: 'GET', path: '/version', status: 596, count: 1 })
    expect((await c.version()).release).toBe('9.1')
    expect(events.slice(before).map((e) => e.status)).toEqual([503, 596, 200])
    const requests = sim.stats.requests.length
    sim.control.failNext({ method: 'POST', status: 596, count: 1 })
    const err = await failure(c.createGuest('pve1', 'qemu', { vmid: vmid() }))
    expect(err.code).toBe('PVE_TRANSIENT')
    expect(err.status).toBe(596)
    expect(sim.stats.requests.length - requests).toBe(1)
  })

  it('Transient: a reset connection is retried for reads; a write without an answer times out and is not repeated', async () => {
    const before = events.length
    sim.control.failNext({ method: 'GET', path: '/version', network: 'reset', count: 1 })
    expect((await c.version()).release).toBe('9.1')
    expect(events.slice(before).map((e) => [e.status, e.errorCode])).toEqual([
      [undefined, 'PVE_TRANSIENT'],
      [200, undefined],
    ])
    const id = vmid()
    await createVm(id)
    const posts = () => sim.stats.requests.filter((r) => r.method === 'POST').length
    const postsBefore = posts()
    sim.control.failNext({ method: 'POST', network: 'hang', count: 1 })
    const err = await failure(c.start('pve1', 'qemu', id, { timeoutMs: 200 }))
    expect(err.code).toBe('PVE_TRANSIENT')
    expect(err.message).toMatch(/no answer within 200 ms; the change may still have been applied/)
    expect(posts() - postsBefore).toBeLessThanOrEqual(1)
  })

  it('Transient: an offline node answers 595', async () => {
    sim.control.setNodeOnline('pve3', false)
    const err = await failure(c.listGuests('pve3', 'qemu'))
    expect(err.code).toBe('PVE_TRANSIENT')
    expect(err.status).toBe(595)
    expect((await c.nodes()).find((n) => n.node === 'pve3')!.status).toBe('offline')
  })

  it('TaskFailed with the exit status and log; WARNINGS: n succeeds', async () => {
    const id = vmid()
    await createVm(id)
    sim.control.setTaskBehaviour('qmstart', {
      fail: "can't lock file '/var/lock/qemu-server/lock-1.conf' - got timeout",
    })
    try {
      const err = await failure(c.waitTaskOk(await c.start('pve1', 'qemu', id), fastWait))
      expect(err).toMatchObject({ code: 'PVE_TASK_FAILED', reason: 'PVE_LOCK_TIMEOUT' })
      expect((err as PveTaskFailedError).log.length).toBeGreaterThan(0)
    } finally {
      sim.control.setTaskBehaviour('qmstart', null)
    }
    sim.control.setTaskBehaviour('qmstart', { warnings: 2 })
    try {
      const result = await c.waitTaskOk(await c.start('pve1', 'qemu', id), fastWait)
      expect(result.exitstatus).toBe('WARNINGS: 2')
    } finally {
      sim.control.setTaskBehaviour('qmstart', null)
    }
  })

  it('TaskTimeout while a task keeps running; the brief 400 after dispatch is waited out', async () => {
    const id = vmid()
    await createVm(id)
    sim.control.setTaskBehaviour('qmstart', { hold: true })
    try {
      const err = await failure(c.waitTask(await c.start('pve1', 'qemu', id), { pollIntervalMs: 20, timeoutMs: 100 }))
      expect(err).toMatchObject({ code: 'PVE_TASK_TIMEOUT', lastStatus: 'running' })
    } finally {
      sim.control.setTaskBehaviour('qmstart', null)
    }
    // wide enough that even a slow first poll lands inside it
    sim.control.setNoSuchTaskWindow(1_000)
    try {
      const ref = await c.stop('pve1', 'qemu', id)
      expect((await c.waitTask(ref, { pollIntervalMs: 20 })).ok).toBe(true)
      expect(events.some((e) => e.status === 400 && e.path === '/nodes/{node}/tasks/{upid}/status')).toBe(true)
    } finally {
      sim.control.setNoSuchTaskWindow(0)
    }
  })

  it('the request hook reports path templates, never concrete ids', () => {
    expect(events.length).toBeGreaterThan(20)
    for (const e of events) {
      expect(e.path).not.toMatch(/\/\d{3,}|UPID:/)
      expect(e.latencyMs).toBeGreaterThanOrEqual(0)
    }
  })
})
