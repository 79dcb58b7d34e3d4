/**
 * The pure checks of one cluster's resources, after parsing: unique names and vmids, the nodes allowlist
 * (artifacts shared with other clusters are scoped to this cluster's nodes), dependencies and their nodes,
 * clone sources and cycles. Returns the cluster's index and dependency graph; problems go to `push`.
 */
import { clusterDependencies, type DependencyGraph, type ResourceKey, resourceKey } from '../graph.js'
import { conflictMessage, identityIndex } from '../identity.js'
import type { PathKey } from '../kinds/contract.js'
import { guestKey } from '../kinds/guest/identity.js'
import { isGuestKind } from '../kinds.js'
import { nearest } from '../suggest.js'
import type { Manifest } from '../manifest/types.js'
import type { Position } from '../yaml.js'
import type { Report } from './composition.js'
import type { ClusterIndex, LoadedResource } from './types.js'

export interface ClusterCheckInput {
  name: string
  /** the cluster's nodes allowlist (empty: any node) */
  nodes: readonly string[]
  /** nodes of the other configured clusters */
  otherNodes: ReadonlySet<string>
  compositionFile: string
  /** parsed resources in file then document order; artifacts' `spec.nodes` are narrowed in place */
  resources: readonly LoadedResource[]
  locate: (r: LoadedResource, path: PathKey[], key?: boolean) => Position
  push: Report
}

export function checkCluster(input: ClusterCheckInput): { index: ClusterIndex; graph: DependencyGraph } {
  const { name, otherNodes, compositionFile, resources, locate, push } = input
  const byKey = new Map<ResourceKey, LoadedResource>()
  const allow = new Set(input.nodes)
  for (const r of resources) {
    const m = r.manifest
    const first = byKey.get(r.key)
    if (first) {
      push(
        'duplicate-name',
        r.file,
        locate(r, ['metadata', 'name']),
        `${m.kind} "${m.metadata.name}" is declared twice in cluster ${name} (first at ${first.file}:${first.line}); names are unique per kind`,
      )
      continue
    }
    byKey.set(r.key, r)
    if (isGuestKind(m.kind)) {
      const spec = m.spec as { node: string }
      if (allow.size > 0 && !allow.has(spec.node)) {
        push(
          'node-not-allowed',
          r.file,
          locate(r, ['spec', 'node']),
          `unknown node: "${spec.node}" is not in the nodes allowlist of cluster ${name} (pve.clusters.${name}.nodes: ${[...allow].join(', ')})`,
        )
      }
    } else if (m.kind === 'BackupJob') {
      const node = m.spec.node
      if (node !== undefined && allow.size > 0 && !allow.has(node))
        push(
          'node-not-allowed',
          r.file,
          locate(r, ['spec', 'node']),
          `unknown node: "${node}" is not in the nodes allowlist of cluster ${name} (pve.clusters.${name}.nodes: ${[...allow].join(', ')})`,
        )
    } else if (
      m.kind === 'Pool' ||
      m.kind === 'Role' ||
      m.kind === 'Group' ||
      m.kind === 'User' ||
      m.kind === 'Token' ||
      m.kind === 'ACL' ||
      m.kind === 'Zone' ||
      m.kind === 'VNet' ||
      m.kind === 'Subnet' ||
      m.kind === 'SdnController'
    ) {
      // a pool, the access objects and the SDN objects have no node of their own
    } else if (m.kind === 'ClusterOptions') {
      // datacenter options name no node
    } else if (m.kind === 'Storage') {
      // a storage's `nodes` may name any node of the cluster (the allowlist bounds what ProxOps reads, not storage.cfg)
    } else if (allow.size > 0) {
      // Artifacts may be shared (base/) by clusters with different nodes: a node of another cluster's
      // allowlist is scoped out of this cluster's copy; a node no cluster knows is an error (typo guard).
      const spec = m.spec as { nodes: string[] }
      const kept: string[] = []
      spec.nodes.forEach((n, i) => {
        if (allow.has(n)) kept.push(n)
        else if (!otherNodes.has(n)) {
          push(
            'node-not-allowed',
            r.file,
            locate(r, ['spec', 'nodes', i]),
            `unknown node: "${n}" is not in the nodes allowlist of cluster ${name} (pve.clusters.${name}.nodes: ${[...allow].join(', ')}) nor of any other cluster`,
          )
        }
      })
      if (kept.length === 0 && spec.nodes.every((n) => otherNodes.has(n))) {
        push(
          'node-not-allowed',
          r.file,
          locate(r, ['spec', 'nodes']),
          `none of the nodes of ${r.key} (${spec.nodes.join(', ')}) belong to cluster ${name} (nodes: ${[...allow].join(', ')}): add one of its nodes or remove the file from ${compositionFile}`,
        )
      }
      spec.nodes = kept
    }
  }
  const indexed = [...byKey.values()]

  // ------------------------------------------------ one PVE object, one manifest (identity.ts, as plan() checks)
  const resourceOf = new Map<Manifest, LoadedResource>(indexed.map((r) => [r.manifest, r]))
  const identities = identityIndex(indexed.map((r) => r.manifest))
  for (const c of identities.conflicts) {
    const first = resourceOf.get(c.first.manifest)!
    const r = resourceOf.get(c.second.manifest)!
    push(
      c.second.identity.code,
      r.file,
      locate(r, c.second.identity.path),
      conflictMessage(c, `${first.file}:${first.line}`),
    )
  }

  // ------------------------------------------------ dependencies: the graph plan() orders by (graph.ts)
  const byName = new Map<string, LoadedResource[]>()
  for (const r of indexed) {
    const list = byName.get(r.manifest.metadata.name) ?? []
    list.push(r)
    byName.set(r.manifest.metadata.name, list)
  }
  const { graph, references, problems } = clusterDependencies(indexed.map((r) => r.manifest))
  for (const r of indexed) {
    for (const ref of references.get(r.key) ?? []) {
      const at = (): Position => locate(r, ref.path) // only when a problem is reported: it re-parses the file
      // a pool id no Pool of this cluster declares is one PVE already has (pools are not pruned from under it)
      if (ref.identity !== undefined) continue
      const target = ref.target === undefined ? undefined : byKey.get(ref.target)
      if (!target) {
        const sameName = (byName.get(ref.name) ?? []).filter((x) => x !== r)
        if (ref.via !== 'annotation' && sameName.length > 0) {
          push(
            'dependency-kind',
            r.file,
            at(),
            `${ref.via === 'clone' ? 'clone' : ref.path[ref.path.length - 1]} must name a ${ref.kind}, but "${ref.name}" is a ${sameName.map((x) => x.manifest.kind).join(' and a ')}`,
          )
        } else if (ref.via === 'clone' && ref.name === r.manifest.metadata.name) {
          push('clone-invalid', r.file, at(), `a ${r.manifest.kind} cannot clone itself: clone must name a ${ref.kind}`)
        } else {
          // a typo of a declared name of the kind it must be gets the name; else the file may be unlisted
          const guess = nearest(
            ref.name,
            indexed.filter((x) => x.manifest.kind === ref.kind && x !== r).map((x) => x.manifest.metadata.name),
          )
          push(
            'dependency-unknown',
            r.file,
            at(),
            `${ref.kind} "${ref.name}" is not in cluster ${name}'s composition: ${guess !== undefined ? `did you mean "${guess}"? If not, list` : 'list'} its file in ${compositionFile} (resources of other clusters are not visible)`,
          )
        }
        continue
      }
      // Where a create-time source lies (a clone's template, a disk image or container template the guest is made
      // from) matters only when the guest is created, which the plan knows and the repository does not: plan()
      // blocks such a create (`source-node`), and an existing guest moves whatever its sources (docs/safety.md).
      if (ref.via === 'cdrom') {
        // a guest's ISO is in its drive while it runs: it must be downloaded onto the guest's own node
        const guestNode = (r.manifest.spec as { node: string }).node
        const nodes = (target.manifest.spec as { nodes: string[] }).nodes
        if (!nodes.includes(guestNode)) {
          push(
            'dependency-node',
            r.file,
            at(),
            `${target.key} is not declared on node "${guestNode}" (its nodes: ${nodes.join(', ') || 'none in this cluster'}): add ${guestNode} to its spec.nodes`,
          )
        }
      }
      if (ref.via === 'clone') {
        const guest = r.manifest
        const vm = guest.spec as { node: string; vmid: number }
        const tpl = target.manifest.spec as { node: string; vmid: number }
        if (tpl.vmid === vm.vmid)
          push(
            'clone-invalid',
            r.file,
            at(),
            `${ref.kind} "${ref.name}" has the same vmid ${vm.vmid} as this ${guest.kind}`,
          )
        else if (guest.kind === 'LXC' && target.manifest.kind === 'TemplateCT') {
          // pve-container clone_vm copies every volume mount point and refuses bind mounts; the copy keeps the
          // template's size, which can only grow afterwards
          const src = target.manifest.spec
          if (src['bind-mounts'].length > 0)
            push(
              'clone-invalid',
              r.file,
              at(),
              `TemplateCT "${ref.name}" has bind mounts, which PVE cannot clone ("unable to clone mountpoint")`,
            )
          else if (guest.spec.root.size < src.root.size)
            push(
              'clone-invalid',
              r.file,
              locate(r, ['spec', 'root', 'size']),
              `spec.root.size is smaller than TemplateCT "${ref.name}"'s root (${src.root.size} bytes); a clone's root filesystem can only grow`,
            )
        }
      }
    }
  }
  // unknown targets are reported above, with the kind they were meant to have; malformed annotations by the parser
  for (const p of problems) {
    if (p.code !== 'dependency-cycle') continue
    const first = byKey.get(p.key)!
    push(
      'dependency-cycle',
      first.file,
      p.path.length > 0 ? locate(first, p.path) : { line: first.line, column: first.column },
      p.message,
    )
  }

  const index: ClusterIndex = {
    resources: indexed,
    get: (kind, n) => byKey.get(resourceKey(kind, n)) as never,
    ofKind: (kind) => indexed.filter((r) => r.manifest.kind === kind) as never,
    byKey: (key) => byKey.get(key),
    guest: (node, vmid) => {
      const owner = identities.owner(guestKey(vmid))
      const r = owner && resourceOf.get(owner)
      return r && (r.manifest.spec as { node: string }).node === node ? r : undefined
    },
  }
  return { index, graph }
}
