/** The dependency levels plan() orders by: the schema's graph (the one `validate` checks), as plan input errors. */
import { clusterDependencies, type Manifest } from '@proxops/schema'
import { PlanInputError } from '../errors.js'

export const keyOf = (kind: string, name: string): string => `${kind}/${name}`

/**
 * Each manifest's level (0 without prerequisites, else 1 + the highest prerequisite's) and its prerequisites'
 * keys, sorted. Throws on a malformed `proxops/depends-on`, an unknown target or a cycle, naming the manifest.
 */
export function levels(
  byKey: ReadonlyMap<string, Manifest>,
): Map<string, { level: number; prereqs: readonly string[] }> {
  const { graph, problems } = clusterDependencies([...byKey.values()])
  const first = problems[0]
  if (first) throw new PlanInputError('PLAN_DEPENDENCY', first.message, first.key)
  return new Map(
    graph.order.map((key) => [key, { level: graph.level.get(key) ?? 0, prereqs: graph.dependsOn.get(key) ?? [] }]),
  )
}
