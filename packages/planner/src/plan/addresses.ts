/**
 * The addresses under which a plan reports a manifest's object (docs/plan-format.md, `address`): a guest
 * `Kind/node/vmid(name)`, an artifact `Kind/node/storage/filename` on each of its nodes, the cluster-wide kinds by
 * their PVE id. `status` reads an object's state through them; every kind has its case.
 */
import type { Manifest } from '@proxops/schema'
import { backupAddress } from '../kinds/backup-job/plan.js'
import { poolAddress } from '../kinds/pool/plan.js'
import { artifactAddress, guestAddress } from './order.js'

export function addressesOf(m: Manifest): string[] {
  switch (m.kind) {
    case 'VM':
    case 'TemplateVM':
    case 'LXC':
    case 'TemplateCT':
      return [guestAddress(m.kind, m.spec.node, m.spec.vmid, m.metadata.name)]
    case 'ISO':
    case 'CTTemplate':
    case 'DiskImage':
      return m.spec.nodes.map((node) => artifactAddress(m.kind, node, m.spec.storage, m.spec.filename))
    case 'BackupJob':
      return [backupAddress(m.spec.id)]
    case 'Pool':
      return [poolAddress(m.spec.id)]
  }
}
