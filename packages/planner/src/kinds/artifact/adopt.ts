/** adopt: the ISOs and CT templates on the storages as artifact manifests (disk images are a gap). */
/**
 * adopt(): a LiveInventory to manifests. Pure: no PVE, no files, no clock. The CLI writes the
 * documents as YAML, prints the gaps and lists, and merges `newSshKeys` into the SOPS file.
 *
 * Every live config key is either mapped to a manifest field, ignored as PVE bookkeeping, or reported as a
 * gap (with sensitive values redacted), so nothing on PVE is silently dropped.
 */
import { API_VERSION, KIND_ROOT_OF } from '@proxops/schema'
import type { LiveInventory, LiveVolume } from '../../inventory.js'
import type { AdoptedFile, Claim, Collect } from '../../kit/adopt.js'
import { sanitiseName } from '../../kit/names.js'

// ---------------------------------------------------------------- artifacts

export function adoptArtifacts(
  live: LiveInventory,
  cluster: string,
  claim: Claim,
  collect: Collect,
  isoNames: Map<string, string>,
): AdoptedFile[] {
  const byFile = new Map<string, { kind: 'ISO' | 'CTTemplate'; filename: string; volumes: LiveVolume[] }>()
  for (const volume of live.volumes) {
    const m = /^[^:]+:(iso|vztmpl|import)\/(.+)$/.exec(volume.volid)
    if (!m) continue
    if (m[1] === 'import') {
      collect.gaps.push({
        kind: 'DiskImage',
        node: volume.node,
        id: volume.volid,
        field: 'content',
        value: 'import',
        note: 'disk images (import content) are not adopted; write a DiskImage manifest by hand',
      })
      continue
    }
    const kind = m[1] === 'iso' ? 'ISO' : 'CTTemplate'
    const key = `${kind}/${m[2]}`
    const entry = byFile.get(key) ?? { kind, filename: m[2]!, volumes: [] }
    entry.volumes.push(volume)
    byFile.set(key, entry)
  }
  const files: AdoptedFile[] = []
  for (const key of [...byFile.keys()].sort()) {
    const { kind, filename, volumes } = byFile.get(key)!
    const name = claim(kind, sanitiseName(filename, kind === 'ISO' ? 'iso' : 'ctt'), filename)
    const storages = [...new Set(volumes.map((v) => v.storage))].sort()
    const storage = storages[0]!
    if (storages.length > 1)
      collect.warnings.push(`${kind} ${filename} is on storages ${storages.join(', ')}; adopted for ${storage} only`)
    const nodes = [...new Set(volumes.filter((v) => v.storage === storage).map((v) => v.node))].sort()
    if (kind === 'ISO') isoNames.set(`${storage}:iso/${filename}`, name)
    collect.gaps.push({
      kind,
      node: nodes[0]!,
      id: `${storage}:${kind === 'ISO' ? 'iso' : 'vztmpl'}/${filename}`,
      field: 'spec.url',
      value: placeholderUrl(storage, filename),
      note: 'PVE does not record where a file came from; replace the placeholder URL',
    })
    files.push({
      path: `${KIND_ROOT_OF[kind]}/${cluster}/${name}.yaml`,
      kind,
      name,
      document: {
        apiVersion: API_VERSION,
        kind,
        metadata: { name },
        spec: { nodes, storage, filename, url: placeholderUrl(storage, filename) },
      },
      incomplete: [],
    })
  }
  return files
}

function placeholderUrl(storage: string, filename: string): string {
  return `https://placeholder.invalid/${encodeURIComponent(storage)}/${encodeURIComponent(filename)}`
}
