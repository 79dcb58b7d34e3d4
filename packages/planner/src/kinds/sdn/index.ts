/**
 * The SDN kind: pve-network's controllers (evpn), zones, vnets and subnets (`SdnController`, `Zone`, `VNet`,
 * `Subnet` manifests) and the one `PUT /cluster/sdn` that makes a plan's edits running (docs/network.md).
 */
import { defineKind } from '../../kit/kind.js'
import { one } from '../../kit/privileges.js'
import { adoptSdn } from './adopt.js'
import { confirmSdn } from './confirm.js'
import { APPLY_ADDRESS, isSdn, planSdn, sdnAddress } from './plan.js'
import { readSdn } from './read.js'
import { sdnRunners } from './run.js'

/** the zones', vnets', subnets' and controllers' create/update/delete and the reload: SDN.Allocate */
const allocate = (path: string) => [{ need: one(path, 'SDN.Allocate') }]

export const sdn = defineKind({
  name: 'sdn',
  manifests: ['SdnController', 'Zone', 'VNet', 'Subnet'],
  // the one apply of a plan's SDN edits (address `SdnApply/cluster`)
  actionKinds: ['SdnApply'],
  // for an action on a node (a guest on the vnet) a VNet is also named by the apply: it waits for the vnet to be
  // running, not only written; the SDN objects (no node) that name a vnet come before the apply
  addresses: (m, near) =>
    !isSdn(m)
      ? []
      : m.kind === 'VNet' && near !== undefined && near !== ''
        ? [sdnAddress(m), APPLY_ADDRESS]
        : [sdnAddress(m)],
  observe: (desired) => ({ sdn: desired.manifests.some(isSdn) }),
  read: readSdn,
  plan: planSdn,
  run: sdnRunners,
  privileges: {
    // Zones, Vnets, Subnets, Controllers: perm /sdn/zones/<zone>[/<vnet>] or /sdn/controllers SDN.Allocate; the
    // token is asked for it on /sdn, which covers every object below (propagated)
    sdnWrite: () => allocate('/sdn'),
    applySdn: () => allocate('/sdn'),
  },
  confirm: confirmSdn,
  summary: { create: 'create', update: 'update', delete: 'delete' },
  adopt: { order: 5, run: adoptSdn },
})
