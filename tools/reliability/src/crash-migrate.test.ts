/**
 * Crash safety of migrations: an apply that moves three guests (a running VM with a local disk: online; a
 * stopped VM: offline; a running container: restart) is killed at a random point, then applied again. From
 * PVE's side a SIGKILL is a client that stops sending: the killed apply's connection answers every later
 * request with an error at once, so nothing it would still have sent reaches PVE, while the tasks PVE had
 * started run to their end (as crash.test.ts lets them). The next apply converges from what PVE shows (the
 * migrate lock, the task, the guest's node): no duplicate guest, no lost disk, no guest left stopped that is
 * desired running, nothing locked, and the diff after it is empty.
 *
 * In-process (the simulator behind the real client, no sockets and no CLI process per seed) so that 30 seeds
 * cost seconds; crash.test.ts kills the real CLI process. PROXOPS_SOAK multiplies the seeds.
 */
import { fc } from '@fast-check/vitest'
import { describe, expect, it } from 'vitest'
import { createInProcessSimulator, type InProcessSimulator } from '@proxops/pve-sim'
import { createPveClient, type PveClient } from '@proxops/pve-client'
import { DEFAULT_POLICY, reconcile, type DesiredState, type Policy } from '@proxops/planner'
import { manifest } from '@proxops/planner/testing'
import { runs } from './soak.js'

const TEMPLATE = 'debian-12-standard_12.7-1_amd64.tar.zst'
const policy: Policy = { ...DEFAULT_POLICY, nodes: ['pve1', 'pve2'], ownershipTag: 'proxops' }
const RUNNING = new Set([400, 402])

/** the estate on `node`: a running VM with a local disk, a stopped VM, a running container */
function estate(node: string): DesiredState {
  const vm = (name: string, vmid: number, state: 'started' | 'stopped') =>
    manifest({
      kind: 'VM',
      metadata: { name },
      spec: {
        node,
        vmid,
        state,
        memory: '512MiB',
        cpu: { type: 'host', cores: 1 },
        disks: [{ storage: 'local-lvm', size: '4GiB' }],
        networks: [{ bridge: 'vmbr0' }],
      },
    })
  return {
    cluster: 'c',
    manifests: [
      manifest({
        kind: 'CTTemplate',
        metadata: { name: 'debian' },
        spec: {
          nodes: ['pve1', 'pve2'],
          storage: 'local',
          filename: TEMPLATE,
          url: `https://example.invalid/${TEMPLATE}`,
        },
      }),
      vm('web', 400, 'started'),
      vm('cold', 401, 'stopped'),
      manifest({
        kind: 'LXC',
        metadata: { name: 'cache' },
        spec: {
          node,
          vmid: 402,
          template: 'debian',
          state: 'started',
          memory: '512MiB',
          cpu: { cores: 1 },
          root: { storage: 'local-lvm', size: '4GiB' },
          networks: [{ bridge: 'vmbr0' }],
        },
      }),
    ],
  }
}

/** a client on the simulator whose connection can be cut: after kill(), every request fails at once */
function killableClient(sim: InProcessSimulator): { client: PveClient; kill(): void } {
  let killed = false
  const inner = sim.dispatcher
  const dispatcher = new Proxy(inner, {
    get(target, prop) {
      if (prop === 'dispatch')
        return (opts: unknown, handler: { onConnect?(abort: () => void): void; onError?(e: Error): void }) => {
          if (!killed) return (target.dispatch as (o: unknown, h: unknown) => boolean)(opts, handler)
          // a connection refused: the exchange opens and fails, as the simulator's own dispatcher ends one
          handler.onConnect?.(() => {})
          queueMicrotask(() => handler.onError?.(Object.assign(new Error('killed'), { code: 'ECONNREFUSED' })))
          return true
        }
      const value: unknown = Reflect.get(target, prop, target)
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value
    },
  })
  const client = createPveClient({
    baseUrl: sim.url,
    auth: { type: 'token', tokenId: sim.token.id, secret: sim.token.secret },
    dispatcher,
    retry: { baseDelayMs: 1, maxDelayMs: 2 },
  })
  // the killed apply gives up on an unreachable PVE at once instead of after 30 s (it is dead anyway); nothing
  // else makes this client's PVE unreachable
  const waitTask: PveClient['waitTask'] = (task, o) => client.waitTask(task, { ...o, unreachableTimeoutMs: 0 })
  const writer = new Proxy(client, {
    get(target, prop) {
      if (prop === 'waitTask') return waitTask
      const value: unknown = Reflect.get(target, prop, target)
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value
    },
  })
  return { client: writer, kill: () => (killed = true) }
}

const fast = {
  taskPollIntervalMs: 2,
  confirmAttempts: 3,
  confirmDelayMs: 2,
  lockRetryDelayMs: 2,
  progressIntervalMs: 60_000,
}

async function apply(client: PveClient, desired: DesiredState) {
  return reconcile({ desired, reader: client, writer: client, policy, execute: fast })
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('SIGKILL during a migration', { timeout: 120_000 }, () => {
  it('the next apply converges: no duplicate, no lost disk, nothing left stopped that should run', async () => {
    // seeds whose kill left a migration running (locked) or unsent for the next cycles
    let interrupted = 0
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 0, max: 12 }),
        async (afterWrites, delayMs) => {
          const sim = createInProcessSimulator({
            nodes: ['pve1', 'pve2'],
            taskDurationMs: 8,
            resourcesLagMs: 0,
            log: () => {},
          })
          try {
            for (const node of ['pve1', 'pve2'])
              sim.control.addVolume(node, 'local', { filename: TEMPLATE, content: 'vztmpl' })
            const setup = killableClient(sim)
            const placed = await apply(setup.client, estate('pve1'))
            expect(placed.report?.results.every((r) => r.status === 'ok')).toBe(true)
            await setup.client.close()

            // the move to pve2, killed once PVE served `afterWrites` writes and `delayMs` more passed
            const doomed = killableClient(sim)
            sim.stats.reset()
            const moving = apply(doomed.client, estate('pve2')).catch(() => undefined)
            let done = false
            void moving.then(() => (done = true))
            while (!done && sim.stats.writes() < afterWrites) await sleep(1)
            await sleep(delayMs)
            doomed.kill()
            await moving
            // the next cycle at once, while PVE's tasks may still run: a guest under the migrate lock is skipped
            const next = killableClient(sim)
            const early = await apply(next.client, estate('pve2'))
            const at = `killed after ${afterWrites} writes + ${delayMs} ms`
            expect(
              (early.report?.results ?? []).filter((r) => r.status === 'failed'),
              at,
            ).toEqual([])
            const locked = early.plan.skips.filter((k) => k.code === 'locked').length
            // the tasks PVE started run to their end; the cycle after picks up what is left
            await sleep(60)
            sim.control.settle()
            const again = await apply(next.client, estate('pve2'))
            expect(
              (again.report?.results ?? []).filter((r) => r.status !== 'ok'),
              at,
            ).toEqual([])
            if (locked > 0 || [...early.plan.actions, ...again.plan.actions].some((x) => x.type === 'migrate'))
              interrupted++
            const check = await reconcile({ desired: estate('pve2'), reader: next.client, policy })
            expect(check.plan.actions).toEqual([])
            expect(check.plan.skips).toEqual([])

            const guests = sim.control.guests()
            expect(guests.map((g) => [g.vmid, g.node])).toEqual([
              [400, 'pve2'],
              [401, 'pve2'],
              [402, 'pve2'],
            ])
            for (const g of guests) {
              expect(g.lock).toBeUndefined()
              expect(g.status).toBe(RUNNING.has(g.vmid) ? 'running' : 'stopped')
              // the disk is in the config and on the target's storage; nothing is left of it on the source
              const volid = g.type === 'qemu' ? g.config.scsi0?.split(',')[0] : g.config.rootfs?.split(',')[0]
              expect(volid).toMatch(/^local-lvm:/)
              const there = await next.client.storageContent('pve2', 'local-lvm')
              expect(there.map((v) => v.volid)).toContain(volid)
              const source = await next.client.storageContent('pve1', 'local-lvm')
              expect(source.map((v) => v.volid)).not.toContain(volid)
            }
            await next.client.close()
          } finally {
            await sim.close()
          }
        },
      ),
      { numRuns: runs(30) },
    )
    expect(interrupted).toBeGreaterThan(0)
  })
})
