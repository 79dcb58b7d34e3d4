/**
 * The artifact kinds (ISO, CTTemplate, DiskImage): one file downloaded onto a storage of each listed node
 * (pve-manager PVE::API2::Storage::Status download_url). One spec, three contents. docs/schema-reference.md#iso
 */
import * as v from 'valibot'
import { issueMessage as m } from '../../errors.js'
import { jsonMeta, list, nodeName, obj, oneOfIgnoreCase, storageId, str } from '../../manifest/fields.js'
import { ARTIFACT_FILENAME } from '../../names.js'

export type ArtifactKind = 'ISO' | 'CTTemplate' | 'DiskImage'

/** Each kind's PVE storage content and the filename extensions it allows (lower-case; matched in any case). */
export const ARTIFACT_CONTENT = {
  ISO: { content: 'iso', extensions: ['.iso', '.img'] },
  CTTemplate: { content: 'vztmpl', extensions: ['.tar', '.tar.zst', '.tar.xz', '.tar.gz'] },
  DiskImage: { content: 'import', extensions: ['.qcow2', '.vmdk', '.raw'] },
} as const satisfies Record<ArtifactKind, { content: string; extensions: readonly string[] }>

export function checkArtifactFilename(
  kind: ArtifactKind,
  filename: string,
): { code: 'filename-invalid' | 'filename-extension'; message: string } | undefined {
  if (!ARTIFACT_FILENAME.test(filename)) {
    return {
      code: 'filename-invalid',
      message: `filename "${filename}" is invalid: start with a letter or digit, then letters, digits, ".", "_" and "-" (no path separators)`,
    }
  }
  const lower = filename.toLowerCase()
  const allowed = ARTIFACT_CONTENT[kind].extensions
  if (!allowed.some((ext) => lower.endsWith(ext) && lower.length > ext.length)) {
    return {
      code: 'filename-extension',
      message: `filename "${filename}" must end in ${allowed.join(', ')} for kind ${kind}`,
    }
  }
  return undefined
}

export const artifactSpecSchema = (kind: ArtifactKind) => {
  const { content: what, extensions: exts } = ARTIFACT_CONTENT[kind]
  return obj(
    {
      nodes: v.optional(list(nodeName('A node name.'), 'Nodes the file must exist on (each checked independently).')),
      node: v.optional(nodeName('Legacy single node; ignored when `nodes` is non-empty.')),
      storage: storageId(`Storage with \`${what}\` content.`),
      filename: v.pipe(
        v.string(m('field-type', 'must be a string')),
        v.description(`File name on the storage; ends in ${exts.join(', ')} (any case).`),
        jsonMeta<string>({
          pattern: `^[A-Za-z0-9][A-Za-z0-9._-]*(?:${exts.map((e) => [...e].map((c) => (/[a-z]/i.test(c) ? `[${c.toUpperCase()}${c.toLowerCase()}]` : /[0-9]/.test(c) ? c : `\\${c}`)).join('')).join('|')})$`,
        }),
      ),
      url: v.pipe(
        v.string(m('field-type', 'must be a string')),
        v.description('http(s) URL the PVE node downloads the file from.'),
        v.regex(
          /^[hH][tT][tT][pP][sS]?:\/\/[^\s/]+/,
          m('url-invalid', 'url must start with https:// (or http://) and name a host'),
        ),
      ),
      checksum: v.optional(
        obj(
          {
            algorithm: v.optional(oneOfIgnoreCase(['sha256', 'sha1', 'sha512', 'md5'], 'Checksum algorithm.')),
            value: v.optional(str('Expected hex digest.')),
          },
          'Checksum sent with the download; algorithm and value together.',
        ),
      ),
    },
    'Storage artifact spec.',
  )
}

/** the three schemas differ only in descriptions and the filename pattern: one of them gives the spec's type */
export const isoSpecSchema = artifactSpecSchema('ISO')
