/**
 * Runs one plan action: its PVE requests in order, each task awaited, then a read-back that confirms the
 * result. Never force-stops, never deletes a running guest, never writes a disk create form over a live
 * volume; a request that PVE refuses ends the action `failed` with PVE's own text (secrets scrubbed).
 */
import { isLockTimeoutMessage } from '@proxops/pve-client/wire'
import type { Action, PveRequest } from '../plan-types.js'
import type { GuestType, TaskRef, TaskResult } from '@proxops/pve-client/wire'
import type { LiveReader, PveWriter } from '../ports.js'
import { redact, resolveParams, type SecretResolver } from './params.js'
import { confirmAction } from './confirm.js'
import { runFirewall } from '../kinds/firewall/execute.js'
import { isCreateForm, isEmptySlot, sizeBytes, volumeBytes } from '../kinds/guest/volumes.js'

export interface ActionContext {
  writer: PveWriter
  reader: LiveReader
  secrets: SecretResolver | undefined
  taskTimeoutMs: number
  downloadTimeoutMs: number
  lockRetries: number
  lockRetryDelayMs: number
  confirmAttempts: number
  confirmDelayMs: number
  progressIntervalMs: number
  taskPollIntervalMs: number
  sleep: (ms: number) => Promise<void>
  now: () => number
  onTaskStarted?: (task: TaskRef) => void
  onTaskRunning?: (task: TaskRef, elapsedMs: number) => void
  /** a request is about to be sent again after PVE's lock timeout (said before the wait, not after) */
  onRetry?: (attempt: number, delayMs: number, reason: string) => void
  /**
   * config digests a safety snapshot replaced this run (a snapshot is a section of the config file, so it changes
   * the digest): `node/type/vmid/planned digest` -> the digest read after the snapshot, shared by every action
   */
  digests?: Map<string, string>
}

/** the digest a request must send: the planned one, or what a safety snapshot of this run turned it into */
function digestOf(ctx: ActionContext, r: { node: string; guest: GuestType; vmid: number; digest?: string }) {
  if (r.digest === undefined) return undefined
  return ctx.digests?.get(`${r.node}/${r.guest}/${r.vmid}/${r.digest}`) ?? r.digest
}

export interface TaskRecord {
  upid: string
  node: string
  exitstatus: string
}

export type ActionOutcome =
  { status: 'ok'; tasks: TaskRecord[] } | { status: 'failed'; error: string; tasks: TaskRecord[] }

/** An action failed; the message is already free of secrets. */
class ActionFailure extends Error {}

export async function runAction(action: Action, ctx: ActionContext): Promise<ActionOutcome> {
  const tasks: TaskRecord[] = []
  const secrets: string[] = []
  let index = 0
  try {
    for (; index < action.requests.length; index++) await runRequest(action.requests[index]!, ctx, tasks, secrets)
    const problem = await confirmAction(action, ctx)
    if (problem) return { status: 'failed', error: `not confirmed by read-back: ${redact(problem, secrets)}`, tasks }
    return { status: 'ok', tasks }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    const restored = await restorePower(action, index, ctx, tasks, secrets)
    return { status: 'failed', error: redact(`${message}${restored}`, secrets), tasks }
  }
}

const RESTART_ACTIONS: ReadonlySet<Action['type']> = new Set(['shutdown-then-update', 'restart'])

/**
 * A restart-class action whose request `failed` failed still ends with its last request when that is the
 * guest's desired power state: the start, if the shutdown was sent (a guest is never left off because a
 * step after its shutdown failed, and no later cycle defers its start on that failure), or the shutdown of a
 * guest desired stopped. Returns what it did, to append to the first error.
 */
async function restorePower(
  action: Action,
  failed: number,
  ctx: ActionContext,
  tasks: TaskRecord[],
  secrets: string[],
): Promise<string> {
  if (!RESTART_ACTIONS.has(action.type)) return ''
  const last = action.requests.length - 1
  const final = action.requests[last]
  if (final === undefined || last <= failed) return ''
  const shutdownSent = action.requests.slice(0, failed + 1).some((r) => r.call === 'shutdown' || r.call === 'stop')
  if (!(final.call === 'start' && shutdownSent) && final.call !== 'shutdown') return ''
  try {
    await runRequest(final, ctx, tasks, secrets)
    return `; desired power state restored (${final.call} sent)`
  } catch (error) {
    return `; restoring the power state also failed: ${error instanceof Error ? error.message : String(error)}`
  }
}

async function runRequest(
  request: PveRequest,
  ctx: ActionContext,
  tasks: TaskRecord[],
  secrets: string[],
): Promise<void> {
  const { writer } = ctx
  switch (request.call) {
    case 'createGuest': {
      const { params, secrets: s } = await resolveParams(request.params, ctx.secrets)
      secrets.push(...s)
      await call('create', ctx, tasks, () => writer.createGuest(request.node, request.guest, params))
      return
    }
    case 'cloneGuest': {
      if (Number(request.params.newid) === request.vmid)
        throw new ActionFailure(`refused: clone source and target are both vmid ${request.vmid}`)
      const { params, secrets: s } = await resolveParams(request.params, ctx.secrets)
      secrets.push(...s)
      await call('clone', ctx, tasks, () => writer.cloneGuest(request.node, request.guest, request.vmid, params))
      return
    }
    case 'updateConfig': {
      const { params, secrets: s } = await resolveParams(request.params, ctx.secrets)
      secrets.push(...s)
      let digest = digestOf(ctx, request)
      const createForms = Object.entries(params).filter(
        ([key, value]) => typeof value === 'string' && isCreateForm(request.guest, key, value),
      )
      if (createForms.length > 0 || (request.onlyIfAbsent?.length ?? 0) > 0) {
        // read just before the write: keys already set are not rewritten, and a create form never lands on a volume
        const live = await ctx.reader.guestConfig(request.node, request.guest, request.vmid)
        if (digest !== undefined && live.digest !== digest)
          throw new ActionFailure(
            `config of ${request.guest} ${request.vmid} changed since plan (digest mismatch); the next cycle re-plans`,
          )
        digest ??= live.digest
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
        writer.updateConfig(request.node, request.guest, request.vmid, params, digest !== undefined ? { digest } : {}),
      )
      return
    }
    case 'resizeDisk':
      if (request.guest === 'lxc') {
        await resizeLxc(request, ctx, tasks)
        return
      }
      await call('resize', ctx, tasks, () => {
        const digest = digestOf(ctx, request)
        return writer.resizeDisk(
          request.node,
          request.guest,
          request.vmid,
          request.disk,
          request.size,
          digest !== undefined ? { digest } : {},
        )
      })
      return
    case 'start': {
      const sent = tasks.length
      await call('start', ctx, tasks, () => writer.start(request.node, request.guest, request.vmid), /already running/)
      await awaitHaPower(request, 'running', tasks.slice(sent), ctx, ctx.taskTimeoutMs)
      return
    }
    case 'stop': {
      const sent = tasks.length
      await call('stop', ctx, tasks, () => writer.stop(request.node, request.guest, request.vmid), /not running/)
      await awaitHaPower(request, 'stopped', tasks.slice(sent), ctx, ctx.taskTimeoutMs)
      return
    }
    case 'shutdown': {
      const sent = tasks.length
      const timeoutMs = (request.timeoutSeconds + 60) * 1000
      await call(
        'shutdown',
        ctx,
        tasks,
        () =>
          writer.shutdown(request.node, request.guest, request.vmid, {
            timeoutSeconds: request.timeoutSeconds,
            forceStop: request.forceStop,
          }),
        /not running/,
        timeoutMs,
      )
      // an HA guest still runs when its hastop task ends: nothing after this (the config write) may start yet
      await awaitHaPower(request, 'stopped', tasks.slice(sent), ctx, timeoutMs)
      return
    }
    case 'reboot':
      await call('reboot', ctx, tasks, () => writer.reboot(request.node, request.guest, request.vmid))
      return
    case 'markTemplate': {
      const sent = tasks.length
      await call('mark template', ctx, tasks, () => writer.markTemplate(request.node, request.guest, request.vmid))
      // pve-container answers null and converts in a worker (PVE::API2::LXC `template`, task vztemplate); a writer
      // that cannot hand over that worker leaves the wait to us: as long as a task may take, never a fixed few polls
      if (tasks.length === sent) await awaitTemplate(request, ctx)
      return
    }
    case 'deleteGuest':
      await call('delete', ctx, tasks, () => writer.deleteGuest(request.node, request.guest, request.vmid))
      return
    case 'firewall':
      await runFirewall(request, ctx.reader, writer)
      return
    case 'snapshot':
      await safetySnapshot(request, ctx, tasks)
      return
    case 'haWrite':
      await haWrite(request, ctx)
      return
    case 'createBackupJob':
    case 'updateBackupJob':
    case 'deleteBackupJob':
      await runBackupRequest(request, ctx)
      return
    case 'createPool':
    case 'updatePool':
    case 'deletePool':
      await poolWrite(request, ctx)
      return
    case 'downloadUrl': {
      const { params, secrets: s } = await resolveParams(request.params, ctx.secrets)
      secrets.push(...s)
      await call(
        'download',
        ctx,
        tasks,
        () => writer.downloadUrl(request.node, request.storage, params),
        undefined,
        ctx.downloadTimeoutMs,
      )
      return
    }
  }
}

/** `proxops-20261201T193000Z`: the UTC time, a valid PVE snapshot name (pve-configid, at most 40 characters) */
export function safetySnapshotName(ms: number): string {
  return `proxops-${new Date(ms)
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/[-:]/g, '')}`
}

/** the names this executor gives (a `-<n>` suffix when a name of the same second is taken); nothing else is pruned */
export const SAFETY_SNAPSHOT = /^proxops-\d{8}T\d{6}Z(?:-\d+)?$/

/**
 * A safety snapshot (docs/safety.md): the config must still be the planned one; the guest's older safety
 * snapshots are pruned to the newest `keep - 1` first (so a prune that keeps failing never piles snapshots up),
 * then `proxops-<UTC time>` is taken and confirmed listed. The config read after it must match the one read
 * before apart from `parent`: the later actions of the guest then send the new digest in place of the planned one.
 */
async function safetySnapshot(
  request: Extract<PveRequest, { call: 'snapshot' }>,
  ctx: ActionContext,
  tasks: TaskRecord[],
): Promise<void> {
  const { node, guest, vmid } = request
  const { writer, reader } = ctx
  const create = writer.createSnapshot?.bind(writer)
  const remove = writer.deleteSnapshot?.bind(writer)
  const list = reader.snapshots?.bind(reader)
  if (!create || !remove || !list) throw new ActionFailure('this PVE client cannot take snapshots')
  const before = await reader.guestConfig(node, guest, vmid)
  if (before.digest !== request.digest)
    throw new ActionFailure(`config of ${guest} ${vmid} changed since plan (digest mismatch); the next cycle re-plans`)
  const existing = await list(node, guest, vmid)
  const ours = existing
    .filter((s) => SAFETY_SNAPSHOT.test(s.name))
    .sort((a, b) => (a.snaptime ?? 0) - (b.snaptime ?? 0) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (const old of ours.slice(0, Math.max(0, ours.length - (request.keep - 1))))
    await call(`delete snapshot ${old.name}`, ctx, tasks, () => remove(node, guest, vmid, old.name))
  const base = safetySnapshotName(ctx.now())
  const taken = new Set(existing.map((s) => s.name))
  let name = base
  for (let n = 2; taken.has(name); n++) name = `${base}-${n}`
  await call(`snapshot ${name}`, ctx, tasks, () =>
    create(node, guest, vmid, name, { description: 'safety snapshot taken by proxops before a disruptive change' }),
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

/** `/cluster/backup` calls answer at once (no task); a missing writer method fails the action, never skips it */
async function runBackupRequest(
  request: Extract<PveRequest, { call: 'createBackupJob' | 'updateBackupJob' | 'deleteBackupJob' }>,
  ctx: ActionContext,
): Promise<void> {
  const { writer } = ctx
  const { params } = 'params' in request ? await resolveParams(request.params, undefined) : { params: {} }
  const send = (): Promise<unknown> | undefined =>
    request.call === 'createBackupJob'
      ? writer.createBackupJob?.(params)
      : request.call === 'updateBackupJob'
        ? writer.updateBackupJob?.(request.id, params)
        : writer.deleteBackupJob?.(request.id)
  const what = request.call === 'createBackupJob' ? 'create' : request.call === 'updateBackupJob' ? 'update' : 'delete'
  try {
    const sent = send()
    if (sent === undefined) throw new ActionFailure(`${what} failed: this PVE writer cannot manage backup jobs`)
    await sent
  } catch (e) {
    if (e instanceof ActionFailure) throw e
    throw new ActionFailure(`${what} failed: ${e instanceof Error ? e.message : String(e)}`)
  }
}

/**
 * Makes one writer call and waits for its task. `alreadyDone` matches PVE errors that mean the goal already
 * holds (start of a running guest, stop of a stopped one). A lock timeout is retried with bounded backoff:
 * PVE did not apply the change, so sending it again is safe.
 */
async function call(
  what: string,
  ctx: ActionContext,
  tasks: TaskRecord[],
  send: () => Promise<TaskRef | null>,
  alreadyDone?: RegExp,
  timeoutMs = ctx.taskTimeoutMs,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    let error: string
    try {
      const task = await send()
      if (task === null) return
      const result = await waitWithProgress(task, ctx, timeoutMs)
      tasks.push({ upid: task.upid, node: task.node, exitstatus: result.exitstatus })
      if (result.ok) return
      error = result.exitstatus
    } catch (e) {
      if (e instanceof ActionFailure) throw e
      error = e instanceof Error ? e.message : String(e)
    }
    if (alreadyDone?.test(error)) return
    // `can't lock file ... got timeout` and `cfs-lock '...' error: got lock request timeout`
    if (isLockTimeoutMessage(error) && attempt < ctx.lockRetries) {
      const delayMs = ctx.lockRetryDelayMs * 2 ** attempt
      ctx.onRetry?.(attempt + 2, delayMs, `${what}: ${error}`)
      await ctx.sleep(delayMs)
      continue
    }
    throw new ActionFailure(`${what} failed: ${error}`)
  }
}

async function waitWithProgress(task: TaskRef, ctx: ActionContext, timeoutMs: number): Promise<TaskResult> {
  ctx.onTaskStarted?.(task)
  const started = ctx.now()
  const timer = ctx.onTaskRunning
    ? setInterval(() => ctx.onTaskRunning!(task, ctx.now() - started), ctx.progressIntervalMs)
    : undefined
  timer?.unref?.()
  try {
    // no abort signal here: a started action runs to its end, so a guest is never left half-way (stopped, unstarted)
    return await ctx.writer.waitTask(task, { timeoutMs, pollIntervalMs: ctx.taskPollIntervalMs })
  } finally {
    if (timer) clearInterval(timer)
  }
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

/** the UPID's task type (`UPID:node:pid:pstart:starttime:type:id:user:`) */
const taskType = (upid: string): string | undefined => upid.split(':')[5]

/**
 * For an HA-managed guest PVE answers a power request with a `hastart`/`hastop` task that only hands the
 * request to the HA manager and ends OK at once; the guest changes state a CRM cycle or more later (qemu-server
 * vm_start/vm_stop/vm_shutdown, pve-container Status.pm). The change is done when the guest is in the state:
 * poll its status, bounded by the task timeout, and fail early when HA reports the service in `error`.
 */
async function awaitHaPower(
  request: { node: string; guest: GuestType; vmid: number },
  want: 'running' | 'stopped',
  sent: readonly TaskRecord[],
  ctx: ActionContext,
  timeoutMs: number,
): Promise<void> {
  const task = sent[sent.length - 1]
  const type = task ? taskType(task.upid) : undefined
  if (type !== 'hastart' && type !== 'hastop') return
  const label = `${request.guest} ${request.vmid}`
  const started = ctx.now()
  for (;;) {
    const status = await ctx.reader.guestStatus(request.node, request.guest, request.vmid)
    if (status.status === want) return
    if (status.haState === 'error') {
      throw new ActionFailure(
        `${type === 'hastart' ? 'start' : 'stop'} failed: HA reports ${label} in state error (its ${want === 'running' ? 'start' : 'stop'} failed on the node; see the node's task list); set the HA resource to disabled and fix it`,
      )
    }
    if (ctx.now() - started >= timeoutMs) {
      throw new ActionFailure(
        `${label} is HA managed: ${type} ended OK but the guest is still ${status.status} after ${Math.round(timeoutMs / 1000)} s (HA state ${status.haState ?? 'unknown'}); not waiting longer`,
      )
    }
    await ctx.sleep(ctx.taskPollIntervalMs)
  }
}

/** One `/pools` write (synchronous, user.cfg under its lock); a lock timeout is retried like a task's */
async function poolWrite(
  request: Extract<PveRequest, { call: 'createPool' | 'updatePool' | 'deletePool' }>,
  ctx: ActionContext,
): Promise<void> {
  const w = ctx.writer
  const params: Record<string, string | number> = {}
  if (request.call !== 'deletePool')
    for (const [k, v] of Object.entries(request.params)) if (typeof v !== 'object') params[k] = v
  const send =
    request.call === 'createPool'
      ? w.createPool?.bind(w, params)
      : request.call === 'updatePool'
        ? w.updatePool?.bind(w, params)
        : w.deletePool?.bind(w, request.poolid)
  const id = request.call === 'deletePool' ? request.poolid : String(request.params.poolid)
  if (!send) throw new ActionFailure(`this PVE writer cannot write pools (${request.call} ${id})`)
  for (let attempt = 0; ; attempt++) {
    try {
      await send()
      return
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e)
      if (isLockTimeoutMessage(message) && attempt < ctx.lockRetries) {
        await ctx.sleep(ctx.lockRetryDelayMs * 2 ** attempt)
        continue
      }
      throw new ActionFailure(`${request.call.replace('Pool', '')} pool ${id} failed: ${message}`)
    }
  }
}

/**
 * One HA section-config write (synchronous in PVE, no task), then, for a change of the requested state, the
 * wait until the guest is in it: the CRM acts a cycle or more later (PVE::HA::Manager), so the write is done
 * when the guest runs or stops, bounded by the task timeout, and early failed when HA reports `error`.
 */
async function haWrite(request: Extract<PveRequest, { call: 'haWrite' }>, ctx: ActionContext): Promise<void> {
  const write = ctx.writer.haWrite?.bind(ctx.writer)
  if (!write) throw new ActionFailure('this PVE writer cannot write the HA configuration')
  const params: Record<string, string | number> = {}
  for (const [k, v] of Object.entries(request.params)) if (typeof v !== 'object') params[k] = v
  const what = `${request.method === 'POST' ? 'create' : request.method === 'PUT' ? 'update' : 'delete'} HA ${request.object.replace(/s$/, '')} ${request.id}`
  for (let attempt = 0; ; attempt++) {
    try {
      await write(request.object, request.method, request.id, params)
      break
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e)
      if (isLockTimeoutMessage(message) && attempt < ctx.lockRetries) {
        await ctx.sleep(ctx.lockRetryDelayMs * 2 ** attempt)
        continue
      }
      throw new ActionFailure(`${what} failed: ${message}`)
    }
  }
  const target = request.guest
  if (!target) return
  const label = `${target.guest} ${target.vmid}`
  const started = ctx.now()
  for (;;) {
    const status = await ctx.reader.guestStatus(target.node, target.guest, target.vmid)
    if (status.status === target.power) return
    if (status.haState === 'error')
      throw new ActionFailure(
        `${what}: HA reports ${label} in state error (its ${target.power === 'running' ? 'start' : 'stop'} failed on the node; see the node's task list); set spec.ha.state to disabled and fix it`,
      )
    if (ctx.now() - started >= ctx.taskTimeoutMs)
      throw new ActionFailure(
        `${what}: the guest is still ${status.status} after ${Math.round(ctx.taskTimeoutMs / 1000)} s (HA state ${status.haState ?? 'unknown'}); not waiting longer`,
      )
    await ctx.sleep(ctx.taskPollIntervalMs)
  }
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
