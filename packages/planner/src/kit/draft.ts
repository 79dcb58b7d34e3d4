/**
 * What every kind's planning produces and the pipeline assembles: drafts (actions before dependency wiring), the
 * sink findings go to, the addresses objects are reported under, and how a diff is ordered and shown.
 */
import { SENSITIVE } from '@proxops/pve-client/wire'
import type {
  Action,
  Anomaly,
  FieldDiff,
  Gap,
  PendingChange,
  PlanParamValue,
  ResourceKind,
  Skip,
} from '../plan-types.js'
import { compare } from './text.js'

export const artifactAddress = (kind: string, node: string, storage: string, filename: string): string =>
  `${kind}/${node}/${storage}/${filename}`
export const guestAddress = (kind: string, node: string, vmid: number, name?: string): string =>
  `${kind}/${node}/${vmid}${name === undefined || name === '' ? '' : `(${name})`}`
/** the cluster-wide kinds by their PVE id */
export const backupAddress = (id: string): string => `BackupJob/${id}`
export const poolAddress = (id: string): string => `Pool/${id}`
/**
 * The manifest kind of the object an address names (its first part): an action of what lives on a guest (its
 * HA resource, firewall, pool membership) is the guest's object, whatever kind runs it
 */
export const objectKind = (address: string): ResourceKind => address.slice(0, address.indexOf('/')) as ResourceKind

/**
 * What every action on a cluster-wide object (no node; a pool, a backup job) starts from: the manifest it plans
 * (`resource`), its address, its level in the deletion order; no disruption, tier 0
 */
export function clusterObjectBase<K extends Action['kind']>(kind: K, name: string, address: string, level: number) {
  return {
    resource: `${kind}/${name}`,
    address,
    kind,
    name,
    node: '',
    disruption: 'none' as const,
    tier: 0 as const,
    level,
  }
}

/** why a cluster-wide read has no answer: not read at all, or PVE's refusal */
export const unreadReason = (observed: { unreadable: string } | undefined): string =>
  observed === undefined ? 'not read' : observed.unreadable

/** each object skipped as `unknown` (no node): what its kind plans against could not be read this cycle */
export function skipUnread(skips: Skip[], objects: { address: string; kind: ResourceKind }[], message: string): void {
  for (const { address, kind } of objects) skips.push({ code: 'unknown', address, kind, node: '', message })
}

/** Where planning records what it found. */
export interface Sink {
  drafts: Draft[]
  anomalies: Anomaly[]
  skips: Skip[]
  pending: PendingChange[]
  gaps: Gap[]
}

/** Draft actions before dependency wiring: `resource` is the manifest key whose prerequisites apply. */
export interface Draft extends Omit<Action, 'id' | 'dependsOn' | 'requires'> {
  resource?: string
  /**
   * further manifest keys whose dependants wait for this action too, when their kind's addresses name it (the one
   * SDN apply: a guest on a vnet waits for the apply, not only for the vnet's write)
   */
  alsoResources?: readonly string[]
  /** same-object actions that must run first (ids) */
  after?: string[]
  id?: string
}

/** What every action on one object shares: its manifest key, address, the object's manifest kind, where and when. */
export type DraftBase = Pick<Draft, 'resource' | 'address' | 'name' | 'node' | 'vmid' | 'tier' | 'level'> & {
  kind: ResourceKind
}

export function display(v: PlanParamValue): string {
  return typeof v === 'object' ? SENSITIVE : String(v)
}

const compareDiffs = (a: FieldDiff, b: FieldDiff): number => compare(a.key, b.key) || compare(a.field, b.field)

/** Sorts a freshly built diff list in place (by key, then field) and returns it. */
export function sortDiffs(d: FieldDiff[]): FieldDiff[] {
  return d.sort(compareDiffs)
}

/** A skip of what lives on a declared guest (its HA resource, its pool membership), under the guest's address. */
export const skipOn = (
  base: Pick<DraftBase, 'address' | 'kind' | 'node'>,
  vmid: number,
  code: Skip['code'],
  message: string,
): Skip => ({ code, address: base.address, kind: base.kind, node: base.node, vmid, message })
