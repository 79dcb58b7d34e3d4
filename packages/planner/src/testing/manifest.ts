/**
 * Manifests built in code (tests, desired state written in code), the way a repository's are read: through
 * @proxops/schema's parser, so every default and normalisation (sizes in bytes, NIC slots, tag order, ...) is the
 * parser's, never a copy of it.
 */
import { API_VERSION, formatPath, parseManifest, type Manifest } from '@proxops/schema'

/** A document as written in YAML (`apiVersion` may be left out); throws naming each invalid field. */
export function manifest(doc: Readonly<Record<string, unknown>>): Manifest {
  const parsed = parseManifest({ apiVersion: API_VERSION, ...doc })
  if (parsed.ok) return parsed.manifest
  const what = `${String(doc.kind)}/${String((doc.metadata as { name?: unknown } | undefined)?.name)}`
  const lines = parsed.issues.map((i) => `  ${formatPath(i.path) || '(document)'}: ${i.code} ${i.message}`)
  throw new Error(`manifest ${what} is invalid:\n${lines.join('\n')}`)
}
