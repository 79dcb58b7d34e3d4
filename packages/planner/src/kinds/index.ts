/**
 * The registry: every object kind, in the order plan() runs them. The guest kind first (the kinds that live on a
 * guest plan against what it planned), then the others; a guest's firewall, HA resource and pool membership are
 * written after its own actions in this order. Adding a kind is a folder under `kinds/` whose `index.ts` declares
 * its `Kind` value (kit/kind.ts), and a line here. The pipeline reaches the kinds only through this module.
 */
import type { Manifest } from '@proxops/schema'
import type { Action, ActionType } from '../plan-types.js'
import { kindProblems, type Kind, type SummaryCount } from '../kit/kind.js'
import { VERBS, type VerbText } from '../kit/verbs.js'
import { artifact } from './artifact/index.js'
import { backupJob } from './backup-job/index.js'
import { firewall } from './firewall/index.js'
import { guest } from './guest/index.js'
import { ha } from './ha/index.js'
import { pool } from './pool/index.js'
import { access } from './access/index.js'
import { sdn } from './sdn/index.js'
import { storage } from './storage/index.js'
import { clusterOptions } from './cluster-options/index.js'

export const KINDS: readonly Kind[] = [
  guest,
  artifact,
  firewall,
  ha,
  pool,
  backupJob,
  access,
  sdn,
  storage,
  clusterOptions,
]

for (const kind of KINDS) {
  const problems = kindProblems(kind)
  if (problems.length > 0) throw new Error(`kind ${kind.name}: ${problems.join(', ')}`)
}

const byActionKind = new Map<string, Kind>()
for (const kind of KINDS)
  for (const k of [...kind.manifests, ...(kind.actionKinds ?? [])]) {
    const other = byActionKind.get(k)
    if (other) throw new Error(`kinds ${other.name} and ${kind.name} both declare ${k}`)
    byActionKind.set(k, kind)
  }

/**
 * The kind an action is of: the one its `kind` names (a manifest kind it declares, or one of its action kinds),
 * which runs its requests and reads the object back after them. Throws for a `kind` no registered kind declares.
 */
export function kindOf(action: Pick<Action, 'id' | 'kind'>): Kind {
  const kind = byActionKind.get(action.kind)
  if (kind === undefined) throw new Error(`action ${action.id}: no kind declares ${action.kind} actions`)
  return kind
}

/**
 * What an action lacks of its kind (none = it can be run, confirmed and counted): a `kind` no kind declares, a
 * verb its kind does not plan, a request its kind has no runner for.
 */
export function actionProblems(action: Pick<Action, 'id' | 'kind' | 'type' | 'requests'>, kinds = KINDS): string[] {
  const kind = kinds.find((k) => [...k.manifests, ...(k.actionKinds ?? [])].includes(action.kind))
  if (kind === undefined) return [`no kind declares ${action.kind} actions`]
  const out: string[] = []
  if (kind.summary[action.type] === undefined) out.push(`kind ${kind.name} does not plan ${action.type}`)
  if (typeof kind.confirm !== 'function') out.push(`kind ${kind.name} has no confirm`)
  for (const r of action.requests)
    if (typeof kind.run[r.call] !== 'function') out.push(`kind ${kind.name} has no runner for ${r.call}`)
  return out
}

const byManifest = new Map<Manifest['kind'], Kind>(KINDS.flatMap((k) => k.manifests.map((m) => [m, k] as const)))

/** The kind that declares a manifest (its `kind:`): its identity, addresses included. */
export function kindOfManifest(m: Pick<Manifest, 'kind'>): Kind {
  const kind = byManifest.get(m.kind)
  if (!kind) throw new Error(`no kind declares ${m.kind} manifests`)
  return kind
}

/** The summary count an action adds to, from its kind. */
export function countOf(action: Pick<Action, 'id' | 'kind' | 'type'>): SummaryCount | undefined {
  return kindOf(action).summary[action.type]
}

/** An action's place among the actions of its tier and level: its kind's, or its verb's. */
export function rankOf(action: Pick<Action, 'id' | 'kind' | 'type'>): number {
  return byActionKind.get(action.kind)?.verbs?.[action.type]?.rank ?? VERBS[action.type].rank
}

const SYMBOLS: Partial<Record<SummaryCount, '+' | '-'>> = { create: '+', download: '+', snapshot: '+', delete: '-' }

/**
 * How a plan shows an action, from its kind: its symbol (`+` create, `~` change, `-` delete), the phrase after its
 * address (`will be created`) and a short label (its verb; `HA create` for what lives on another kind's object).
 * An action of a kind or verb this planner does not know reads as its verb.
 */
export function describeAction(action: Pick<Action, 'address'> & { kind: string; type: string }): {
  symbol: '+' | '~' | '-'
  phrase: string
  label: string
} {
  const kind = byActionKind.get(action.kind)
  const type = action.type as ActionType
  const count = kind?.summary[type]
  const phrase = kind?.verbs?.[type]?.phrase ?? (VERBS[type] as VerbText | undefined)?.phrase ?? action.type
  const own = action.address.startsWith(`${action.kind}/`)
  return {
    symbol: (count && SYMBOLS[count]) ?? '~',
    phrase,
    label: own ? action.type : `${action.kind} ${action.type}`,
  }
}

/** The kinds that adopt, in their adopt order. */
export const ADOPTERS: readonly Kind[] = [...KINDS].sort((a, b) => a.adopt.order - b.adopt.order)
