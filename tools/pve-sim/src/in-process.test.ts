/**
 * createInProcessSimulator: the same model and HTTP layer as startSimulator, reached through an undici
 * Dispatcher. Every exchange must look as it does over a socket (status line, headers, body), and the
 * transport faults a socket shows (reset, hang, a server that goes away) must reach the client the same way.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { request, type Dispatcher } from 'undici'
import { createInProcessSimulator, startSimulator, type InProcessSimulator, type Simulator } from './index.js'

const token = { id: 'root@pam!proxops', secret: 'in-process-test-secret' }
const common = { tokens: [token], authFailureDelayMs: 0, taskDurationMs: 5, log: () => {} }
const auth = { authorization: `PVEAPIToken=${token.id}=${token.secret}` }

const open: { close(): Promise<void> }[] = []
afterEach(async () => {
  for (const s of open.splice(0)) await s.close()
})
function inProcess(): InProcessSimulator {
  const sim = createInProcessSimulator(common)
  open.push(sim)
  return sim
}
async function overSocket(): Promise<Simulator> {
  const sim = await startSimulator({ ...common, tls: false, controlEndpoint: false })
  open.push(sim)
  return sim
}

async function tasksEnded(...sims: Pick<Simulator, 'control'>[]): Promise<void> {
  while (sims.some((sim) => sim.control.tasks().some((t) => t.status === 'running')))
    await new Promise((resolve) => setTimeout(resolve, 5))
}

interface Exchange {
  status: number
  statusText: string
  contentType: string | undefined
  body: string
}
async function send(
  origin: string,
  dispatcher: Dispatcher | undefined,
  method: Dispatcher.HttpMethod,
  path: string,
  options: { headers?: Record<string, string>; body?: string; signal?: AbortSignal } = {},
): Promise<Exchange> {
  const res = await request(`${origin}/api2/json${path}`, {
    method,
    headers: { ...auth, ...options.headers },
    ...(options.body === undefined ? {} : { body: options.body }),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(dispatcher ? { dispatcher } : {}),
  })
  const contentType = res.headers['content-type']
  return {
    status: res.statusCode,
    statusText: res.statusText,
    contentType: Array.isArray(contentType) ? contentType.join(', ') : contentType,
    body: await res.body.text(),
  }
}

describe('createInProcessSimulator', () => {
  it('answers every exchange as the socket simulator does: data, errors, 401, a create task and its result', async () => {
    const a = inProcess()
    const b = await overSocket()
    const form = { 'content-type': 'application/x-www-form-urlencoded' }
    const script: [Dispatcher.HttpMethod, string, { headers?: Record<string, string>; body?: string }?][] = [
      ['GET', '/version'],
      ['GET', '/cluster/nextid'],
      ['GET', '/nodes/pve1/qemu/100/config'],
      ['GET', '/version', { headers: { authorization: 'PVEAPIToken=root@pam!proxops=wrong' } }],
      ['POST', '/nodes/pve1/qemu', { headers: form, body: 'vmid=100&memory=512&name=web' }],
      ['POST', '/nodes/pve1/qemu', { headers: form, body: 'vmid=100&memory=512' }],
      ['GET', '/nodes/pve1/qemu'],
    ]
    const seen: Exchange[][] = [[], []]
    for (const [method, path, options] of script) {
      // the last read lists the created VM: both create tasks end first, not one sooner than the other
      if (path === '/nodes/pve1/qemu' && method === 'GET') await tasksEnded(a, b)
      seen[0]!.push(await send(a.url, a.dispatcher, method, path, options))
      seen[1]!.push(await send(b.url, undefined, method, path, options))
    }
    // UPIDs carry the start time; everything else is byte for byte the same
    const upidFree = (e: Exchange): Exchange => ({ ...e, body: e.body.replace(/UPID:[^"]+/g, 'UPID') })
    expect(seen[0]!.map(upidFree)).toEqual(seen[1]!.map(upidFree))
    expect(seen[0]!.map((e) => e.status)).toEqual([200, 200, 500, 401, 200, 500, 200])
    expect(a.stats.writes()).toBe(2)
    expect(a.stats.requests.map((r) => `${r.method} ${r.rawPath} ${r.status}`)).toContain('POST /nodes/pve1/qemu 200')
  })

  it('a reset fault reaches the client as a socket error; a hang ends when the request is aborted', async () => {
    const sim = inProcess()
    sim.control.failNext({ network: 'reset', path: '/version' })
    await expect(send(sim.url, sim.dispatcher, 'GET', '/version')).rejects.toMatchObject({ code: 'UND_ERR_SOCKET' })
    sim.control.failNext({ network: 'hang', path: '/version' })
    const abort = new AbortController()
    const hanging = send(sim.url, sim.dispatcher, 'GET', '/version', { signal: abort.signal })
    abort.abort(new Error('client gave up'))
    await expect(hanging).rejects.toThrow('client gave up')
    // the next request is answered: the fault was used up and the dispatcher is still open
    expect((await send(sim.url, sim.dispatcher, 'GET', '/version')).status).toBe(200)
  })

  it('close() drops the requests under way, as a server going away drops its sockets, and refuses new ones', async () => {
    const sim = inProcess()
    sim.control.failNext({ network: 'hang', path: '/version' })
    const hanging = send(sim.url, sim.dispatcher, 'GET', '/version')
    await sim.close()
    await expect(hanging).rejects.toMatchObject({ code: 'UND_ERR_SOCKET' })
    await expect(send(sim.url, sim.dispatcher, 'GET', '/version')).rejects.toMatchObject({ code: 'UND_ERR_SOCKET' })
  })
})
