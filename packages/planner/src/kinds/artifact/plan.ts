/**
 * Planning the artifact kind (ISO, CTTemplate, DiskImage): a `download-url` on every declared node whose storage
 * lacks the file (once for a shared storage). Artifacts are never pruned, never replaced. Pure.
 */
import { ARTIFACT_CONTENT, artifactVolid, isArtifact } from '../../desired.js'
import { keyOf } from '../../kit/deps.js'
import { artifactAddress } from '../../kit/draft.js'
import type { PlanParamValue, Skip } from '../../plan-types.js'
import { emptyPlan, type KindPlan, type PlanContext } from '../../kit/kind.js'

export { artifactVolid }

export function planArtifacts(ctx: PlanContext): KindPlan {
  const out = emptyPlan()
  const volumes = new Set(ctx.live.volumes.map((v) => `${v.node}\0${v.storage}\0${v.volid}`))
  const unreadable = new Map(ctx.live.unreadableStorages.map((u) => [`${u.node}\0${u.storage}`, u.unreadable]))
  const shared = new Set(ctx.live.storages.filter((s) => s.shared).map((s) => `${s.node}\0${s.storage}`))
  for (const m of ctx.desired.manifests) {
    if (!isArtifact(m)) continue
    const { storage, filename } = m.spec
    const volid = artifactVolid(m)
    const resource = keyOf(m.kind, m.metadata.name)
    // a shared storage keeps one file for every node that holds it: one download, on the first node that can
    // make it; the other nodes see the file once it is there
    let sharedDownload: string | undefined
    for (const node of m.spec.nodes) {
      const address = artifactAddress(m.kind, node, storage, filename)
      const skip = (code: Skip['code'], message: string) =>
        out.skips.push({ code, address, kind: m.kind, node, message })
      if (ctx.nodeDown(node)) {
        skip('node-offline', `node ${node} is offline or unknown; not checking ${storage}/${filename} this cycle`)
        continue
      }
      const unread = unreadable.get(`${node}\0${storage}`)
      if (unread !== undefined) {
        skip(
          'storage-unreadable',
          `live inventory of ${storage} on ${node} unreadable this cycle (${unread}); skipping download of ${storage}/${filename}`,
        )
        continue
      }
      if (volumes.has(`${node}\0${storage}\0${volid}`)) continue
      // download_url: the storage must be enabled on the node and configured for the content (else PVE refuses)
      const refusal = downloadRefusal(ctx, node, storage, ARTIFACT_CONTENT[m.kind])
      if (refusal !== undefined) {
        out.anomalies.push({
          code: 'storage-refused',
          address,
          kind: m.kind,
          field: 'spec.storage',
          message: `${resource}: PVE would refuse the download on ${node}: ${refusal}; not downloaded this cycle`,
        })
        continue
      }
      const isShared = shared.has(`${node}\0${storage}`)
      if (isShared && sharedDownload !== undefined) continue
      if (isShared) sharedDownload = node
      const params: Record<string, PlanParamValue> = { url: m.spec.url, filename, content: ARTIFACT_CONTENT[m.kind] }
      if (m.spec.checksum) {
        params.checksum = m.spec.checksum.value
        params['checksum-algorithm'] = m.spec.checksum.algorithm
      }
      out.drafts.push({
        resource,
        address,
        kind: m.kind,
        name: m.metadata.name,
        node,
        storage,
        filename,
        type: 'download',
        reason: isShared
          ? `${m.kind} ${filename} not present on shared storage ${storage}; will download once, on ${node}`
          : `${m.kind} ${filename} not present on storage ${storage} on ${node}; will download`,
        diffs: [{ field: 'spec.url', key: 'volid', after: volid }],
        disruption: 'none',
        tier: 0,
        level: ctx.levelOf(resource),
        requests: [{ call: 'downloadUrl', node, storage, params }],
      })
    }
  }
  return out
}

/** PVE's refusal of a download to `storage` on `node`, from `/cluster/resources` (no rows for the node: unknown) */
function downloadRefusal(ctx: PlanContext, node: string, storage: string, content: string): string | undefined {
  const here = ctx.live.storages.filter((s) => s.node === node)
  if (here.length === 0) return undefined
  const s = here.find((x) => x.storage === storage)
  if (!s) return `storage '${storage}' does not exist, is disabled or is not available on node '${node}'`
  return s.content.includes(content)
    ? undefined
    : `storage '${storage}' is not configured for content-type '${content}'`
}
