/** The normalised ClusterOptions manifest (docs/schema-reference.md#clusteroptions). */
import type { Envelope } from '../contract.js'
import type { CLUSTER_OPTIONS, ClusterOptionKey } from './options.js'

type Form<K extends ClusterOptionKey> = (typeof CLUSTER_OPTIONS)[K]['form']
type ValueOf<K extends ClusterOptionKey> =
  Form<K> extends 'map'
    ? Record<string, string | number | boolean>
    : Form<K> extends 'list'
      ? string[]
      : Form<K> extends 'int'
        ? number
        : Form<K> extends 'bool'
          ? boolean
          : string

export type ClusterOptionsSpec = { [K in ClusterOptionKey]?: ValueOf<K> }
export type ClusterOptionsManifest = Envelope<'ClusterOptions', ClusterOptionsSpec>
