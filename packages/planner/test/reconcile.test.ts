/**
 * reconcile() against the simulator through the real client: its checks fail closed before any write (a
 * secret reference that does not resolve, before PVE is even read; a saved plan the live state no longer
 * gives), and a saved plan that still holds is applied.
 */
import { describe, expect, it } from 'vitest'
import { DEFAULT_POLICY, reconcile, ReconcileError, type Policy } from '../src/index.js'
import { useEnv, actionLines, adminCall, failures, testVm } from './helpers.js'

const env = useEnv()

const policy: Policy = { ...DEFAULT_POLICY, shutdownTimeoutSeconds: 5 }
const execute = { confirmDelayMs: 20, taskPollIntervalMs: 10, progressIntervalMs: 60_000 }
const vm = testVm

describe('reconcile()', () => {
  it('refuses an unresolvable secret reference before any PVE request', async () => {
    const before = env.sim.stats.requests.length
    const desired = {
      cluster: 'homelab',
      manifests: [vm(120, { 'cloud-init-data': { 'ci-password-ref': 'cloud-init.passwords.ops' } })],
    }
    const error = await reconcile({ desired, reader: env.reader, writer: env.writer, policy }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ReconcileError)
    expect((error as ReconcileError).code).toBe('SECRETS')
    expect((error as ReconcileError).message).toContain('cloud-init.passwords.ops')
    expect(env.sim.stats.requests.length).toBe(before)
  })

  it('applies a saved plan that still holds, and refuses one the live state no longer gives', async () => {
    const desired = { cluster: 'homelab', manifests: [vm(121)] }
    const dry = await reconcile({ desired, reader: env.reader, policy })
    expect(actionLines(dry.plan)).toEqual(['create VM/pve1/121(vm121)'])
    expect(dry.report).toBeUndefined()
    expect(env.sim.control.guest(121)).toBeUndefined()

    const applied = await reconcile({
      desired,
      reader: env.reader,
      writer: env.writer,
      policy,
      savedPlan: dry.plan,
      execute,
    })
    expect(failures(applied.report)).toEqual([])
    expect(env.sim.control.guest(121)?.status).toBe('running')

    // a second saved plan made now, then PVE changes under it: the contract no longer holds, nothing is written
    const changed = { cluster: 'homelab', manifests: [vm(121, { tags: ['web'] })] }
    const saved = await reconcile({ desired: changed, reader: env.reader, policy })
    expect(actionLines(saved.plan)).toEqual(['update VM/pve1/121(vm121)'])
    await adminCall(env, 'PUT', '/nodes/pve1/qemu/121/config', { cores: 4 })
    const writes = env.sim.stats.writes()
    const error = await reconcile({
      desired: changed,
      reader: env.reader,
      writer: env.writer,
      policy,
      savedPlan: saved.plan,
    }).catch((e: unknown) => e)
    expect((error as ReconcileError).code).toBe('PLAN_MISMATCH')
    expect((error as ReconcileError).message).toMatch(/changed on PVE since the plan was made/)
    expect(env.sim.stats.writes()).toBe(writes)
    expect(env.sim.control.guest(121)?.config.tags).toBe('proxops')
  })
})
