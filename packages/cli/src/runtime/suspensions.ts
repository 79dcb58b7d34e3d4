/**
 * Suspensions kept in the data dir (`<data-dir>/suspensions.json`): a cluster or one object of it that ProxOps reads
 * and shows with its drift but never writes, with why and since when (`proxops suspend`, `proxops resume`). Every
 * cycle (the daemon's ticks, `diff`, `apply`, `status`) reads the file afresh, so a suspension takes effect at the
 * next tick and outlives restarts. A manifest's `proxops/suspend` annotation suspends its object the same way.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { PlanHold } from '@proxops/planner'
import { SUSPEND, type Manifest } from '@proxops/schema'
import { CliError } from '../errors.js'
import type { DesiredObject } from '../status-model.js'
import { planTargets, type ObjectRef } from './targets.js'

export const SUSPENSIONS_FILE = 'suspensions.json'
const FORMAT_VERSION = 1

export interface Suspension {
  cluster: string
  /** `KIND/name`; absent: the whole cluster */
  object?: string
  reason: string
  /** ISO time */
  since: string
  /** the operator's login, when known */
  by?: string
}

const fileOf = (dataDir: string): string => path.join(dataDir, SUSPENSIONS_FILE)

const isSuspension = (x: unknown): x is Suspension => {
  const s = x as Partial<Suspension> | null
  return (
    s !== null &&
    typeof s === 'object' &&
    typeof s.cluster === 'string' &&
    typeof s.reason === 'string' &&
    typeof s.since === 'string' &&
    (s.object === undefined || typeof s.object === 'string') &&
    (s.by === undefined || typeof s.by === 'string')
  )
}

/** The suspensions in the data dir; none when the file does not exist. A damaged file is an error, never "none". */
export function readSuspensions(dataDir: string): Suspension[] {
  let text: string
  try {
    text = readFileSync(fileOf(dataDir), 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
  let doc: { format_version?: unknown; suspensions?: unknown }
  try {
    doc = JSON.parse(text) as typeof doc
  } catch {
    doc = {}
  }
  if (doc.format_version !== FORMAT_VERSION || !Array.isArray(doc.suspensions) || !doc.suspensions.every(isSuspension))
    throw new CliError(
      'CONFIG_INVALID',
      `${fileOf(dataDir)} is not a ProxOps suspensions file (format_version ${FORMAT_VERSION}); nothing is written while it is damaged: fix or remove it`,
    )
  return doc.suspensions
}

function writeSuspensions(dataDir: string, list: readonly Suspension[]): void {
  mkdirSync(dataDir, { recursive: true })
  const file = fileOf(dataDir)
  const tmp = `${file}.${process.pid}.tmp`
  const sorted = [...list].sort((a, b) =>
    `${a.cluster}\0${a.object ?? ''}` < `${b.cluster}\0${b.object ?? ''}` ? -1 : 1,
  )
  writeFileSync(tmp, `${JSON.stringify({ format_version: FORMAT_VERSION, suspensions: sorted }, null, 2)}\n`, {
    mode: 0o600,
  })
  // a reader never sees half a file
  renameSync(tmp, file)
}

const same = (a: Pick<Suspension, 'cluster' | 'object'>, b: Pick<Suspension, 'cluster' | 'object'>): boolean =>
  a.cluster === b.cluster && a.object === b.object

/** Adds or replaces (a new reason, a new since) the suspension of a cluster or object. */
export function addSuspension(dataDir: string, s: Suspension): Suspension[] {
  const list = [...readSuspensions(dataDir).filter((x) => !same(x, s)), s]
  writeSuspensions(dataDir, list)
  return list
}

/** Removes it; returns whether there was one. */
export function removeSuspension(dataDir: string, s: Pick<Suspension, 'cluster' | 'object'>): boolean {
  const list = readSuspensions(dataDir)
  const kept = list.filter((x) => !same(x, s))
  if (kept.length === list.length) return false
  writeSuspensions(dataDir, kept)
  return true
}

/**
 * The planner's holds of one cluster: a suspended cluster holds everything; each suspended object (in the data
 * dir, or by its `proxops/suspend` annotation) holds its own actions and what waits for them.
 */
export function suspensionHolds(
  cluster: string,
  suspensions: readonly Suspension[],
  manifests: readonly Manifest[],
  objects: readonly DesiredObject[],
  parse: (text: string) => ObjectRef,
): PlanHold[] {
  const holds: PlanHold[] = []
  for (const s of suspensions) {
    if (s.cluster !== cluster) continue
    const message = `suspended since ${s.since}${s.by ? ` by ${s.by}` : ''}: ${s.reason}`
    if (s.object === undefined) holds.push({ code: 'suspended', message: `cluster ${message}` })
    else {
      const [target] = planTargets([parse(s.object)], objects)
      if (target) holds.push({ target, code: 'suspended', message })
    }
  }
  for (const m of manifests) {
    const reason = m.metadata.annotations?.[SUSPEND]
    if (reason === undefined) continue
    const [target] = planTargets(
      [{ kind: m.kind, name: m.metadata.name, text: `${m.kind}/${m.metadata.name}` }],
      objects,
    )
    if (target) holds.push({ target, code: 'suspended', message: `suspended by its ${SUSPEND} annotation: ${reason}` })
  }
  return holds
}
