/**
 * The registry: every object kind, in the order plan() runs them. The guest kind first (the kinds that live on a
 * guest plan against what it planned), then the others; a guest's firewall, HA resource and pool membership are
 * written after its own actions in this order. Adding a kind is a folder under `kinds/` whose `index.ts` declares
 * its `Kind` value (kit/kind.ts), and a line here. The pipeline reaches the kinds only through this module.
 */
import type { Manifest } from '@proxops/schema'
import type { Action, ActionType, PveRequest } from '../plan-types.js'
import { kindProblems, type Kind, type SummaryCount } from '../kit/kind.js'
import type { Privileges } from '../kit/privileges.js'
import type { Runners } from '../kit/runners.js'
import { artifact } from './artifact/index.js'
import { backupJob } from './backup-job/index.js'
import { firewall } from './firewall/index.js'
import { guest } from './guest/index.js'
import { ha } from './ha/index.js'
import { pool } from './pool/index.js'
import { storage } from './storage/index.js'
import { clusterOptions } from './cluster-options/index.js'

// the planner's identity checks until the schema's identity index replaces them (issue 37, item 3)

export const KINDS: readonly Kind[] = [guest, artifact, firewall, ha, pool, backupJob, storage, clusterOptions]

for (const kind of KINDS) {
  const problems = kindProblems(kind)
  if (problems.length > 0) throw new Error(`kind ${kind.name}: ${problems.join(', ')}`)
}

const ownerOfCall = new Map<PveRequest['call'], Kind>()
for (const kind of KINDS)
  for (const call of Object.keys(kind.run) as PveRequest['call'][]) {
    const other = ownerOfCall.get(call)
    if (other) throw new Error(`kinds ${other.name} and ${kind.name} both run ${call} requests`)
    ownerOfCall.set(call, kind)
  }

/**
 * The kind an action belongs to: the one whose runners send its requests (a call belongs to one kind), which
 * reads the object back after them. Throws for an action without requests or with requests of two kinds.
 */
export function kindOf(action: Pick<Action, 'id' | 'requests'>): Kind {
  const kinds = new Set(action.requests.map((r) => ownerOfCall.get(r.call)))
  const [kind] = kinds
  if (kinds.size !== 1 || kind === undefined)
    throw new Error(
      `action ${action.id}: its requests (${action.requests.map((r) => r.call).join(', ')}) are not one kind's`,
    )
  return kind
}

const byManifest = new Map<Manifest['kind'], Kind>(KINDS.flatMap((k) => k.manifests.map((m) => [m, k] as const)))

/** The kind that declares a manifest (its `kind:`): its identity, addresses included. */
export function kindOfManifest(m: Pick<Manifest, 'kind'>): Kind {
  const kind = byManifest.get(m.kind)
  if (!kind) throw new Error(`no kind declares ${m.kind} manifests`)
  return kind
}

/** Every request's runner, from the kind that sends it. */
export const RUNNERS: Runners = Object.assign({}, ...KINDS.map((k) => k.run)) as Runners

/** What every request needs from the API token, from the kind that sends it. */
export const PRIVILEGES: Privileges = Object.assign({}, ...KINDS.map((k) => k.privileges)) as Privileges

/** The summary count of every action type, from the kinds that plan it. */
export const SUMMARY: Partial<Record<ActionType, SummaryCount>> = Object.assign(
  {},
  ...KINDS.map((k) => k.summary),
) as Partial<Record<ActionType, SummaryCount>>

/** The kinds that adopt, in their adopt order. */
export const ADOPTERS: readonly Kind[] = [...KINDS].sort((a, b) => a.adopt.order - b.adopt.order)
