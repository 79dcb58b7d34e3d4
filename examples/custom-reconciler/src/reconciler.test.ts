import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '@proxops/pve-sim'
import { createPveClient, type PveClient } from '@proxops/pve-client'
import { fleet } from './fleet.js'
import { reconcile } from './reconciler.js'

let sim: Simulator
let client: PveClient
beforeAll(async () => {
  sim = await startSimulator({ taskDurationMs: 10, authFailureDelayMs: 0, log: () => {} })
  client = createPveClient({
    baseUrl: sim.url,
    auth: { type: 'token', tokenId: sim.token.id, secret: sim.token.secret },
    tls: { fingerprint: sim.fingerprint! },
  })
})
afterAll(async () => {
  await client?.close()
  await sim?.close()
})

describe('custom reconciler example', () => {
  it('prints the plan, creates the fleet, converges, scales down within the budget, and leaves other guests alone', async () => {
    const lines: string[] = []
    const print = (line: string) => lines.push(line)
    const nodes = ['pve1', 'pve2']
    const policy = { nodes, pruneBudget: 1, pruneRatioLimit: 1 }

    // a guest made by hand, without the ownership tag: never touched
    await client.waitTask(await client.createGuest('pve2', 'qemu', { vmid: 700, name: 'handmade', memory: 512 }), {
      pollIntervalMs: 10,
    })
    const handmade = sim.control.guest(700)!.digest
    sim.stats.reset()

    const dry = await reconcile({
      cluster: 'lab',
      desired: fleet({ web: 3, nodes, cache: true }),
      reader: client,
      print,
      policy,
    })
    expect(dry.report).toBeUndefined()
    expect(sim.stats.writes()).toBe(0)
    expect(lines[0]).toBe('=== lab: 5 action(s) ===')
    expect(lines.some((l) => l.includes('create') && l.includes('VM/pve2/501(web-2)'))).toBe(true)

    const applied = await reconcile({
      cluster: 'lab',
      desired: fleet({ web: 3, nodes, cache: true }),
      reader: client,
      writer: client,
      print,
      policy,
    })
    expect(applied.report!.summary).toEqual({ actions: 5, ok: 5, failed: 0, skipped: 0 })
    expect(sim.control.guests().map((g) => [g.vmid, g.node, g.status])).toEqual([
      [500, 'pve1', 'running'],
      [501, 'pve2', 'running'],
      [502, 'pve1', 'running'],
      [600, 'pve1', 'running'],
      [700, 'pve2', 'stopped'],
    ])

    const converged = await reconcile({
      cluster: 'lab',
      desired: fleet({ web: 3, nodes, cache: true }),
      reader: client,
      writer: client,
      print,
      policy,
    })
    expect(converged.plan.actions).toEqual([])

    // scale down to one web VM: two prunes wanted, budget 1 per cycle
    const down = await reconcile({
      cluster: 'lab',
      desired: fleet({ web: 1, nodes, cache: true }),
      reader: client,
      writer: client,
      print,
      policy,
    })
    // prunes run in node, then vmid order
    expect(down.plan.actions.map((a) => `${a.type} ${a.vmid}`)).toEqual(['delete 502'])
    expect(down.plan.skips.map((s) => `${s.code} ${s.vmid}`)).toEqual(['prune-budget 501', 'untagged 700'])
    const rest = await reconcile({
      cluster: 'lab',
      desired: fleet({ web: 1, nodes, cache: true }),
      reader: client,
      writer: client,
      print,
      policy,
    })
    expect(rest.plan.actions.map((a) => `${a.type} ${a.vmid}`)).toEqual(['delete 501'])
    expect(sim.control.guests().map((g) => g.vmid)).toEqual([500, 600, 700])
    expect(sim.control.guest(700)!.digest).toBe(handmade)
  })

  it('an invalid fleet fails before anything is read, naming the document and the field', () => {
    expect(() => fleet({ web: 1, nodes: ['pve1'], memory: 'lots' })).toThrow(
      /^manifest VM\/web-1 is invalid:\n {2}spec\.memory: /,
    )
  })
})
