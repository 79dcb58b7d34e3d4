/**
 * Conformance of the HTTP layer, over real HTTPS with raw requests. Each test names the PVE fact it pins
 * (the PVE function they follow). Schema validation is on (apidoc.json from ../shared/pve-api).
 */
import { connect } from 'node:tls'
import { afterAll, beforeAll, describe as suite, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '../index.js'
import { form, raw, waitTask, type RawResponse } from './test-support/raw.js'
import { apidocForTests } from '../apidoc/test-data.js'

// every request here is checked against the PVE API schema: without it (a fresh clone) the file skips
const describe = suite.skipIf(!apidocForTests())

const AUTH_DELAY = 150
let sim: Simulator
let auth: Record<string, string>
const req = (
  method: string,
  path: string,
  opts: { headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<RawResponse> =>
  raw(sim, method, `/api2/json${path}`, { ...opts, headers: { ...auth, ...(opts.headers ?? {}) } })
const formReq = (method: string, path: string, params: Record<string, string>): Promise<RawResponse> => {
  const f = form(params)
  return req(method, path, { headers: f.headers, body: f.body })
}
const rawForm = (method: string, path: string, body: string): Promise<RawResponse> =>
  req(method, path, { headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body })
const jsonReq = (method: string, path: string, body: unknown): Promise<RawResponse> =>
  req(method, path, { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) })

async function createVm(vmid: number, extra: Record<string, string> = {}): Promise<void> {
  const r = await formReq('POST', '/nodes/pve1/qemu', {
    vmid: String(vmid),
    name: `vm-${vmid}`,
    memory: '512',
    ...extra,
  })
  expect(r.status, r.body).toBe(200)
  const st = await waitTask(sim, auth, 'pve1', (r.json as { data: string }).data)
  expect(st.exitstatus).toBe('OK')
}

beforeAll(async () => {
  sim = await startSimulator({ authFailureDelayMs: AUTH_DELAY, taskDurationMs: 20, resourcesLagMs: 0, log: () => {} })
  auth = { Authorization: sim.token.header }
  expect(sim.schemaValidation).toBe(true)
  await createVm(100)
})
afterAll(async () => {
  await sim.close()
})

describe('transport and envelope', () => {
  it('serves HTTPS with a self-signed certificate whose SHA-256 fingerprint is reported as AA:BB:...', async () => {
    expect(sim.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/)
    expect(sim.fingerprint).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/)
    const port = Number(new URL(sim.url).port)
    const peer = await new Promise<{ fp: string; san: string | undefined }>((resolve, reject) => {
      const s = connect({ host: '127.0.0.1', port, ca: sim.caPem }, () => {
        const c = s.getPeerCertificate()
        resolve({ fp: c.fingerprint256, san: c.subjectaltname })
        s.end()
      })
      s.on('error', reject)
    })
    expect(peer.fp).toBe(sim.fingerprint)
    const nodes = (await req('GET', '/nodes')).json as { data: { node: string; ssl_fingerprint: string }[] }
    expect(nodes.data.find((n) => n.node === 'pve1')?.ssl_fingerprint).toBe(sim.fingerprint)
    expect(peer.san).toContain('IP Address:127.0.0.1')
    expect(peer.san).toContain('DNS:localhost')
  })

  it('redirects plain HTTP on the TLS port to https (301 for GET, 308 otherwise)', async () => {
    const plainUrl = sim.url.replace('https://', 'http://')
    const g = await raw({ url: plainUrl }, 'GET', '/api2/json/version?x=1')
    expect([g.status, g.reason, g.headers.location]).toEqual([
      301,
      'Moved Permanently',
      `${sim.url}/api2/json/version?x=1`,
    ])
    const p = await raw({ url: plainUrl }, 'POST', '/api2/json/nodes/pve1/qemu', form({ vmid: '140' }))
    expect([p.status, p.headers.location]).toEqual([308, `${sim.url}/api2/json/nodes/pve1/qemu`])
    expect((await req('GET', '/version')).status).toBe(200)
  })

  it('wraps results in {"data": ...} with PVE headers', async () => {
    const r = await req('GET', '/version')
    expect(r.status).toBe(200)
    expect(r.reason).toBe('OK')
    expect(r.headers['content-type']).toBe('application/json;charset=UTF-8')
    expect(r.headers.server).toBe('pve-api-daemon/3.0')
    expect(r.headers['cache-control']).toBe('max-age=0')
    expect(r.headers.pragma).toBe('no-cache')
    expect(r.headers.expires).toBeDefined()
    expect(r.json).toEqual({ data: expect.objectContaining({ version: expect.any(String), release: '9.1' }) })
  })

  it('gzips bodies over 1 KiB when the client accepts gzip', async () => {
    const plain = await req('GET', '/cluster/resources')
    expect(plain.body.length).toBeGreaterThan(1024)
    expect(plain.headers['content-encoding']).toBeUndefined()
    const r = await req('GET', '/cluster/resources', { headers: { 'Accept-Encoding': 'gzip, deflate' } })
    expect(r.headers['content-encoding']).toBe('gzip')
    expect((r.json as { data: unknown[] }).data.length).toBe((plain.json as { data: unknown[] }).data.length)
    const d = await req('GET', '/cluster/resources', { headers: { 'Accept-Encoding': 'deflate' } })
    expect(d.headers['content-encoding']).toBe('deflate')
    expect((d.json as { data: unknown[] }).data.length).toBe((plain.json as { data: unknown[] }).data.length)
    const small = await req('GET', '/version', { headers: { 'Accept-Encoding': 'gzip' } })
    expect(small.headers['content-encoding']).toBeUndefined()
  })

  it('answers unknown routes with 501 Method ... not implemented (JSON body)', async () => {
    const r = await req('GET', '/nodes/pve1/nonsense')
    expect(r.status).toBe(501)
    expect(r.reason).toBe("Method 'GET /nodes/pve1/nonsense' not implemented")
    expect(r.json).toEqual({ data: null, message: "Method 'GET /nodes/pve1/nonsense' not implemented" })
  })

  it('names the URI-unescaped path in the 501 text', async () => {
    const r = await req('GET', '/nodes/pve1/no%20such')
    expect(r.reason).toBe("Method 'GET /nodes/pve1/no such' not implemented")
  })

  it('answers a schema route the model does not implement with the same 501', async () => {
    const r = await req('GET', '/nodes/pve1/apt/update')
    expect(r.status).toBe(501)
    expect(r.reason).toBe("Method 'GET /nodes/pve1/apt/update' not implemented")
  })

  it('answers a DELETE (or GET) with a body with 501 Unexpected content, empty body', async () => {
    const r = await req('DELETE', '/nodes/pve1/qemu/100', {
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'purge=1',
    })
    expect(r.status).toBe(501)
    expect(r.reason).toBe("Unexpected content for method 'DELETE'")
    expect(r.body).toBe('')
    const g = await req('GET', '/version', { body: 'x=1' })
    expect(g.reason).toBe("Unexpected content for method 'GET'")
  })

  it("answers HEAD with 501 method 'HEAD' not available", async () => {
    const r = await req('HEAD', '/version')
    expect(r.status).toBe(501)
    expect(r.reason).toBe("method 'HEAD' not available")
  })

  it('answers other content types with 506 and bodies over 512 KiB with 501', async () => {
    const r = await req('PUT', '/nodes/pve1/qemu/100/config', {
      headers: { 'Content-Type': 'text/plain' },
      body: 'description=x',
    })
    expect(r.status).toBe(506)
    expect(r.reason).toBe("upload 'Content-Type 'text/plain' not implemented")
    const big = await rawForm('PUT', '/nodes/pve1/qemu/100/config', `description=${'a'.repeat(600 * 1024)}`)
    expect(big.status).toBe(501)
    expect(big.reason).toBe('for data too large')
  })

  it('renders handler errors: 500 with the message as reason phrase and in the body with its newline', async () => {
    const r = await req('GET', '/nodes/pve1/qemu/999/config')
    expect(r.status).toBe(500)
    expect(r.reason).toBe("Configuration file 'nodes/pve1/qemu-server/999.conf' does not exist")
    expect(r.json).toEqual({
      data: null,
      message: "Configuration file 'nodes/pve1/qemu-server/999.conf' does not exist\n",
    })
  })

  it('answers malformed JSON bodies with 500', async () => {
    const r = await req('PUT', '/nodes/pve1/qemu/100/config', {
      headers: { 'Content-Type': 'application/json' },
      body: '{oops',
    })
    expect(r.status).toBe(500)
    expect(r.reason).toMatch(/^malformed JSON string/)
  })
})

describe('parameter decoding', () => {
  it('splits form pairs on ; too: an unescaped tags=a;b sends an unknown parameter b', async () => {
    const r = await rawForm('PUT', '/nodes/pve1/qemu/100/config', 'tags=a;b')
    expect(r.status).toBe(400)
    expect(r.json).toEqual({
      data: null,
      errors: { b: 'property is not defined in schema and the schema does not allow additional properties' },
      message: 'Parameter verification failed.\n',
    })
    const ok = await rawForm('PUT', '/nodes/pve1/qemu/100/config', 'tags=a%3Bb')
    expect(ok.status).toBe(200)
  })

  it('cuts a value at an unescaped second =', async () => {
    const r = await rawForm('PUT', '/nodes/pve1/qemu/100/config', 'ipconfig0=ip=10.0.0.5/24')
    expect(r.status).toBe(400)
    expect((r.json as { errors: Record<string, string> }).errors).toEqual({
      ipconfig0: 'invalid format - value without key, but schema does not define a default key\n',
    })
    expect(
      (await formReq('PUT', '/nodes/pve1/qemu/100/config', { ipconfig0: 'ip=10.0.0.5/24,gw=10.0.0.1' })).status,
    ).toBe(200)
  })

  it('lets query parameters override body parameters', async () => {
    const r = await req('PUT', '/nodes/pve1/qemu/100/config?description=from-query', {
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'description=from-body',
    })
    expect(r.status).toBe(200)
    const cfg = (await req('GET', '/nodes/pve1/qemu/100/config')).json as { data: Record<string, unknown> }
    expect(cfg.data.description).toBe('from-query')
  })

  it('accepts JSON bodies with JSON booleans and numbers', async () => {
    const r = await jsonReq('PUT', '/nodes/pve1/qemu/100/config', { onboot: true, cores: 2 })
    expect(r.status, r.body).toBe(200)
    const cfg = (await req('GET', '/nodes/pve1/qemu/100/config')).json as { data: Record<string, unknown> }
    expect(cfg.data.onboot).toBe(1)
    expect(cfg.data.cores).toBe(2)
  })

  it('joins a repeated key of a -list parameter with commas', async () => {
    expect((await formReq('PUT', '/nodes/pve1/qemu/100/config', { description: 'x', tags: 'a' })).status).toBe(200)
    const r = await rawForm('PUT', '/nodes/pve1/qemu/100/config', 'delete=description&delete=tags')
    expect(r.status, r.body).toBe(200)
    const cfg = (await req('GET', '/nodes/pve1/qemu/100/config')).json as { data: Record<string, unknown> }
    expect(cfg.data.description).toBeUndefined()
    expect(cfg.data.tags).toBeUndefined()
  })

  it('refuses a body parameter that conflicts with the URI', async () => {
    const r = await formReq('PUT', '/nodes/pve1/qemu/100/config', { vmid: '101', description: 'x' })
    expect(r.status).toBe(400)
    expect((r.json as { errors: unknown }).errors).toEqual({
      vmid: 'duplicate parameter (already defined in URI) with conflicting values!',
    })
    expect((await formReq('PUT', '/nodes/pve1/qemu/100/config', { vmid: '100', description: 'x' })).status).toBe(200)
    expect((await jsonReq('PUT', '/nodes/pve1/qemu/100/config', { vmid: 100, description: 'y' })).status).toBe(200)
  })
})

describe('schema validation with PVE texts', () => {
  const expect400 = async (r: Promise<RawResponse>, errors: Record<string, string>): Promise<void> => {
    const res = await r
    expect(res.status, res.body).toBe(400)
    expect(res.reason).toBe('Parameter verification failed.')
    expect(res.json).toEqual({ data: null, errors, message: 'Parameter verification failed.\n' })
  }

  it('an unknown parameter (pool is create/clone-only)', async () => {
    await expect400(formReq('PUT', '/nodes/pve1/qemu/100/config', { pool: 'prod' }), {
      pool: 'property is not defined in schema and the schema does not allow additional properties',
    })
  })

  it('onboot=true in a form', async () => {
    await expect400(formReq('PUT', '/nodes/pve1/qemu/100/config', { onboot: 'true' }), {
      onboot: "type check ('boolean') failed - got 'true'",
    })
  })

  it('a bad enum', async () => {
    await expect400(formReq('PUT', '/nodes/pve1/qemu/100/config', { ostype: 'linux' }), {
      ostype:
        "value 'linux' does not have a value in the enumeration 'other, wxp, w2k, w2k3, w2k8, wvista, win7, win8, win10, win11, l24, l26, solaris'",
    })
  })

  it('bad tag characters', async () => {
    await expect400(formReq('PUT', '/nodes/pve1/qemu/100/config', { tags: 'web;prod!' }), {
      tags: 'invalid format - invalid characters in tag\n',
    })
  })

  it('sshkeys that are not urlencoded', async () => {
    const keys = 'ssh-ed25519 AAAAC3Nza ops@laptop'
    await expect400(formReq('PUT', '/nodes/pve1/qemu/100/config', { sshkeys: keys }), {
      sshkeys: `invalid format - invalid urlencoded string: ${keys}\n`,
    })
    expect((await formReq('PUT', '/nodes/pve1/qemu/100/config', { sshkeys: encodeURIComponent(keys) })).status).toBe(
      200,
    )
  })

  it('import-from with a size other than 0 (raised by the qemu handler)', async () => {
    await expect400(
      formReq('POST', '/nodes/pve1/qemu', {
        vmid: '120',
        scsi0: 'local-lvm:5,import-from=local:import/debian-12-genericcloud-amd64.qcow2',
      }),
      {
        scsi0: "'import-from' requires special syntax - use <storage ID>:0,import-from=<source>",
      },
    )
  })

  it('a missing required parameter, a range and a bad vmid format', async () => {
    await expect400(formReq('POST', '/nodes/pve1/qemu', { name: 'x' }), {
      vmid: 'property is missing and it is not optional',
    })
    await expect400(formReq('PUT', '/nodes/pve1/qemu/100/config', { cores: '0' }), {
      cores: 'value must have a minimum value of 1',
    })
    await expect400(formReq('POST', '/nodes/pve1/qemu', { vmid: '99' }), {
      vmid: 'invalid format - value does not look like a valid VM ID\n',
    })
  })

  it('property strings: sub-path errors inside the drive and net formats', async () => {
    await expect400(formReq('PUT', '/nodes/pve1/qemu/100/config', { net1: 'virtio,bridge=vmbr0,tag=5000' }), {
      net1: 'invalid format - format error\nnet1.tag: value must have a maximum value of 4094\n',
    })
    await expect400(formReq('PUT', '/nodes/pve1/qemu/100/config', { scsi1: 'local-lvm:1,cache=fast' }), {
      scsi1:
        "invalid format - format error\nscsi1.cache: value 'fast' does not have a value in the enumeration 'none, writethrough, writeback, unsafe, directsync'\n",
    })
  })

  it('requires: checksum without checksum-algorithm on download-url', async () => {
    await expect400(
      formReq('POST', '/nodes/pve1/storage/local/download-url', {
        url: 'https://example.com/x.iso',
        content: 'iso',
        filename: 'x.iso',
        checksum: 'abc',
      }),
      { 'checksum-algorithm': "missing property required by 'checksum'" },
    )
  })
})

describe('authentication', () => {
  it('401 No ticket without credentials: empty body, delayed', async () => {
    const r = await raw(sim, 'GET', '/api2/json/version')
    expect(r.status).toBe(401)
    expect(r.reason).toBe('No ticket')
    expect(r.body).toBe('')
    expect(r.ms).toBeGreaterThanOrEqual(AUTH_DELAY - 10)
  })

  it('401 Authentication failed! for a wrong token secret', async () => {
    const r = await raw(sim, 'GET', '/api2/json/version', {
      headers: { Authorization: `PVEAPIToken=${sim.token.id}=wrong` },
    })
    expect(r.status).toBe(401)
    expect(r.reason).toBe('Authentication failed!')
    expect(r.body).toBe('')
    expect(r.body + r.reason).not.toContain(sim.token.secret)
  })

  it('tickets: POST /access/ticket, cookie for reads, CSRFPreventionToken for writes', async () => {
    const login = await raw(
      sim,
      'POST',
      '/api2/json/access/ticket',
      form({ username: 'root@pam', password: sim.rootPassword }),
    )
    expect(login.status).toBe(200)
    const data = (login.json as { data: Record<string, unknown> }).data
    expect(data.username).toBe('root@pam')
    expect(data.ticket).toMatch(/^PVE:root@pam:[0-9A-F]{8}::/)
    expect(data.CSRFPreventionToken).toMatch(/^[0-9A-F]{8}:\S+$/)
    expect(data.cap).toHaveProperty('vms')
    const cookie = `PVEAuthCookie=${encodeURIComponent(String(data.ticket))}`
    expect((await raw(sim, 'GET', '/api2/json/version', { headers: { Cookie: cookie } })).status).toBe(200)
    const f = form({ description: 'by-ticket' })
    const noCsrf = await raw(sim, 'PUT', '/api2/json/nodes/pve1/qemu/100/config', {
      headers: { ...f.headers, Cookie: cookie },
      body: f.body,
    })
    expect(noCsrf.status).toBe(401)
    expect(noCsrf.reason).toBe('Permission denied - invalid csrf token')
    const withCsrf = await raw(sim, 'PUT', '/api2/json/nodes/pve1/qemu/100/config', {
      headers: { ...f.headers, Cookie: cookie, CSRFPreventionToken: String(data.CSRFPreventionToken) },
      body: f.body,
    })
    expect(withCsrf.status).toBe(200)
    // renew by posting the ticket as password
    const renew = await raw(
      sim,
      'POST',
      '/api2/json/access/ticket',
      form({ username: 'root@pam', password: String(data.ticket) }),
    )
    expect(renew.status).toBe(200)
  })

  it('GET /access/ticket and /access/domains need no login', async () => {
    expect((await raw(sim, 'GET', '/api2/json/access/ticket')).json).toEqual({ data: null })
    const d = await raw(sim, 'GET', '/api2/json/access/domains')
    expect((d.json as { data: { realm: string }[] }).data.map((x) => x.realm)).toEqual(['pam', 'pve'])
  })

  it('a failed login is 401 authentication failure with a JSON body', async () => {
    const r = await raw(sim, 'POST', '/api2/json/access/ticket', form({ username: 'root@pam', password: 'wrong' }))
    expect(r.status).toBe(401)
    expect(r.reason).toBe('authentication failure')
    expect(r.json).toEqual({ data: null, message: 'authentication failure\n' })
  })

  it('allowtoken:0 endpoints answer 403 to tokens', async () => {
    const r = await req('POST', '/access/ticket', form({ username: 'root@pam', password: 'x' }))
    expect(r.status).toBe(403)
    expect(r.reason).toBe(
      "Permission check failed (URI '/access/ticket' not available with API token, need proper ticket.",
    )
    expect(r.json).toEqual({
      data: null,
      message: "Permission check failed (URI '/access/ticket' not available with API token, need proper ticket.\n)\n",
    })
  })

  it('methods without permissions in the schema are for root@pam itself: 403 for its tokens', async () => {
    const r = await req('PUT', '/nodes/pve1/disks/wipedisk', form({ disk: '/dev/sdb' }))
    expect(r.status).toBe(403)
    expect(r.reason).toBe('Permission check failed (user != root@pam)')
    expect(r.json).toEqual({ data: null, message: 'Permission check failed (user != root@pam)\n' })
  })

  it('root@pam-only options fail for tokens (also root@pam!x) but not for a root@pam ticket', async () => {
    const r = await formReq('PUT', '/nodes/pve1/qemu/100/config', { args: '-no-reboot' })
    expect(r.status).toBe(500)
    expect(r.reason).toBe("only root can set 'args' config")
    const s = await formReq('POST', '/nodes/pve1/qemu/100/status/stop', { skiplock: '1' })
    expect(s.status).toBe(400)
    expect((s.json as { errors: unknown }).errors).toEqual({ skiplock: 'Only root may use this option.' })
    const login = await raw(
      sim,
      'POST',
      '/api2/json/access/ticket',
      form({ username: 'root@pam', password: sim.rootPassword }),
    )
    const d = (login.json as { data: Record<string, string> }).data
    const f = form({ args: '-no-reboot' })
    const asRoot = await raw(sim, 'PUT', '/api2/json/nodes/pve1/qemu/100/config', {
      headers: {
        ...f.headers,
        Cookie: `PVEAuthCookie=${encodeURIComponent(d.ticket as string)}`,
        CSRFPreventionToken: d.CSRFPreventionToken as string,
      },
      body: f.body,
    })
    expect(asRoot.status, asRoot.body).toBe(200)
  })
})

describe('faults and control', () => {
  it('revoked token: 401 from then on; restore brings it back', async () => {
    sim.control.revokeToken()
    const r = await req('GET', '/version')
    expect(r.status).toBe(401)
    expect(r.reason).toBe('Authentication failed!')
    sim.control.restoreToken()
    expect((await req('GET', '/version')).status).toBe(200)
  })

  it('offline node: requests proxied to it fail 595 without body; /nodes shows it offline', async () => {
    sim.control.setNodeOnline('pve2', false)
    try {
      const r = await req('GET', '/nodes/pve2/qemu')
      expect(r.status).toBe(595)
      expect(r.reason).toBe('No route to host')
      expect(r.body).toBe('')
      const nodes = (await req('GET', '/nodes')).json as { data: { node: string; status: string }[] }
      expect(nodes.data.find((n) => n.node === 'pve2')?.status).toBe('offline')
    } finally {
      sim.control.setNodeOnline('pve2', true)
    }
    expect((await req('GET', '/nodes/pve2/qemu')).status).toBe(200)
  })

  it('unknown node: 500 hostname lookup failed (checked before parameter validation)', async () => {
    const r = await formReq('PUT', '/nodes/pve9/qemu/100/config', { onboot: 'true' })
    expect(r.status).toBe(500)
    expect(r.reason).toBe(
      "hostname lookup 'pve9' failed - failed to get address info for: pve9: Name or service not known",
    )
  })

  it('failure bursts: the next N matching requests fail, then requests pass again', async () => {
    sim.control.failNext({ status: 596, count: 2, method: 'GET', path: '/nodes/{node}/qemu/{vmid}/config' })
    const a = await req('GET', '/nodes/pve1/qemu/100/config')
    const b = await req('GET', '/nodes/pve1/qemu/100/config')
    expect([a.status, a.reason, a.body]).toEqual([596, 'Connection timed out', ''])
    expect(b.status).toBe(596)
    expect((await req('GET', '/nodes/pve1/qemu/100/config')).status).toBe(200)
    sim.control.failNext({ status: 503, path: '/version' })
    const c = await req('GET', '/version')
    expect([c.status, c.reason]).toEqual([503, 'Service Unavailable'])
    expect(c.json).toEqual({ data: null, message: 'Service Unavailable\n' })
  })

  it('network failures: a reset connection, a request that never answers', async () => {
    sim.control.failNext({ network: 'reset', path: '/version' })
    await expect(req('GET', '/version')).rejects.toThrow(/socket hang up|ECONNRESET/)
    expect((await req('GET', '/version')).status).toBe(200)
    sim.control.failNext({ network: 'hang', path: '/version' })
    const hung = req('GET', '/version')
    const outcome = await Promise.race([
      hung.then(
        () => 'answered',
        () => 'failed',
      ),
      new Promise((r) => setTimeout(() => r('pending'), 300)),
    ])
    expect(outcome).toBe('pending')
    hung.catch(() => {}) // dropped when the simulator closes
  })

  it('596 after the proxy timeout while the slow proxied call still completes', async () => {
    const s = await startSimulator({ tls: false, authFailureDelayMs: 0, proxyTimeoutMs: 100, log: () => {} })
    try {
      const h = { Authorization: s.token.header }
      const f = form({ vmid: '130', name: 'slow' })
      // the proxied call outlasts the 100 ms proxy timeout by far, so that timing on a loaded machine cannot blur the two
      s.control.setLatency({ ms: 1000, method: 'POST', path: '/nodes/{node}/qemu' })
      const r = await raw(s, 'POST', '/api2/json/nodes/pve2/qemu', { headers: { ...h, ...f.headers }, body: f.body })
      expect([r.status, r.reason, r.body]).toEqual([596, 'Connection timed out', ''])
      expect(r.ms).toBeLessThan(900)
      expect(s.control.guest(130)).toBeUndefined()
      await new Promise((res) => setTimeout(res, 1200))
      expect(s.control.guest(130)?.node).toBe('pve2')
      // below the timeout the slow answer arrives normally
      s.control.setLatency(0)
      s.control.setLatency({ ms: 50, path: '/nodes/{node}/qemu/{vmid}/config' })
      expect((await raw(s, 'GET', '/api2/json/nodes/pve2/qemu/130/config', { headers: h })).status).toBe(200)
    } finally {
      await s.close()
    }
  })

  it('latency per request', async () => {
    sim.control.setLatency({ ms: 120, path: '/version' })
    try {
      expect((await req('GET', '/version')).ms).toBeGreaterThanOrEqual(110)
    } finally {
      sim.control.setLatency(0)
    }
  })

  it('stats: method, template and status of every request, and a write counter', async () => {
    const before = sim.stats.writes()
    await formReq('PUT', '/nodes/pve1/qemu/100/config', { description: 'count me' })
    await formReq('PUT', '/nodes/pve1/qemu/100/config', { onboot: 'nope' })
    expect(sim.stats.writes()).toBe(before + 1)
    const last = sim.stats.requests.at(-1)
    expect(last).toMatchObject({
      method: 'PUT',
      path: '/nodes/{node}/qemu/{vmid}/config',
      rawPath: '/nodes/pve1/qemu/100/config',
      status: 400,
    })
  })

  it('model controls pass through: drift edits show up in the config', async () => {
    sim.control.driftSet(100, 'memory', '4096')
    const cfg = (await req('GET', '/nodes/pve1/qemu/100/config')).json as { data: Record<string, unknown> }
    expect(cfg.data.memory).toBe('4096')
    expect(sim.control.guest(100)?.config.memory).toBe('4096')
  })

  it('control endpoint on loopback: POST /_sim/control applies a control document', async () => {
    const r = await raw(sim, 'POST', '/_sim/control', {
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ offlineNodes: ['pve3'] }),
    })
    expect(r.status).toBe(200)
    expect((await req('GET', '/nodes/pve3/qemu')).status).toBe(595)
    await raw(sim, 'POST', '/_sim/control', { body: JSON.stringify({ offlineNodes: [] }) })
    expect((await req('GET', '/nodes/pve3/qemu')).status).toBe(200)
    const bad = await raw(sim, 'POST', '/_sim/control', { body: JSON.stringify({ offline: ['pve3'] }) })
    expect(bad.status).toBe(400)
    expect((bad.json as { error: string }).error).toContain('field "offline"')
    const stats = await raw(sim, 'GET', '/_sim/stats')
    expect(stats.json).toMatchObject({
      requests: expect.any(Number),
      writes: expect.any(Number),
      byStatus: expect.objectContaining({ 200: expect.any(Number), 595: expect.any(Number) }),
    })
  })
})

describe('secrets stay out of responses, logs and stats', () => {
  it('a canary in a wrong token secret, a wrong password and cipassword appears nowhere', async () => {
    const CANARY = 'canary-9f8e7d6c5b4a'
    const lines: string[] = []
    const s = await startSimulator({ tls: false, authFailureDelayMs: 0, log: (l) => lines.push(l) })
    try {
      const seen: string[] = []
      const keep = (r: RawResponse): void => {
        seen.push(r.reason, r.body, JSON.stringify(r.headers))
      }
      keep(
        await raw(s, 'GET', '/api2/json/version', {
          headers: { Authorization: `PVEAPIToken=${s.token.id}=${CANARY}` },
        }),
      )
      keep(await raw(s, 'POST', '/api2/json/access/ticket', form({ username: 'root@pam', password: CANARY })))
      const f = form({ vmid: '150', cipassword: CANARY, onboot: 'bad' })
      keep(
        await raw(s, 'POST', '/api2/json/nodes/pve1/qemu', {
          headers: { Authorization: s.token.header, ...f.headers },
          body: f.body,
        }),
      )
      const ok = form({ vmid: '151', cipassword: CANARY })
      keep(
        await raw(s, 'POST', '/api2/json/nodes/pve1/qemu', {
          headers: { Authorization: s.token.header, ...ok.headers },
          body: ok.body,
        }),
      )
      const all = [...seen, ...lines, JSON.stringify(s.stats.requests)].join('\n')
      expect(all).not.toContain(CANARY)
      expect(all).not.toContain(s.token.secret)
    } finally {
      await s.close()
    }
  })
})

describe('versions and modes', () => {
  it('PVE 8.4: the 8.4 schema applies (9.x-only allow-ksm is unknown), /version says 8.4', async () => {
    const s84 = await startSimulator({ pveVersion: '8.4', tls: false, log: () => {}, nodes: ['pve'] })
    try {
      const h = { Authorization: s84.token.header }
      const v = await raw(s84, 'GET', '/api2/json/version', { headers: h })
      expect((v.json as { data: { release: string } }).data.release).toBe('8.4')
      const f = form({ vmid: '100', 'allow-ksm': '1' })
      const r = await raw(s84, 'POST', '/api2/json/nodes/pve/qemu', { headers: { ...h, ...f.headers }, body: f.body })
      expect(r.status).toBe(400)
      expect((r.json as { errors: Record<string, string> }).errors['allow-ksm']).toBe(
        'property is not defined in schema and the schema does not allow additional properties',
      )
      expect(s84.url).toMatch(/^http:\/\//)
    } finally {
      await s84.close()
    }
  })

  it('PVE <= 8.3 style error bodies without message', async () => {
    const old = await startSimulator({ tls: false, errorMessageInBody: false, log: () => {} })
    try {
      const r = await raw(old, 'GET', '/api2/json/nodes/pve1/qemu/999/config', {
        headers: { Authorization: old.token.header },
      })
      expect(r.status).toBe(500)
      expect(r.json).toEqual({ data: null })
    } finally {
      await old.close()
    }
  })

  it('schema checks off: requests reach the handler unvalidated', async () => {
    const off = await startSimulator({ tls: false, schemaValidation: false, log: () => {} })
    try {
      expect(off.schemaValidation).toBe(false)
      const f = form({ pool: 'whatever', description: 'x' })
      const r = await raw(off, 'PUT', '/api2/json/nodes/pve1/qemu/100/config', {
        headers: { Authorization: off.token.header, ...f.headers },
        body: f.body,
      })
      expect(r.status).not.toBe(400)
    } finally {
      await off.close()
    }
  })
})
