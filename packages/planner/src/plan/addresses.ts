/**
 * The addresses under which a plan reports a manifest's object (docs/plan-format.md, `address`): each kind's own
 * (Kind.addresses: a guest `Kind/node/vmid(name)`, an artifact `Kind/node/storage/filename` on each of its nodes,
 * the cluster-wide kinds by their PVE id). `status` reads an object's state through them.
 */
import type { Manifest } from '@proxops/schema'
import { kindOfManifest } from '../kinds/index.js'

export const addressesOf = (m: Manifest): string[] => kindOfManifest(m).addresses(m)
