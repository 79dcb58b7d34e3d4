/**
 * `prune: never` that outlives the manifest: an object whose manifest carries `proxops/prune: never` is remembered
 * in the data dir (`<data-dir>/prune-never.json`), so that it is still kept once it leaves git. Declaring it again
 * without the annotation forgets it. The cluster config's `policy.prune-never` list needs no memory.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { PRUNE, type Manifest } from '@proxops/schema'

export const KEPT_FILE = 'prune-never.json'

type Kept = Record<string, string[]>

function read(file: string): Kept {
  try {
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { clusters?: unknown }
    const clusters = doc.clusters
    if (clusters === null || typeof clusters !== 'object') return {}
    const out: Kept = {}
    for (const [name, list] of Object.entries(clusters as Record<string, unknown>))
      if (Array.isArray(list)) out[name] = list.filter((x): x is string => typeof x === 'string')
    return out
  } catch {
    return {}
  }
}

/**
 * The cluster's objects kept by their annotation, now and before (`KIND/name`), after recording this commit's
 * manifests. `write: false` (diff, status) reads without recording.
 */
export function keptObjects(
  dataDir: string,
  cluster: string,
  manifests: readonly Manifest[],
  write: boolean,
): { kind: string; name: string }[] {
  const file = path.join(dataDir, KEPT_FILE)
  const all = read(file)
  const before = new Set(all[cluster] ?? [])
  const now = new Set(before)
  for (const m of manifests) {
    const key = `${m.kind}/${m.metadata.name}`
    if (m.metadata.annotations?.[PRUNE] === 'never') now.add(key)
    else now.delete(key)
  }
  const list = [...now].sort()
  if (write && list.join('\n') !== [...before].sort().join('\n')) {
    all[cluster] = list
    mkdirSync(dataDir, { recursive: true })
    const tmp = `${file}.${process.pid}.tmp`
    writeFileSync(tmp, `${JSON.stringify({ format_version: 1, clusters: all }, null, 2)}\n`, { mode: 0o600 })
    renameSync(tmp, file)
  }
  return list.map((key) => {
    const slash = key.indexOf('/')
    return { kind: key.slice(0, slash), name: key.slice(slash + 1) }
  })
}
