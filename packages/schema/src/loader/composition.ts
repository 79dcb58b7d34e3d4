/**
 * A cluster's composition: `clusters/<name>/resources.yaml` read into entries, each entry resolved to a
 * manifest file inside the root, and the files no composition lists.
 */
import { isAbsolute, join, resolve } from 'node:path'
import { type ErrorCode, sortErrors } from '../errors.js'
import { KIND_ROOTS } from '../kinds.js'
import type { PathKey } from '../manifest/parse.js'
import type { Position } from '../yaml.js'
import type { FileInfo } from './fs.js'
import { mapLimit } from '@proxops/pve-client/wire'
import { isMapping, type Loader, YAML_EXT } from './reading.js'
import type { LoadedCluster, UnlistedFile } from './types.js'

/** file-system calls in flight at once: enough to keep libuv's 4 threads busy while parsing goes on */
export const IO_CONCURRENCY = 8

/** Reads `resources.yaml` into entries with their positions. */
export async function readComposition(
  L: Loader,
  real: string,
  file: string,
  cluster: string,
): Promise<Array<{ path: string; at: () => Position }> | undefined> {
  const { docs, errors } = await L.readYaml(real)
  if (errors.length) {
    L.errors.push(...errors.map((e) => ({ ...e, clusters: [cluster] })))
    return undefined
  }
  const doc = L.singleDoc(docs, file)
  if (!doc) return [] // an empty file composes nothing
  const value = doc.value
  let list: unknown
  let prefix: PathKey[] = []
  if (Array.isArray(value)) list = value
  else if (isMapping(value)) {
    for (const key of Object.keys(value)) {
      if (key !== 'resources') {
        L.errors.push(
          L.err(
            'composition-invalid',
            file,
            doc.locate([key], { key: true }),
            `unknown key ${JSON.stringify(key)} in resources.yaml: only "resources:" is allowed`,
            { clusters: [cluster] },
          ),
        )
      }
    }
    list = value.resources ?? []
    prefix = ['resources']
  } else {
    L.errors.push(
      L.err(
        'composition-invalid',
        file,
        doc.start,
        'resources.yaml must be a list of paths, or a mapping with a "resources:" list of paths',
        { clusters: [cluster] },
      ),
    )
    return undefined
  }
  if (!Array.isArray(list)) {
    L.errors.push(
      L.err('composition-invalid', file, doc.locate(prefix), '"resources:" must be a list of paths', {
        clusters: [cluster],
      }),
    )
    return undefined
  }
  const out: Array<{ path: string; at: () => Position }> = []
  list.forEach((item, i) => {
    // positions only for problems: locating re-parses the file with the yaml library
    const at = (): Position => doc.locate([...prefix, i])
    if (item === null || item === undefined) return
    if (typeof item !== 'string') {
      L.errors.push(
        L.err('composition-invalid', file, at(), `entry ${i} of resources must be a path string, got ${typeof item}`, {
          clusters: [cluster],
        }),
      )
      return
    }
    if (item.trim() === '') return
    out.push({ path: item.trim(), at })
  })
  return out
}

type ResolvedEntry =
  { code: ErrorCode; message: string } | { real: string; rel: string; lexicalRel: string; info: FileInfo | undefined }

/** The file-system checks of one composition entry: where it leads (inside the root) and what is there. */
export async function resolveEntry(L: Loader, clusterDir: string, entry: string): Promise<ResolvedEntry> {
  const name = JSON.stringify(entry)
  if (entry.includes('\0') || entry.includes('\\')) {
    return { code: 'composition-invalid', message: `path ${name} contains a backslash or NUL: use / separators` }
  }
  if (isAbsolute(entry)) {
    return {
      code: 'composition-invalid',
      message: `path ${name} is absolute: list paths relative to ${L.rel(clusterDir)}/ (e.g. ../../vm/base/app.yaml)`,
    }
  }
  const lexical = resolve(clusterDir, entry)
  if (!L.inside(lexical)) return { code: 'composition-path-escape', message: `path ${name} leaves the repository root` }
  let escape: string | undefined
  const real = await L.real(lexical, (msg) => (escape = msg))
  if (escape !== undefined) return { code: 'composition-path-escape', message: `path ${name}: ${escape}` }
  const lexicalRel = L.rel(lexical)
  if (!real) return { code: 'composition-path-missing', message: `path ${name} does not exist (${lexicalRel})` }
  return { real, rel: L.rel(real), lexicalRel, info: await L.fs.stat(real) }
}

/**
 * Every YAML file below `<kind root>/<folder>/` that no loaded cluster lists, parsed so that its problems can
 * be shown too. Symlinked directories are not followed; files directly under a kind root are reported as
 * legacy-layout already.
 */
export async function findUnlisted(
  L: Loader,
  clusters: readonly LoadedCluster[],
  compositions: ReadonlyMap<string, string>,
): Promise<UnlistedFile[]> {
  const listed = new Set(clusters.flatMap((c) => c.files))
  // compositions of clusters that were not loaded (their config is broken) still list files
  for (const [name, real] of compositions) {
    if (clusters.some((c) => c.name === name)) continue
    const before = L.errors.length
    const entries = (await readComposition(L, real, `clusters/${name}/resources.yaml`, name)) ?? []
    L.errors.splice(before) // reported, if at all, once the cluster's config is fixed
    for (const e of entries) {
      const r = await resolveEntry(L, join(L.root, 'clusters', name), e.path)
      if ('rel' in r) listed.add(r.rel)
    }
  }
  const found: string[] = []
  const walk = async (dir: string, depth: number): Promise<void> => {
    for (const name of await L.fs.readdir(dir)) {
      const abs = join(dir, name)
      const info = await L.fs.lstat(abs)
      if (info?.isDirectory) await walk(abs, depth + 1)
      else if (depth > 0 && YAML_EXT.test(name) && (info?.isFile || info?.isSymbolicLink)) found.push(abs)
    }
  }
  for (const kindRoot of KIND_ROOTS) {
    const dir = join(L.root, kindRoot)
    if ((await L.fs.lstat(dir))?.isDirectory) await walk(dir, 0)
  }
  const out: UnlistedFile[] = []
  for (const abs of found) {
    const real = await L.real(abs, () => {})
    if (!real || listed.has(L.rel(real))) continue
    const info = await L.fs.stat(real)
    if (!info?.isFile) continue
    const parsed = await L.manifestFile(real, info)
    out.push({ file: L.rel(abs), errors: sortErrors(parsed.errors) })
  }
  return out.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0))
}

/** A push of one problem of the cluster being loaded (the loader adds the cluster's name). */
export type Report = (code: ErrorCode, file: string, at: Position | undefined, message: string) => void

/**
 * The manifest files a composition lists, sorted by path: each entry must resolve to a regular `.yaml` file
 * under a kind root folder, listed once. Problems are reported against `compositionFile`.
 */
export async function composedFiles(
  L: Loader,
  entries: ReadonlyArray<{ path: string; at: () => Position }>,
  clusterDir: string,
  compositionFile: string,
  push: Report,
): Promise<Array<{ real: string; rel: string; info: FileInfo }>> {
  const listed = new Map<string, string>() // real rel path -> entry text
  const files: Array<{ real: string; rel: string; info: FileInfo }> = []
  // the file-system part runs with bounded parallelism; the checks below stay in listing order
  const resolved = await mapLimit(entries, IO_CONCURRENCY, (e) => resolveEntry(L, clusterDir, e.path))
  entries.forEach(({ path: entry, at }, i) => {
    const r = resolved[i]!
    if ('code' in r) {
      push(r.code, compositionFile, at(), r.message)
      return
    }
    const { real, rel, info } = r
    const shown = rel === r.lexicalRel ? rel : `${r.lexicalRel} -> ${rel}`
    if (!info?.isFile) {
      push(
        'composition-not-file',
        compositionFile,
        at(),
        `path ${JSON.stringify(entry)} (${shown}) is not a regular file: list manifest files, not directories`,
      )
      return
    }
    if (!YAML_EXT.test(rel) || !YAML_EXT.test(entry)) {
      push(
        'composition-extension',
        compositionFile,
        at(),
        `path ${JSON.stringify(entry)} (${shown}) must end in .yaml or .yml`,
      )
      return
    }
    const segments = rel.split('/')
    if (!KIND_ROOTS.includes(segments[0]!)) {
      push(
        'composition-kind-root',
        compositionFile,
        at(),
        `path ${JSON.stringify(entry)} (${shown}) is not under a kind root: manifests live in ${KIND_ROOTS.map((k) => `${k}/`).join(', ')}`,
      )
      return
    }
    if (segments.length < 3) return // directly under a kind root: reported repository-wide as legacy-layout
    const prev = listed.get(rel)
    if (prev !== undefined) {
      push(
        'composition-duplicate',
        compositionFile,
        at(),
        `path ${JSON.stringify(entry)} is listed twice (first as ${JSON.stringify(prev)}); remove one`,
      )
      return
    }
    listed.set(rel, entry)
    files.push({ real, rel, info })
  })
  files.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0))
  return files
}
