/**
 * The `dispatcher` option takes any undici Dispatcher: here the simulator's in-process one, which hands each
 * request to the simulator's HTTP layer without a socket. The client behaves as over HTTPS (answers, error
 * classes, retries of reads, a write without an answer), and leaves a caller's dispatcher open on close().
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createInProcessSimulator, type InProcessSimulator } from '@proxops/pve-sim'
import { createPveClient, type PveClient } from './client.js'
import { PveError } from './errors.js'
import type { RequestEvent } from './transport.js'

const SECRET = 'CANARY-IN-PROCESS-0d0b4a51'
const open: { close(): Promise<void> }[] = []
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close()
})

function setup(secret = SECRET): { sim: InProcessSimulator; client: PveClient; events: RequestEvent[] } {
  const sim = createInProcessSimulator({
    tokens: [{ id: 'root@pam!proxops', secret: SECRET }],
    taskDurationMs: 5,
    authFailureDelayMs: 0,
    log: () => {},
  })
  const events: RequestEvent[] = []
  const client = createPveClient({
    baseUrl: sim.url,
    auth: { type: 'token', tokenId: 'root@pam!proxops', secret },
    dispatcher: sim.dispatcher,
    retry: { retries: 2, baseDelayMs: 1, maxDelayMs: 2 },
    onRequest: (e) => events.push(e),
  })
  open.push(sim, client)
  return { sim, client, events }
}

async function failure(p: Promise<unknown>): Promise<PveError> {
  const err: unknown = await p.then(
    () => undefined,
    (e: unknown) => e,
  )
  if (!(err instanceof PveError)) throw new Error(`expected a PveError, got ${String(err)}`)
  expect(`${err.message} ${JSON.stringify(err)}`).not.toContain(SECRET)
  return err
}

describe('createPveClient({ dispatcher }) over the in-process simulator', () => {
  it('reads, creates through a task, decodes the config and classifies PVE errors', async () => {
    const { sim, client } = setup()
    expect((await client.version()).release).toBe('9.1')
    await client.waitTaskOk(await client.createGuest('pve1', 'qemu', { vmid: 100, name: 'web', memory: 512 }), {
      pollIntervalMs: 2,
    })
    expect((await client.guestConfig('pve1', 'qemu', 100)).values).toMatchObject({ name: 'web', memory: '512' })
    expect(sim.control.guest(100)?.node).toBe('pve1')
    expect((await failure(client.createGuest('pve1', 'qemu', { vmid: 100 }))).code).toBe('PVE_ALREADY_EXISTS')
    expect((await failure(client.guestConfig('pve2', 'qemu', 100))).code).toBe('PVE_NOT_FOUND')
  })

  it('a wrong token secret is PVE_AUTH', async () => {
    const { client } = setup('wrong-secret')
    expect((await failure(client.version())).code).toBe('PVE_AUTH')
  })

  it('a reset read is retried; a write without an answer times out and is not repeated', async () => {
    const { sim, client, events } = setup()
    sim.control.failNext({ method: 'GET', path: '/version', network: 'reset' })
    expect((await client.version()).release).toBe('9.1')
    expect(events.map((e) => [e.status, e.errorCode])).toEqual([
      [undefined, 'PVE_TRANSIENT'],
      [200, undefined],
    ])
    sim.control.failNext({ method: 'POST', network: 'hang' })
    const err = await failure(client.createGuest('pve1', 'qemu', { vmid: 101 }, { timeoutMs: 50 }))
    expect(err.code).toBe('PVE_TRANSIENT')
    expect(err.message).toMatch(/no answer within 50 ms; the change may still have been applied/)
    expect(sim.stats.requests.filter((r) => r.method === 'POST')).toHaveLength(1)
  })

  it("close() leaves the caller's dispatcher open: a second client goes on using it", async () => {
    const { sim, client } = setup()
    await client.close()
    const again = createPveClient({
      baseUrl: sim.url,
      auth: { type: 'token', tokenId: 'root@pam!proxops', secret: SECRET },
      dispatcher: sim.dispatcher,
    })
    open.push(again)
    expect((await again.nodes()).map((n) => n.node)).toEqual(['pve1', 'pve2', 'pve3'])
  })
})
