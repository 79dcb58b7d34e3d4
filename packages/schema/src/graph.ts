/**
 * The dependency graph of one cluster's manifests, the one graph both the loader (`validate`) and the planner
 * (`plan()`) read: every structured reference of every kind plus the `proxops/depends-on` annotation, cycle
 * detection with the cycle's path, and levels (0 = no prerequisites, else 1 + the deepest prerequisite).
 * docs/repository.md#per-cluster-index-and-dependencies
 */
import type { ErrorCode } from './errors.js'
import { identityIndex } from './identity.js'
import type { KindReference, PathKey } from './kinds/contract.js'
import { type Kind, schemaKind } from './kinds.js'
import type { Manifest } from './manifest/types.js'
import { DEPENDS_ON, parseDependsOn } from './manifest/annotations.js'

/** `Kind/name`, the identity of a manifest within one cluster. */
export type ResourceKey = `${Kind}/${string}`
export function resourceKey(kind: Kind, name: string): ResourceKey {
  return `${kind}/${name}`
}

/** A prerequisite a manifest names: in a field (its kind's `references`) or in the depends-on annotation. */
export interface Reference extends Omit<KindReference, 'kind' | 'via'> {
  kind: Kind
  via: KindReference['via'] | 'annotation'
}

/**
 * Every prerequisite a manifest names: its kind's references (a guest's ISO, disk images, clone source,
 * container template and pool, a nested pool's parent, the pool a backup job selects), then the annotation's
 * targets.
 */
export function referencesOf(m: Manifest): Reference[] {
  const refs: Reference[] = schemaKind(m.kind).references(m) as Reference[]
  const annotation = m.metadata.annotations[DEPENDS_ON]
  if (annotation !== undefined) {
    const parsed = parseDependsOn(annotation)
    if (parsed.ok) {
      for (const r of parsed.refs) refs.push({ ...r, via: 'annotation', path: ['metadata', 'annotations', DEPENDS_ON] })
    }
  }
  return refs
}

/**
 * The pool a manifest needs before it can be created, when a Pool of this cluster may declare it: a guest's
 * `spec.pool` (create_vm checks it exists), a nested pool's parent (create_pool wants it), the pool a backup
 * job selects (vzdump backs up the pool's members).
 */
export function poolNeeded(m: Manifest): { id: string; path: PathKey[] } | undefined {
  const ref = schemaKind(m.kind)
    .references(m)
    .find((r) => r.via === 'pool')
  return ref && { id: ref.name, path: ref.path }
}

export interface ResolvedReference extends Reference {
  /**
   * the manifest of the cluster it names; undefined when the cluster declares none (for `via: 'pool'` that is
   * no problem: the pool is one PVE already has)
   */
  target: ResourceKey | undefined
}

/** A dependency `plan()` cannot order by: the manifest concerned, and where its reference is written. */
export interface DependencyProblem {
  code: Extract<ErrorCode, 'annotation-invalid' | 'dependency-unknown' | 'dependency-cycle'>
  key: ResourceKey
  path: PathKey[]
  message: string
}

export interface ClusterDependencies {
  graph: DependencyGraph
  /** each manifest's references, resolved, in the order referencesOf gives them */
  references: ReadonlyMap<ResourceKey, readonly ResolvedReference[]>
  /** malformed annotations, unknown targets (by key, then reference order), then cycles; empty when plannable */
  problems: readonly DependencyProblem[]
}

/**
 * Resolves every manifest's references within the cluster and builds the graph. Keys must be unique (the
 * loader reports duplicates first); a reference to a PVE object (a pool id) resolves through the identity
 * index, so for an object declared twice the first declaration is the target.
 */
export function clusterDependencies(manifests: readonly Manifest[]): ClusterDependencies {
  const keys = new Set(manifests.map((m) => resourceKey(m.kind, m.metadata.name)))
  const identities = identityIndex(manifests)
  const targetOf = (ref: Reference): ResourceKey | undefined => {
    if (ref.identity !== undefined) {
      const owner = identities.owner(ref.identity)
      return owner && resourceKey(owner.kind, owner.metadata.name)
    }
    const key = resourceKey(ref.kind, ref.name)
    return keys.has(key) ? key : undefined
  }
  const references = new Map<ResourceKey, ResolvedReference[]>()
  const edges = new Map<ResourceKey, ResourceKey[]>()
  const unplannable: DependencyProblem[] = []
  for (const m of [...manifests].sort(byKey)) {
    const key = resourceKey(m.kind, m.metadata.name)
    const annotation = m.metadata.annotations[DEPENDS_ON]
    const parsed = annotation === undefined ? undefined : parseDependsOn(annotation)
    if (parsed?.ok === false)
      unplannable.push({
        code: 'annotation-invalid',
        key,
        path: ['metadata', 'annotations', DEPENDS_ON],
        message: parsed.message,
      })
    const resolved = referencesOf(m).map((ref) => ({ ...ref, target: targetOf(ref) }))
    references.set(key, resolved)
    edges.set(
      key,
      resolved.flatMap((r) => r.target ?? []),
    )
    for (const r of resolved)
      if (r.target === undefined && r.identity === undefined)
        unplannable.push({
          code: 'dependency-unknown',
          key,
          path: r.path,
          message: `depends on ${resourceKey(r.kind, r.name)}, which is not in this cluster`,
        })
  }
  const graph = buildGraph([...keys], edges)
  const cycles = graph.cycles.map((cycle): DependencyProblem => {
    const [from, to] = cycle as [ResourceKey, ResourceKey]
    const edge = references.get(from)?.find((r) => r.target === to)
    return {
      code: 'dependency-cycle',
      key: from,
      path: edge?.path ?? [],
      message: `dependency cycle: ${cycle.join(' → ')}; remove one of these dependencies`,
    }
  })
  return { graph, references, problems: [...unplannable, ...cycles] }
}

const byKey = (a: Manifest, b: Manifest): number => {
  const x = resourceKey(a.kind, a.metadata.name)
  const y = resourceKey(b.kind, b.metadata.name)
  return x < y ? -1 : x > y ? 1 : 0
}

export interface DependencyGraph {
  /** prerequisites of each resource, sorted and de-duplicated */
  dependsOn: ReadonlyMap<ResourceKey, readonly ResourceKey[]>
  /** resources that depend on each resource, sorted */
  dependants: ReadonlyMap<ResourceKey, readonly ResourceKey[]>
  /** 0 for no prerequisites, else 1 + max(level of prerequisites) */
  level: ReadonlyMap<ResourceKey, number>
  /** every resource, by level, then key: a valid creation order */
  order: readonly ResourceKey[]
  /** each cycle as a path that starts and ends with the same key (`[A, B, A]`), sorted; empty when acyclic */
  cycles: readonly ResourceKey[][]
}

/** Builds the graph over `nodes`; edges to keys outside `nodes` are ignored (callers report them). */
export function buildGraph(
  nodes: readonly ResourceKey[],
  edges: ReadonlyMap<ResourceKey, readonly ResourceKey[]>,
): DependencyGraph {
  const known = new Set(nodes)
  const dependsOn = new Map<ResourceKey, ResourceKey[]>()
  const dependants = new Map<ResourceKey, ResourceKey[]>()
  const sorted = [...known].sort()
  for (const n of sorted) {
    dependsOn.set(n, [...new Set(edges.get(n) ?? [])].filter((t) => known.has(t)).sort())
    dependants.set(n, [])
  }
  for (const n of sorted) for (const t of dependsOn.get(n)!) dependants.get(t)!.push(n)

  const cycles = findCycles(sorted, dependsOn)

  const level = new Map<ResourceKey, number>()
  const visiting = new Set<ResourceKey>()
  const levelOf = (n: ResourceKey): number => {
    const known = level.get(n)
    if (known !== undefined) return known
    visiting.add(n)
    let l = 0
    for (const t of dependsOn.get(n)!) {
      if (visiting.has(t)) continue // back edge of a reported cycle
      l = Math.max(l, levelOf(t) + 1)
    }
    visiting.delete(n)
    level.set(n, l)
    return l
  }
  for (const n of sorted) levelOf(n)
  const order = [...sorted].sort((a, b) => level.get(a)! - level.get(b)! || (a < b ? -1 : a > b ? 1 : 0))
  return { dependsOn, dependants, level, order, cycles }
}

/** Tarjan's strongly connected components; each non-trivial component yields one cycle path. */
function findCycles(
  nodes: readonly ResourceKey[],
  dependsOn: ReadonlyMap<ResourceKey, readonly ResourceKey[]>,
): ResourceKey[][] {
  let index = 0
  const idx = new Map<ResourceKey, number>()
  const low = new Map<ResourceKey, number>()
  const stack: ResourceKey[] = []
  const onStack = new Set<ResourceKey>()
  const components: ResourceKey[][] = []

  const strong = (v: ResourceKey): void => {
    idx.set(v, index)
    low.set(v, index)
    index++
    stack.push(v)
    onStack.add(v)
    for (const w of dependsOn.get(v) ?? []) {
      if (!idx.has(w)) {
        strong(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, idx.get(w)!))
      }
    }
    if (low.get(v) === idx.get(v)) {
      const comp: ResourceKey[] = []
      let w: ResourceKey
      do {
        w = stack.pop()!
        onStack.delete(w)
        comp.push(w)
      } while (w !== v)
      const selfLoop = comp.length === 1 && (dependsOn.get(v) ?? []).includes(v)
      if (comp.length > 1 || selfLoop) components.push(comp)
    }
  }
  for (const n of nodes) if (!idx.has(n)) strong(n)

  return components
    .map((comp) => {
      const members = new Set(comp)
      const start = [...comp].sort()[0]!
      // shortest path back to start inside the component (BFS), giving a readable cycle
      const prev = new Map<ResourceKey, ResourceKey>()
      const queue: ResourceKey[] = [start]
      const seen = new Set<ResourceKey>()
      let end: ResourceKey | undefined
      while (queue.length > 0 && end === undefined) {
        const cur = queue.shift()!
        for (const next of dependsOn.get(cur) ?? []) {
          if (!members.has(next)) continue
          if (next === start) {
            end = cur
            break
          }
          if (!seen.has(next)) {
            seen.add(next)
            prev.set(next, cur)
            queue.push(next)
          }
        }
      }
      const path: ResourceKey[] = [start]
      const back: ResourceKey[] = []
      for (let c = end; c !== undefined && c !== start; c = prev.get(c)) back.push(c)
      path.push(...back.reverse(), start)
      return path
    })
    .sort((a, b) => (a[0]! < b[0]! ? -1 : a[0]! > b[0]! ? 1 : 0))
}
