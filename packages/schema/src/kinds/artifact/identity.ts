import type { Identity, KindReference } from '../contract.js'
import { ARTIFACT_CONTENT } from './schema.js'
import type { ArtifactManifest } from './types.js'

/**
 * An artifact declares one volume on each of its nodes: `<storage>:<content>/<filename>` (PVE's volid) on that
 * node. A storage shared by several nodes holds one file for all of them; the schema does not know which
 * storages are shared (docs/gaps/schema.md), so the same file on two nodes is two objects here.
 */
export function artifactIdentity(m: ArtifactManifest): Identity[] {
  const volid = `${m.spec.storage}:${ARTIFACT_CONTENT[m.kind].content}/${m.spec.filename}`
  return m.spec.nodes.map((node) => ({
    key: `volume:${node}/${volid}`,
    label: `file ${volid} on node ${JSON.stringify(node)}`,
    path: ['spec', 'filename'],
    code: 'artifact-duplicate',
  }))
}

/** An artifact names no prerequisite. */
export const artifactReferences = (): KindReference<never>[] => []
