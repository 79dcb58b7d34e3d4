/**
 * Runs one plan action: its PVE requests in order (each run by the action's kind, kinds/index.ts),
 * each task awaited, then a read-back that confirms the result. Never force-stops, never deletes a running
 * guest, never writes a disk create form over a live volume; a request that PVE refuses ends the action
 * `failed` with PVE's own text (secrets scrubbed).
 */
import type { Action, PveRequest } from '../plan-types.js'
import { kindOf } from '../kinds/index.js'
import { redact } from '../kit/params.js'
import { confirmAction } from './confirm.js'
import { ActionFailure, type ActionContext, type RequestRun, type TaskRecord } from '../kit/runners.js'

export type { ActionContext, TaskRecord } from '../kit/runners.js'

export type ActionOutcome = (
  { status: 'ok'; tasks: TaskRecord[] } | { status: 'failed'; error: string; tasks: TaskRecord[] }
) & {
  /** what the action saw and deliberately left alone (secrets scrubbed) */
  notes: string[]
}

export async function runAction(action: Action, ctx: ActionContext): Promise<ActionOutcome> {
  const run: RequestRun = { ctx, tasks: [], secrets: [], notes: [] }
  const { tasks, secrets } = run
  const notes = (): string[] => run.notes.map((n) => redact(n, secrets))
  let index = 0
  try {
    for (; index < action.requests.length; index++) await runRequest(action, action.requests[index]!, run)
    const problem = await confirmAction(action, ctx)
    if (problem)
      return {
        status: 'failed',
        error: `not confirmed by read-back: ${redact(problem, secrets)}`,
        tasks,
        notes: notes(),
      }
    return { status: 'ok', tasks, notes: notes() }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    const restored = await restorePower(action, index, run)
    return { status: 'failed', error: redact(`${message}${restored}`, secrets), tasks, notes: notes() }
  }
}

const RESTART_ACTIONS: ReadonlySet<Action['type']> = new Set(['shutdown-then-update', 'restart'])

/**
 * A restart-class action whose request `failed` failed still ends with its last request when that is the
 * guest's desired power state: the start, if the shutdown was sent (a guest is never left off because a
 * step after its shutdown failed, and no later cycle defers its start on that failure), or the shutdown of a
 * guest desired stopped. Returns what it did, to append to the first error.
 */
async function restorePower(action: Action, failed: number, run: RequestRun): Promise<string> {
  if (!RESTART_ACTIONS.has(action.type)) return ''
  const last = action.requests.length - 1
  const final = action.requests[last]
  if (final === undefined || last <= failed) return ''
  const shutdownSent = action.requests.slice(0, failed + 1).some((r) => r.call === 'shutdown' || r.call === 'stop')
  if (!(final.call === 'start' && shutdownSent) && final.call !== 'shutdown') return ''
  try {
    await runRequest(action, final, run)
    return `; desired power state restored (${final.call} sent)`
  } catch (error) {
    return `; restoring the power state also failed: ${error instanceof Error ? error.message : String(error)}`
  }
}

async function runRequest(action: Action, request: PveRequest, run: RequestRun): Promise<void> {
  const kind = kindOf(action)
  const runner = kind.run[request.call] as ((r: PveRequest, run: RequestRun) => Promise<void>) | undefined
  if (!runner) throw new ActionFailure(`kind ${kind.name} does not run ${request.call} requests`)
  await runner(request, run)
}
