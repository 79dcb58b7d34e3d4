import type { Add } from '../contract.js'
import { checkArtifactFilename } from './schema.js'
import type { ArtifactManifest } from './types.js'

const CHECKSUM_HEX: Readonly<Record<string, number>> = { md5: 32, sha1: 40, sha256: 64, sha512: 128 }

/** The legacy `node` promoted into `nodes`; the filename's extension; the checksum's two halves and length. */
export function finaliseArtifact(m: ArtifactManifest, add: Add): void {
  const spec: ArtifactManifest['spec'] & { node?: string; nodes?: string[] } = m.spec
  const nodes = spec.nodes && spec.nodes.length > 0 ? spec.nodes : spec.node !== undefined ? [spec.node] : []
  if (nodes.length === 0)
    add('field-required', ['spec'], 'missing required field "nodes" (the list of nodes the file must exist on)')
  spec.nodes = [...new Set(nodes)]
  delete spec.node
  const bad = checkArtifactFilename(m.kind, spec.filename)
  if (bad) add(bad.code, ['spec', 'filename'], bad.message)
  const c = spec.checksum as { algorithm?: string; value?: string } | undefined
  if (c) {
    if ((c.algorithm === undefined) !== (c.value === undefined)) {
      add('checksum-incomplete', ['spec', 'checksum'], 'checksum needs both algorithm and value')
    } else if (c.algorithm !== undefined && c.value !== undefined) {
      c.value = c.value.trim().toLowerCase()
      const len = CHECKSUM_HEX[c.algorithm]!
      if (!new RegExp(`^[0-9a-f]{${len}}$`).test(c.value))
        add('field-invalid', ['spec', 'checksum', 'value'], `a ${c.algorithm} checksum is ${len} hex digits`)
    } else {
      delete spec.checksum
    }
  }
}
