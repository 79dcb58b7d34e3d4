/**
 * The JSON control document for the standalone simulator: read from `--control file.json` (re-read whenever
 * the file changes) or posted to `POST /_sim/control` on loopback. `parseControlDoc` checks it and names the
 * offending field; `ControlApplier` applies it to `sim.control`.
 *
 * "State" fields (latency, offline nodes, failed nodes, revoked tokens, task behaviour, task duration, locks, flock
 * contention, offline storages, storage lock contention) describe the wanted state: a field that disappears from a
 * later version is reset (a failed node comes back, reset).
 * "Action" fields (failNext, drift, power) run once each time a document is applied.
 */
import { readFileSync, watch, type FSWatcher } from 'node:fs'
import type { SimControl } from './index.js'
import type { FailureBurst, FaultMethod, LatencyRule } from './faults.js'

export interface TaskBehaviourDoc {
  fail?: string
  durationMs?: number
  warnings?: number
  /** tasks of this type stay running until a later document drops the entry (or sets it false) */
  hold?: boolean
}

export interface ControlDoc {
  latencyMs?: number
  latency?: LatencyRule[]
  offlineNodes?: string[]
  /** nodes that failed: HA fences them and recovers their HA guests elsewhere (SimControl.failNode) */
  failedNodes?: string[]
  revokedTokens?: string[]
  taskDurationMs?: number
  tasks?: Record<string, TaskBehaviourDoc>
  locks?: Record<string, string>
  flockContention?: number[]
  offlineStorages?: string[]
  storageLockContention?: string[]
  failNext?: FailureBurst[]
  drift?: { vmid: number; set?: Record<string, string>; delete?: string[] }[]
  power?: Record<string, 'running' | 'stopped'>
}

export class ControlDocError extends Error {
  constructor(source: string, field: string, problem: string) {
    super(`${source}: field "${field}": ${problem}`)
    this.name = 'ControlDocError'
  }
}

const METHODS = ['GET', 'POST', 'PUT', 'DELETE']
const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

export function parseControlDoc(text: string, source: string): ControlDoc {
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (err) {
    throw new ControlDocError(source, '(document)', `not valid JSON (${(err as Error).message})`)
  }
  const bad = (field: string, problem: string): never => {
    throw new ControlDocError(source, field, problem)
  }
  if (!isObj(raw)) return bad('(document)', 'expected a JSON object')
  const known = [
    'latencyMs',
    'latency',
    'offlineNodes',
    'failedNodes',
    'revokedTokens',
    'taskDurationMs',
    'tasks',
    'locks',
    'flockContention',
    'offlineStorages',
    'storageLockContention',
    'failNext',
    'drift',
    'power',
    '$comment',
  ]
  for (const k of Object.keys(raw)) if (!known.includes(k)) bad(k, `unknown field (known: ${known.join(', ')})`)
  const nonNegInt = (v: unknown, f: string): number =>
    Number.isInteger(v) && (v as number) >= 0 ? (v as number) : bad(f, 'expected an integer >= 0')
  const strArr = (v: unknown, f: string): string[] =>
    Array.isArray(v) && v.every((x) => typeof x === 'string') ? v : bad(f, 'expected an array of strings')
  const matcher = (v: Record<string, unknown>, f: string): { method?: FaultMethod; path?: string } => {
    const out: { method?: FaultMethod; path?: string } = {}
    if (v.method !== undefined)
      out.method = METHODS.includes(v.method as string)
        ? (v.method as FaultMethod)
        : bad(`${f}.method`, `expected one of ${METHODS.join(', ')}`)
    if (v.path !== undefined)
      out.path =
        typeof v.path === 'string' ? v.path : bad(`${f}.path`, 'expected a string (apidoc template or concrete path)')
    return out
  }
  const doc: ControlDoc = {}
  if (raw.latencyMs !== undefined) doc.latencyMs = nonNegInt(raw.latencyMs, 'latencyMs')
  if (raw.latency !== undefined) {
    if (!Array.isArray(raw.latency)) bad('latency', 'expected an array of {ms, method?, path?}')
    doc.latency = (raw.latency as unknown[]).map((r, i) =>
      isObj(r)
        ? { ms: nonNegInt(r.ms, `latency[${i}].ms`), ...matcher(r, `latency[${i}]`) }
        : bad(`latency[${i}]`, 'expected an object'),
    )
  }
  if (raw.offlineNodes !== undefined) doc.offlineNodes = strArr(raw.offlineNodes, 'offlineNodes')
  if (raw.failedNodes !== undefined) doc.failedNodes = strArr(raw.failedNodes, 'failedNodes')
  if (raw.revokedTokens !== undefined) doc.revokedTokens = strArr(raw.revokedTokens, 'revokedTokens')
  if (raw.taskDurationMs !== undefined) doc.taskDurationMs = nonNegInt(raw.taskDurationMs, 'taskDurationMs')
  if (raw.tasks !== undefined) {
    if (!isObj(raw.tasks)) bad('tasks', 'expected an object: task type -> {fail?, durationMs?, warnings?, hold?}')
    doc.tasks = {}
    for (const [type, b] of Object.entries(raw.tasks as Record<string, unknown>)) {
      const f = `tasks.${type}`
      if (!isObj(b)) bad(f, 'expected an object {fail?, durationMs?, warnings?, hold?}')
      const t: TaskBehaviourDoc = {}
      const bb = b as Record<string, unknown>
      if (bb.fail !== undefined)
        t.fail = typeof bb.fail === 'string' ? bb.fail : bad(`${f}.fail`, 'expected the error text (string)')
      if (bb.durationMs !== undefined) t.durationMs = nonNegInt(bb.durationMs, `${f}.durationMs`)
      if (bb.warnings !== undefined) t.warnings = nonNegInt(bb.warnings, `${f}.warnings`)
      if (bb.hold !== undefined)
        t.hold = typeof bb.hold === 'boolean' ? bb.hold : bad(`${f}.hold`, 'expected true or false')
      doc.tasks[type] = t
    }
  }
  if (raw.locks !== undefined) {
    if (!isObj(raw.locks)) bad('locks', 'expected an object: vmid -> lock name')
    for (const [k, v] of Object.entries(raw.locks as Record<string, unknown>)) {
      if (!/^\d+$/.test(k)) bad(`locks.${k}`, 'key must be a vmid')
      if (typeof v !== 'string') bad(`locks.${k}`, 'expected a lock name (backup, migrate, ...)')
    }
    doc.locks = raw.locks as Record<string, string>
  }
  if (raw.flockContention !== undefined) {
    if (!Array.isArray(raw.flockContention)) bad('flockContention', 'expected an array of vmids')
    doc.flockContention = (raw.flockContention as unknown[]).map((v, i) => nonNegInt(v, `flockContention[${i}]`))
  }
  if (raw.offlineStorages !== undefined) doc.offlineStorages = strArr(raw.offlineStorages, 'offlineStorages')
  if (raw.storageLockContention !== undefined)
    doc.storageLockContention = strArr(raw.storageLockContention, 'storageLockContention')
  if (raw.failNext !== undefined) {
    if (!Array.isArray(raw.failNext))
      bad('failNext', 'expected an array of {status | network, count?, message?, method?, path?}')
    doc.failNext = (raw.failNext as unknown[]).map((r, i) => {
      const f = `failNext[${i}]`
      if (!isObj(r)) return bad(f, 'expected an object')
      const burst: FailureBurst = { ...matcher(r, f) }
      if (r.network !== undefined) {
        burst.network =
          r.network === 'reset' || r.network === 'hang' ? r.network : bad(`${f}.network`, 'expected reset or hang')
        if (r.status !== undefined) bad(`${f}.status`, 'give either status or network, not both')
      } else {
        burst.status =
          Number.isInteger(r.status) && (r.status as number) >= 400 && (r.status as number) <= 599
            ? (r.status as number)
            : bad(`${f}.status`, 'expected an HTTP error status 400..599')
      }
      if (r.count !== undefined) burst.count = nonNegInt(r.count, `${f}.count`)
      if (r.message !== undefined)
        burst.message = typeof r.message === 'string' ? r.message : bad(`${f}.message`, 'expected a string')
      return burst
    })
  }
  if (raw.drift !== undefined) {
    if (!Array.isArray(raw.drift)) bad('drift', 'expected an array of {vmid, set?, delete?}')
    doc.drift = (raw.drift as unknown[]).map((r, i) => {
      const f = `drift[${i}]`
      if (!isObj(r)) return bad(f, 'expected an object')
      const d: { vmid: number; set?: Record<string, string>; delete?: string[] } = {
        vmid: nonNegInt(r.vmid, `${f}.vmid`),
      }
      if (r.set !== undefined) {
        if (!isObj(r.set) || !Object.values(r.set).every((v) => typeof v === 'string'))
          bad(`${f}.set`, 'expected an object of string values')
        d.set = r.set as Record<string, string>
      }
      if (r.delete !== undefined) d.delete = strArr(r.delete, `${f}.delete`)
      return d
    })
  }
  if (raw.power !== undefined) {
    if (!isObj(raw.power)) bad('power', 'expected an object: vmid -> running|stopped')
    for (const [k, v] of Object.entries(raw.power as Record<string, unknown>)) {
      if (!/^\d+$/.test(k)) bad(`power.${k}`, 'key must be a vmid')
      if (v !== 'running' && v !== 'stopped') bad(`power.${k}`, 'expected running or stopped')
    }
    doc.power = raw.power as Record<string, 'running' | 'stopped'>
  }
  return doc
}

/** Applies successive control documents, resetting state fields that a later document no longer sets. */
export class ControlApplier {
  private prev: ControlDoc = {}

  constructor(
    private readonly control: SimControl,
    private readonly defaultTaskDurationMs: number,
  ) {}

  apply(doc: ControlDoc, opts: { replace: boolean } = { replace: true }): void {
    const c = this.control
    const prev = this.prev
    // with replace=false (the control endpoint) fields not given keep their current state
    const next: ControlDoc = opts.replace
      ? doc
      : { ...prev, ...doc, failNext: doc.failNext, drift: doc.drift, power: doc.power }

    if (next.latencyMs !== prev.latencyMs || next.latency !== prev.latency) {
      c.setLatency(0)
      if (next.latencyMs) c.setLatency(next.latencyMs)
      for (const r of next.latency ?? []) c.setLatency(r)
    }
    for (const n of prev.offlineNodes ?? []) if (!next.offlineNodes?.includes(n)) c.setNodeOnline(n, true)
    for (const n of next.offlineNodes ?? []) c.setNodeOnline(n, false)
    for (const n of prev.failedNodes ?? []) if (!next.failedNodes?.includes(n)) c.setNodeOnline(n, true)
    for (const n of next.failedNodes ?? []) if (!prev.failedNodes?.includes(n)) c.failNode(n)
    for (const t of prev.revokedTokens ?? []) if (!next.revokedTokens?.includes(t)) c.restoreToken(t)
    for (const t of next.revokedTokens ?? []) c.revokeToken(t)
    if (next.taskDurationMs !== prev.taskDurationMs)
      c.setTaskDuration(next.taskDurationMs ?? this.defaultTaskDurationMs)
    for (const type of Object.keys(prev.tasks ?? {})) if (!next.tasks?.[type]) c.setTaskBehaviour(type, null)
    for (const [type, b] of Object.entries(next.tasks ?? {})) c.setTaskBehaviour(type, b)
    for (const vmid of Object.keys(prev.locks ?? {})) if (!next.locks?.[vmid]) c.setLock(Number(vmid), null)
    for (const [vmid, lock] of Object.entries(next.locks ?? {})) c.setLock(Number(vmid), lock)
    for (const vmid of prev.flockContention ?? [])
      if (!next.flockContention?.includes(vmid)) c.setFlockContention(vmid, false)
    for (const vmid of next.flockContention ?? []) c.setFlockContention(vmid, true)
    for (const id of prev.offlineStorages ?? []) if (!next.offlineStorages?.includes(id)) c.setStorageOnline(id, true)
    for (const id of next.offlineStorages ?? []) c.setStorageOnline(id, false)
    for (const id of prev.storageLockContention ?? [])
      if (!next.storageLockContention?.includes(id)) c.setStorageLockContention(id, false)
    for (const id of next.storageLockContention ?? []) c.setStorageLockContention(id, true)

    for (const b of doc.failNext ?? []) c.failNext(b)
    for (const d of doc.drift ?? []) {
      for (const [k, v] of Object.entries(d.set ?? {})) c.driftSet(d.vmid, k, v)
      for (const k of d.delete ?? []) c.driftDelete(d.vmid, k)
    }
    for (const [vmid, status] of Object.entries(doc.power ?? {})) c.driftPower(Number(vmid), status)
    this.prev = { ...next, failNext: undefined, drift: undefined, power: undefined }
  }
}

/** Watches a control file; applies it now and after every change. Errors go to `onError` (the file is then ignored). */
export function watchControlFile(
  file: string,
  applier: ControlApplier,
  onError: (err: Error) => void,
  onApplied?: () => void,
): () => void {
  let last: string | undefined
  const load = (): void => {
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch (err) {
      onError(new Error(`control file ${file}: cannot read (${(err as Error).message})`))
      return
    }
    if (text === last) return
    last = text
    try {
      applier.apply(parseControlDoc(text, `control file ${file}`))
      onApplied?.()
    } catch (err) {
      onError(err as Error)
    }
  }
  load()
  let watcher: FSWatcher | undefined
  try {
    // watch the file itself; editors that replace the file are caught by the polling fallback below
    watcher = watch(file, { persistent: false }, () => load())
  } catch {
    watcher = undefined
  }
  const timer = setInterval(load, 1000)
  timer.unref()
  return () => {
    watcher?.close()
    clearInterval(timer)
  }
}
