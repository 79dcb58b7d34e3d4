/**
 * Waiting for an HA-managed guest to reach a power state (docs/safety.md#ha). PVE only records the request: the
 * CRM acts a cycle or more later (PVE::HA::Manager), so the executor polls the guest. It stops waiting as soon as
 * HA will not bring the guest there, instead of waiting out the task timeout:
 *   - the manager reports the service in `error` (PVE::HA::Config::get_service_status: `ha.state` of the guest's
 *     status is the manager's service state; only a `disabled` request takes it out, next_state_error);
 *   - the resources config no longer requests the state (an admin's `ha-manager set`, a stop command queued by an
 *     earlier, killed apply that the CRM ran after this start: update_crm_commands writes `state: stopped`), or
 *     the resource is gone.
 * It is done when the guest is in the state and the manager's service state says the same (so a guest that is
 * stopped while HA is about to start it is not taken as stopped).
 * HA may move the guest while it waits (a failed start is relocated: PVE::HA::Manager next_state_started with
 * max_relocate): a status read that fails looks the guest up in /cluster/resources and follows it.
 */
import type { GuestType, HaItem } from '@proxops/pve-client/wire'
import { ActionFailure, type ActionContext } from '../../kit/runners.js'

export type HaPower = 'running' | 'stopped'

export interface HaWait {
  node: string
  guest: GuestType
  vmid: number
  want: HaPower
  /** what was sent, for the messages (`start`, `update HA resource vm:100`) */
  what: string
  timeoutMs: number
  /**
   * the config states that request `want`, read from resources.cfg each poll; absent: the request reaches the
   * config only in the CRM's next round (a `crm-command stop`), so the config cannot tell yet
   */
  requestedBy?: readonly string[]
  /** the request is `disabled`: the one way out of `error` (next_state_error), so `error` is where it starts */
  leavesError?: boolean
}

/** PVE::HA::Config::read_and_check_resources_config: no state = started, `enabled` = started */
export const configuredState = (r: HaItem): string =>
  r.state === undefined || r.state === 'enabled' ? 'started' : r.state

export const sidOf = (guest: GuestType, vmid: number): string => `${guest === 'qemu' ? 'vm' : 'ct'}:${vmid}`

/**
 * The manager's service state has caught up with the power state: a guest that is already stopped while its
 * service is still `request_start` (a request of the config not yet carried out) is about to run again. No state
 * (not yet in the manager's status): the power state alone.
 */
function managerAgrees(haState: string | undefined, want: HaPower): boolean {
  return haState === undefined || haState === (want === 'running' ? 'started' : 'stopped')
}

/** Why HA no longer requests `w.want` of the guest, or undefined while it does (one read of resources.cfg). */
async function noLongerRequested(w: HaWait, ctx: ActionContext): Promise<string | undefined> {
  if (w.requestedBy === undefined) return undefined
  const sid = sidOf(w.guest, w.vmid)
  const resource = (await ctx.reader.haConfig('resources')).find((r) => r.sid === sid)
  if (resource === undefined) return `${sid} is no longer an HA resource`
  const state = configuredState(resource)
  if (w.requestedBy.includes(state)) return undefined
  return `HA no longer requests ${sid} ${w.want}: its requested state is now ${JSON.stringify(state)} (set by an admin, or by a stop command an earlier apply queued that the HA manager ran after this request)`
}

/** Polls until the guest is in `w.want`; fails at once when HA will not bring it there, else at the timeout. */
export async function awaitHaPower(w: HaWait, ctx: ActionContext): Promise<void> {
  const label = `${w.guest} ${w.vmid}`
  const started = ctx.now()
  let node = w.node
  for (;;) {
    const read = await statusOn(node, w, ctx)
    node = read.node
    const status = read.status
    if (status.status === w.want && managerAgrees(status.haState, w.want)) return
    if (status.haState === 'error' && w.leavesError !== true)
      throw new ActionFailure(
        `${w.what}: HA reports ${label} in state error${node === w.node ? '' : ` on ${node}, where it relocated the guest`} (its ${w.want === 'running' ? 'start' : 'stop'} failed on the node; see the node's task list); fix the cause, set spec.ha.state: disabled (with spec.state: stopped) and apply, then set both back (docs/safety.md#ha-error)`,
      )
    const gone = await noLongerRequested(w, ctx)
    if (gone !== undefined)
      throw new ActionFailure(
        `${w.what}: ${label} is still ${status.status}, and ${gone}; not waiting for it (the next cycle plans from what HA requests now)`,
      )
    if (ctx.now() - started >= w.timeoutMs)
      throw new ActionFailure(
        `${w.what}: ${label} is HA managed and still ${status.status} after ${Math.round(w.timeoutMs / 1000)} s (HA state ${status.haState ?? 'unknown'}); not waiting longer`,
      )
    await ctx.sleep(ctx.taskPollIntervalMs)
  }
}

/** The guest's status on `node`, or on the node /cluster/resources now places it on when that read fails. */
async function statusOn(
  node: string,
  w: HaWait,
  ctx: ActionContext,
): Promise<{ node: string; status: Awaited<ReturnType<ActionContext['reader']['guestStatus']>> }> {
  try {
    return { node, status: await ctx.reader.guestStatus(node, w.guest, w.vmid) }
  } catch (error) {
    const moved = (await ctx.reader.clusterResources('vm')).find(
      (r) => r.vmid === w.vmid && r.type === w.guest && r.node !== undefined && r.node !== node,
    )?.node
    if (moved === undefined) throw error
    return { node: moved, status: await ctx.reader.guestStatus(moved, w.guest, w.vmid) }
  }
}
