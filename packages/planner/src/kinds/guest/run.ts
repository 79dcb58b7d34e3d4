/**
 * Running the guest kind's requests: create, clone, config writes (never a create form over a live volume),
 * resizes, disk moves, power (through HA for an HA-managed guest), template conversion, delete and safety snapshots.
 */
import type { GuestType } from '@proxops/pve-client/wire'
import type { Action, PveRequest } from '../../plan-types.js'
import { resolveParams } from '../../kit/params.js'
import {
  ActionFailure,
  call,
  digestOf,
  type ActionContext,
  type RequestOf,
  type RequestRun,
  type Runners,
  type TaskRecord,
} from '../../kit/runners.js'
import { isCreateForm, isEmptySlot, sizeBytes, volumeBytes } from './volumes.js'
import { safetySnapshotDescription, safetySnapshotName, safetySnapshotsOf } from './snapshots.js'
import { awaitHaPower } from '../ha/await-power.js'

export const guestRunners = {
  createGuest: async (request, { ctx, tasks, secrets }) => {
    const { params, secrets: s } = await resolveParams(request.params, ctx.secrets)
    secrets.push(...s)
    await call('create', ctx, tasks, () => ctx.writer.createGuest(request.node, request.guest, params))
  },
  cloneGuest: async (request, { ctx, tasks, secrets }) => {
    if (Number(request.params.newid) === request.vmid)
      throw new ActionFailure(`refused: clone source and target are both vmid ${request.vmid}`)
    const { params, secrets: s } = await resolveParams(request.params, ctx.secrets)
    secrets.push(...s)
    await call('clone', ctx, tasks, () => ctx.writer.cloneGuest(request.node, request.guest, request.vmid, params))
  },
  updateConfig: (request, run) => updateConfig(request, run),
  resizeDisk: async (request, { ctx, tasks }) => {
    if (request.guest === 'lxc') {
      await resizeLxc(request, ctx, tasks)
      return
    }
    await call('resize', ctx, tasks, () => {
      const digest = digestOf(ctx, request)
      return ctx.writer.resizeDisk(
        request.node,
        request.guest,
        request.vmid,
        request.disk,
        request.size,
        digest !== undefined ? { digest } : {},
      )
    })
  },
  moveDisk: async (request, { ctx, tasks }) => {
    // `delete`: PVE frees the source only once its copy is in the config (qemu-server move_vm_disk, pve-container
    // move_volume); the task ends when both are done
    const { node, guest, vmid } = request
    await call('move disk', ctx, tasks, () => {
      const digest = digestOf(ctx, request)
      return ctx.writer.moveDisk(node, guest, vmid, request.disk, request.storage, {
        delete: true,
        ...(digest !== undefined ? { digest } : {}),
      })
    })
    // the move rewrote the config: the guest's later requests planned against the same digest send the new one
    if (request.digest !== undefined) {
      const after = await ctx.reader.guestConfig(node, guest, vmid)
      ctx.digests?.set(`${node}/${guest}/${vmid}/${request.digest}`, after.digest)
    }
  },
  start: async (request, { ctx, tasks }) => {
    const sent = tasks.length
    await call(
      'start',
      ctx,
      tasks,
      () => ctx.writer.start(request.node, request.guest, request.vmid),
      /already running/,
    )
    await awaitHaPowerOf(request, 'running', tasks.slice(sent), ctx, ctx.taskTimeoutMs)
  },
  stop: async (request, { ctx, tasks }) => {
    const sent = tasks.length
    await call('stop', ctx, tasks, () => ctx.writer.stop(request.node, request.guest, request.vmid), /not running/)
    await awaitHaPowerOf(request, 'stopped', tasks.slice(sent), ctx, ctx.taskTimeoutMs)
  },
  shutdown: async (request, { ctx, tasks }) => {
    const sent = tasks.length
    const timeoutMs = (request.timeoutSeconds + 60) * 1000
    await call(
      'shutdown',
      ctx,
      tasks,
      () =>
        ctx.writer.shutdown(request.node, request.guest, request.vmid, {
          timeoutSeconds: request.timeoutSeconds,
          forceStop: request.forceStop,
        }),
      /not running/,
      timeoutMs,
    )
    // an HA guest still runs when its hastop task ends: nothing after this (the config write) may start yet
    await awaitHaPowerOf(request, 'stopped', tasks.slice(sent), ctx, timeoutMs)
  },
  reboot: async (request, { ctx, tasks }) => {
    await call('reboot', ctx, tasks, () => ctx.writer.reboot(request.node, request.guest, request.vmid))
  },
  markTemplate: async (request, { ctx, tasks }) => {
    const sent = tasks.length
    await call('mark template', ctx, tasks, () => ctx.writer.markTemplate(request.node, request.guest, request.vmid))
    // pve-container answers null and converts in a worker (PVE::API2::LXC `template`, task vztemplate); a writer
    // that cannot hand over that worker leaves the wait to us: as long as a task may take, never a fixed few polls
    if (tasks.length === sent) await awaitTemplate(request, ctx)
  },
  deleteGuest: async (request, { ctx, tasks }) => {
    await call('delete', ctx, tasks, () => ctx.writer.deleteGuest(request.node, request.guest, request.vmid))
  },
  snapshot: (request, { ctx, tasks, notes }) => safetySnapshot(request, ctx, tasks, notes),
  migrate: async (request, { ctx, tasks }) => {
    const { params } = await resolveParams(request.params, ctx.secrets)
    // the qmigrate / vzmigrate task ends once the guest's config is on the target (PVE::AbstractMigrate phase3)
    await call('migrate', ctx, tasks, () =>
      ctx.writer.migrateGuest(request.node, request.guest, request.vmid, { ...params, target: request.target }),
    )
  },
} satisfies Runners

async function updateConfig(request: RequestOf<'updateConfig'>, { ctx, tasks, secrets }: RequestRun): Promise<void> {
  const { params, secrets: s } = await resolveParams(request.params, ctx.secrets)
  secrets.push(...s)
  let digest = digestOf(ctx, request)
  const createForms = Object.entries(params).filter(
    ([key, value]) => typeof value === 'string' && isCreateForm(request.guest, key, value),
  )
  const moved = Object.entries(request.moved ?? {})
  if (createForms.length > 0 || (request.onlyIfAbsent?.length ?? 0) > 0 || moved.length > 0) {
    // read just before the write: keys already set are not rewritten, a create form never lands on a volume, and a
    // moved slot's rewrite names the volume the move left there
    const live = await ctx.reader.guestConfig(request.node, request.guest, request.vmid)
    if (digest !== undefined && live.digest !== digest)
      throw new ActionFailure(
        `config of ${request.guest} ${request.vmid} changed since plan (digest mismatch); the next cycle re-plans`,
      )
    digest ??= live.digest
    for (const [key, old] of moved) {
      const now = live.values[key]?.split(',')[0]?.replace(/^(?:file|volume)=/, '')
      const value = params[key]
      if (now === undefined || typeof value !== 'string' || !value.includes(old))
        throw new ActionFailure(`refused: ${key} no longer holds a volume moved from ${old}; the next cycle re-plans`)
      params[key] = value.replace(old, now)
    }
    // an empty CD drive (`none`) the clone inherited is an empty slot, as the next plan would see it
    for (const key of request.onlyIfAbsent ?? []) if (!isEmptySlot(live.values[key])) delete params[key]
    for (const [key] of createForms) {
      const current = live.values[key]
      if (key in params && !isEmptySlot(current)) {
        throw new ActionFailure(`refused: ${key} would be allocated over the live volume ${current!.split(',')[0]}`)
      }
    }
  }
  if (Object.keys(params).length === 0) return
  await call('update', ctx, tasks, () =>
    ctx.writer.updateConfig(request.node, request.guest, request.vmid, params, digest !== undefined ? { digest } : {}),
  )
}

/**
 * A safety snapshot (docs/safety.md): the config must still be the planned one; the guest's older safety
 * snapshots (named `proxops-<time>` and marked for this entry) are pruned to the newest `keep - 1` first (so a
 * prune that keeps failing never piles snapshots up), then `proxops-<UTC time>` is taken with the mark and
 * confirmed listed. A lookalike is left alone and noted. The config read after it must match the one read before
 * apart from `parent`: the later actions of the guest then send the new digest in place of the planned one.
 */
async function safetySnapshot(
  request: Extract<PveRequest, { call: 'snapshot' }>,
  ctx: ActionContext,
  tasks: TaskRecord[],
  notes: string[],
): Promise<void> {
  const { node, guest, vmid } = request
  const { writer, reader } = ctx
  const create = writer.createSnapshot?.bind(writer)
  const remove = writer.deleteSnapshot?.bind(writer)
  const list = reader.snapshots?.bind(reader)
  if (!create || !remove || !list) throw new ActionFailure('this PVE client cannot take snapshots')
  const before = await reader.guestConfig(node, guest, vmid)
  // a disk move of this plan rewrote the config first: it left the digest it replaced the planned one with
  if (before.digest !== digestOf(ctx, request))
    throw new ActionFailure(`config of ${guest} ${vmid} changed since plan (digest mismatch); the next cycle re-plans`)
  const existing = await list(node, guest, vmid)
  const { ours, lookalikes } = safetySnapshotsOf(existing, request.mark)
  for (const s of lookalikes)
    notes.push(
      `left snapshot ${s.name} alone: named like a safety snapshot, but its description does not start with this entry's mark ${request.mark} (taken by hand, by another entry, or before safety snapshots were marked); it is never rotated and does not count towards keep: delete it by hand when it is no longer needed`,
    )
  for (const old of ours.slice(0, Math.max(0, ours.length - (request.keep - 1))))
    await call(`delete snapshot ${old.name}`, ctx, tasks, () => remove(node, guest, vmid, old.name))
  const base = safetySnapshotName(ctx.now())
  const taken = new Set(existing.map((s) => s.name))
  let name = base
  for (let n = 2; taken.has(name); n++) name = `${base}-${n}`
  await call(`snapshot ${name}`, ctx, tasks, () =>
    create(node, guest, vmid, name, { description: safetySnapshotDescription(request.mark) }),
  )
  const after = await reader.guestConfig(node, guest, vmid)
  const done = (await list(node, guest, vmid)).find((s) => s.name === name)
  if (done === undefined || done.snapstate !== undefined)
    throw new ActionFailure(`snapshot ${name} is not listed complete after its task ended`)
  const main = (c: typeof before): string => {
    const { parent: _parent, ...rest } = c.values
    return JSON.stringify(
      Object.keys(rest)
        .sort()
        .map((k) => [k, rest[k]]),
    )
  }
  if (main(after) !== main(before))
    throw new ActionFailure(
      `config of ${guest} ${vmid} changed while snapshot ${name} was taken; the next cycle re-plans`,
    )
  ctx.digests?.set(`${node}/${guest}/${vmid}/${request.digest}`, after.digest)
}

/** the UPID's task type (`UPID:node:pid:pstart:starttime:type:id:user:`) */
const taskType = (upid: string): string | undefined => upid.split(':')[5]

/**
 * For an HA-managed guest PVE answers a power request with a `hastart`/`hastop` task that only hands the
 * request to the HA manager and ends OK at once; the guest changes state a CRM cycle or more later (qemu-server
 * vm_start/vm_stop/vm_shutdown, pve-container Status.pm). The change is done when the guest is in the state
 * (kinds/ha/await-power.ts). `hastart` has written `state: started` to resources.cfg before it ends, so a config
 * that says otherwise while we wait means HA will not start the guest; `hastop` queues a CRM command that reaches
 * the config only in the manager's next round, so only `error` ends that wait early.
 */
async function awaitHaPowerOf(
  request: { node: string; guest: GuestType; vmid: number },
  want: 'running' | 'stopped',
  sent: readonly TaskRecord[],
  ctx: ActionContext,
  timeoutMs: number,
): Promise<void> {
  const task = sent[sent.length - 1]
  const type = task ? taskType(task.upid) : undefined
  if (type !== 'hastart' && type !== 'hastop') return
  await awaitHaPower(
    {
      node: request.node,
      guest: request.guest,
      vmid: request.vmid,
      want,
      what: `${type === 'hastart' ? 'start' : 'stop'} failed`,
      timeoutMs,
      ...(type === 'hastart' ? { requestedBy: ['started'] } : {}),
    },
    ctx,
  )
}

const LXC_SIZE_DONE = /disk is already at specified size/
const LXC_SHRINK = /unable to shrink disk size/

/**
 * pve-container resize_vm compares the new size with the volume's real size before forking and answers an
 * equal size (`disk is already at specified size`) or a smaller one (`unable to shrink disk size`) with an
 * immediate 500. So the live config is read just before: a disk that is already at the size (an earlier
 * attempt, an admin) is not resized again. PVE's refusals are explained: they mean the `size=` in the config
 * does not match the volume (`pct rescan` updates it).
 */
async function resizeLxc(
  request: Extract<PveRequest, { call: 'resizeDisk' }>,
  ctx: ActionContext,
  tasks: TaskRecord[],
): Promise<void> {
  const live = await ctx.reader.guestConfig(request.node, 'lxc', request.vmid)
  const digest = digestOf(ctx, request)
  if (digest !== undefined && live.digest !== digest) {
    throw new ActionFailure(
      `config of lxc ${request.vmid} changed since plan (digest mismatch); the next cycle re-plans`,
    )
  }
  const wanted = /^\d/.test(request.size) ? sizeBytes(request.size) : undefined
  const current = volumeBytes('lxc', request.disk, live.values[request.disk] ?? '')
  if (wanted !== undefined && current !== undefined && current >= wanted) return
  try {
    await call('resize', ctx, tasks, () =>
      ctx.writer.resizeDisk(request.node, 'lxc', request.vmid, request.disk, request.size, { digest: live.digest }),
    )
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    const hint = `the size= of ${request.disk} in the config of CT ${request.vmid} does not match its volume; run \`pct rescan --vmid ${request.vmid}\` on ${request.node}, then re-run`
    if (LXC_SIZE_DONE.test(message))
      throw new ActionFailure(`${message}; PVE says the volume is already ${request.size}: ${hint}`)
    if (LXC_SHRINK.test(message))
      throw new ActionFailure(`${message}; PVE says the volume is larger than ${request.size}: ${hint}`)
    throw error
  }
}

export function guestTarget(action: Action): { node: string; guest: GuestType; vmid: number } | undefined {
  for (const r of action.requests) {
    if (r.call === 'createGuest') return { node: r.node, guest: r.guest, vmid: Number(r.params.vmid) }
    if (r.call === 'cloneGuest')
      return {
        node: r.params.target !== undefined ? String(r.params.target) : r.node,
        guest: r.guest,
        vmid: Number(r.params.newid),
      }
  }
  for (const r of action.requests) {
    if (r.call === 'haWrite') {
      if (action.vmid !== undefined && (action.kind === 'VM' || action.kind === 'LXC'))
        return { node: action.node, guest: action.kind === 'VM' ? 'qemu' : 'lxc', vmid: action.vmid }
      continue
    }
    // downloads and backup jobs name no guest
    if ('guest' in r && r.call !== 'createGuest') return { node: r.node, guest: r.guest, vmid: r.vmid }
  }
  return undefined
}

/**
 * Waits until a guest's config says `template: 1`, polling every task poll interval, bounded by the task timeout:
 * the conversion of a template whose worker the writer did not return (see `markTemplate` above).
 */
async function awaitTemplate(request: { node: string; guest: GuestType; vmid: number }, ctx: ActionContext) {
  const started = ctx.now()
  for (;;) {
    const config = await ctx.reader.guestConfig(request.node, request.guest, request.vmid)
    if (config.values.template === '1') return
    if (ctx.now() - started >= ctx.taskTimeoutMs)
      throw new ActionFailure(
        `mark template: ${request.guest} ${request.vmid} is not a template ${Math.round(ctx.taskTimeoutMs / 1000)} s after PVE accepted the conversion (reconcile.task-timeout); not waiting longer`,
      )
    await ctx.sleep(ctx.taskPollIntervalMs)
  }
}
