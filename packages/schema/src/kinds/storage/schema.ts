/**
 * The Storage kind: one storage.cfg section (pve-storage PVE::API2::Storage::Config). Keys are PVE's option names,
 * read from one table (options.ts); which keys a type may carry is checked in finalise, as check_config does.
 * docs/schema-reference.md#storage
 */
import * as v from 'valibot'
import { issueMessage as m } from '../../errors.js'
import { bool, int, list, nodeName, obj, oneOf, str } from '../../manifest/fields.js'
import { pruneBackupsSchema } from '../../manifest/prune-backups.js'
import { STORAGE_OPTIONS, STORAGE_SECRETS, STORAGE_TYPES, secretRefField, type StorageOption } from './options.js'

/** `prune-backups` as pve-storage's prune-backups format has it */
export const storagePruneSchema = pruneBackupsSchema('Retention of backups on this storage (PVE `prune-backups`).')

const CONTENT = ['images', 'rootdir', 'iso', 'vztmpl', 'backup', 'snippets', 'import'] as const

function optionSchema(key: string, o: StorageOption): v.GenericSchema {
  const d = `${o.description} Types: ${o.types.join(', ')}.`
  if (key === 'content') return list(oneOf(CONTENT, 'A content type.'), d)
  if (key === 'nodes') return list(nodeName('A node name.'), d)
  switch (o.form) {
    case 'bool':
      return bool(d)
    case 'int':
      return int(d, -1)
    case 'prune':
      return storagePruneSchema
    default:
      return v.pipe(str(d), v.regex(/^[^\n\r]*$/, m('field-invalid', 'must be a single line')))
  }
}

const ref = (key: string) =>
  v.optional(
    str(
      `SOPS reference (\`secrets.<name>\`) of the storage's \`${key}\`; PVE never returns it, ProxOps sends it on create and when its fingerprint changes.`,
    ),
  )

export const storageSpecSchema = obj(
  {
    id: v.optional(str('PVE storage id; default `metadata.name`.')),
    type: oneOf(STORAGE_TYPES, 'The storage plugin type.'),
    ...(Object.fromEntries(
      Object.entries(STORAGE_OPTIONS).map(([k, o]) => [k, v.optional(optionSchema(k, o))]),
    ) as Record<keyof typeof STORAGE_OPTIONS, v.OptionalSchema<v.GenericSchema, undefined>>),
    ...(Object.fromEntries(
      Object.keys(STORAGE_SECRETS).map((k) => [secretRefField(k as keyof typeof STORAGE_SECRETS), ref(k)]),
    ) as unknown as Record<`${keyof typeof STORAGE_SECRETS}-ref`, v.OptionalSchema<v.GenericSchema, undefined>>),
  },
  'Storage spec: the PVE storage id and type, the options ProxOps manages (as PVE names them) and SOPS references for its credentials.',
)
