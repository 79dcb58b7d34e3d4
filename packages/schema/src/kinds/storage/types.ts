/** The normalised Storage manifest (docs/schema-reference.md#storage): the schema's output, finalised. */
import type { Envelope } from '../contract.js'
import type { StorageOptionKey, StorageSecretKey, StorageType, STORAGE_OPTIONS } from './options.js'

type Form<K extends StorageOptionKey> = (typeof STORAGE_OPTIONS)[K]['form']
type ValueOf<K extends StorageOptionKey> = K extends 'content' | 'nodes'
  ? string[]
  : Form<K> extends 'bool'
    ? boolean
    : Form<K> extends 'int'
      ? number
      : Form<K> extends 'prune'
        ? Partial<Record<StoragePruneKey, number>>
        : string

export type StoragePruneKey =
  'keep-all' | 'keep-last' | 'keep-hourly' | 'keep-daily' | 'keep-weekly' | 'keep-monthly' | 'keep-yearly'

export type StorageSpec = {
  /** the PVE storage id (default metadata.name) */
  id: string
  type: StorageType
} & { [K in StorageOptionKey]?: ValueOf<K> } & { [K in `${StorageSecretKey}-ref`]?: string }

export type StorageManifest = Envelope<'Storage', StorageSpec>
