import { callRoute } from './harness.js'
import type { Method } from '../http/types.js'
import { PveHttpError } from '../model/errors.js'
import { createCluster, type SimCluster } from '../sim-cluster.js'

/** a simulator with a fake clock for model tests */
export interface Sim {
  sim: SimCluster
  clock: { t: number }
  advance(ms: number): void
  call(method: Method, path: string, params?: Record<string, unknown>): Promise<any>
  /** the PveHttpError a call throws */
  error(method: Method, path: string, params?: Record<string, unknown>): Promise<PveHttpError>
  /** dispatch, let the task finish, and return its final status */
  run(
    method: Method,
    path: string,
    params?: Record<string, unknown>,
  ): Promise<{ upid: string; exitstatus: string; log: string[] }>
}

export function makeSim(
  opts: {
    nodes?: string[]
    pveVersion?: '9.1' | '8.4'
    taskDurationMs?: number
    resourcesLagMs?: number
    estate?: { guests: number }
  } = {},
): Sim {
  const clock = { t: 1_750_000_000_000 }
  const sim = createCluster({
    nodes: opts.nodes ?? ['pve1', 'pve2'],
    pveVersion: opts.pveVersion ?? '9.1',
    seed: 42,
    taskDurationMs: opts.taskDurationMs ?? 1000,
    resourcesLagMs: opts.resourcesLagMs ?? 0,
    now: () => clock.t,
    ...(opts.estate ? { estate: opts.estate } : {}),
  })
  const call = (method: Method, path: string, params: Record<string, unknown> = {}) =>
    callRoute(sim.routes, method, path, params) as Promise<any>
  const s: Sim = {
    sim,
    clock,
    advance: (ms) => {
      clock.t += ms
    },
    call,
    error: async (method, path, params = {}) => {
      try {
        await call(method, path, params)
      } catch (e) {
        if (e instanceof PveHttpError) return e
        throw e
      }
      throw new Error(`expected ${method} ${path} to fail`)
    },
    run: async (method, path, params = {}) => {
      const upid = (await call(method, path, params)) as string
      s.advance(60_000)
      const node = upid.split(':')[1] as string
      const st = (await call('GET', `/nodes/${node}/tasks/${encodeURIComponent(upid)}/status`)) as {
        exitstatus: string
      }
      const log = (await call('GET', `/nodes/${node}/tasks/${encodeURIComponent(upid)}/log`, { limit: 1000 })) as {
        t: string
      }[]
      return { upid, exitstatus: st.exitstatus, log: log.map((l) => l.t) }
    },
  }
  return s
}

/**
 * A dir storage for guest disks (`vmdir`, images and rootdir), added through POST /storage as an admin would:
 * a fresh install's `local` holds no guest disks.
 */
export async function addDirStorage(s: Sim, id = 'vmdir'): Promise<void> {
  await s.call('POST', '/storage', { storage: id, type: 'dir', path: `/srv/${id}`, content: 'images,rootdir' })
}
