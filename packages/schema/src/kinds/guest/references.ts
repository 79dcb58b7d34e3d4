import type { KindReference } from '../contract.js'
import { poolReference } from '../pool/references.js'
import { vnetReference } from '../vnet/references.js'
import { namedStorageReferences } from '../storage/references.js'
import type { GuestManifest } from './types.js'

type GuestTarget = 'ISO' | 'DiskImage' | 'TemplateVM' | 'CTTemplate' | 'TemplateCT' | 'Pool' | 'VNet' | 'Storage'

/** A VM's ISO, disk images and clone source, a container's template and clone source, a guest's pool, vnets and storages. */
export function guestReferences(m: GuestManifest): KindReference<GuestTarget>[] {
  const refs: KindReference<GuestTarget>[] = []
  if (m.kind === 'VM' || m.kind === 'TemplateVM') {
    const iso = m.spec.hardware?.cdrom?.iso
    if (iso !== undefined && iso !== 'none')
      refs.push({ kind: 'ISO', name: iso, via: 'cdrom', path: ['spec', 'hardware', 'cdrom', 'iso'] })
    m.spec.disks.forEach((d, i) => {
      if (d.image !== undefined)
        refs.push({ kind: 'DiskImage', name: d.image, via: 'disk-image', path: ['spec', 'disks', i, 'image'] })
    })
    if (m.spec.clone !== undefined)
      refs.push({ kind: 'TemplateVM', name: m.spec.clone, via: 'clone', path: ['spec', 'clone'] })
  } else {
    if (m.spec.template !== undefined)
      refs.push({ kind: 'CTTemplate', name: m.spec.template, via: 'template', path: ['spec', 'template'] })
    if (m.spec.clone !== undefined)
      refs.push({ kind: 'TemplateCT', name: m.spec.clone, via: 'clone', path: ['spec', 'clone'] })
  }
  // create_vm and create (pct) check that `pool=` exists
  if (m.spec.pool !== undefined) refs.push(poolReference(m.spec.pool, ['spec', 'pool']))
  // a NIC on a vnet plugs in only once the vnet is applied (Zones::tap_plug); any other bridge is the node's own
  m.spec.networks.forEach((n, i) => refs.push(vnetReference(n.bridge, ['spec', 'networks', i, 'bridge'])))
  // the storages its volumes are allocated on: a declared Storage is created first
  refs.push(...namedStorageReferences(m.spec, ['spec']))
  return refs
}
