/** The ClusterOptions kind's schema side (kinds/contract.ts). */
import type { SchemaKind } from '../contract.js'
import { clusterOptionsSpecSchema } from './schema.js'
import type { ClusterOptionsManifest } from './types.js'

export const clusterOptions = {
  name: 'ClusterOptions',
  aliases: [],
  root: 'cluster-options',
  description:
    'The datacenter options of a cluster (`/cluster/options`), one manifest per cluster. ProxOps owns only the keys it declares.',
  spec: clusterOptionsSpecSchema,
  guest: false,
  allowEmpty: false,
  // nothing to complete: every key is as written
  finalise: (m: ClusterOptionsManifest) => void m,
  references: (m: ClusterOptionsManifest) => (void m, [] as never[]),
  // one datacenter.cfg per cluster: a second ClusterOptions declares the same object
  identity: () => [
    {
      key: 'cluster-options',
      label: 'the datacenter options',
      path: ['metadata', 'name'],
      code: 'cluster-options-duplicate',
    },
  ],
} as const satisfies SchemaKind<ClusterOptionsManifest>
