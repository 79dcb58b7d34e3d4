/** The artifact kind (ISO, CTTemplate, DiskImage): files a storage downloads, one copy on each declared node. */
import { artifactContentTypes, isArtifact } from '../../desired.js'
import { artifactAddress } from '../../kit/draft.js'
import { defineKind } from '../../kit/kind.js'
import { adoptArtifacts } from './adopt.js'
import { confirmArtifact } from './confirm.js'
import { planArtifacts } from './plan.js'
import { readArtifacts } from './read.js'
import { artifactRunners } from './run.js'

export const artifact = defineKind({
  name: 'artifact',
  manifests: ['ISO', 'CTTemplate', 'DiskImage'],
  // what requires an artifact needs its copy on the node it acts on, if it has one there, else every copy
  addresses: (m, near) => {
    if (!isArtifact(m)) return []
    const nodes = near !== undefined && m.spec.nodes.includes(near) ? [near] : m.spec.nodes
    return nodes.map((node) => artifactAddress(m.kind, node, m.spec.storage, m.spec.filename))
  },
  // storages are listed only for the content the repository declares artifacts of (artifacts are never pruned)
  observe: (desired) => ({ contentTypes: artifactContentTypes(desired) }),
  read: readArtifacts,
  plan: planArtifacts,
  run: artifactRunners,
  privileges: {
    downloadUrl: (r) => [
      { need: [{ path: `/storage/${r.storage}`, privs: ['Datastore.AllocateTemplate'] }] },
      {
        need: [
          { path: '/', privs: ['Sys.Audit', 'Sys.Modify'] },
          { path: `/nodes/${r.node}`, privs: ['Sys.AccessNetwork'] },
        ],
      },
    ],
  },
  confirm: confirmArtifact,
  summary: { download: 'download' },
  adopt: {
    order: 0,
    run(live, ctx) {
      ctx.files.push(...adoptArtifacts(live, ctx.options.cluster, ctx.claim, ctx.collect, ctx.isoNames))
    },
  },
})
