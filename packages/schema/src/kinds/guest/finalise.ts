/**
 * Cross-field rules and context defaults of the guest kinds: drive, NIC and mount point slots, clone sources,
 * cloud-init data, `spec.extra`, `spec.ha` (ha.ts) and `spec.firewall` (firewall.ts).
 */
import { isIP } from 'node:net'
import { reservedExtraKey, EXTRA_KEY } from '../../extra.js'
import { REF_NAME, checkResourceName } from '../../names.js'
import { FORMAT_REQUIRES, unmetRequires } from '../../pve-requires.js'
import type { Add, PathKey } from '../contract.js'
import { CLOUD_INIT_SLOT, cdSlot } from './drive-slots.js'
import { checkFirewall } from './firewall.js'
import { checkHa } from './ha.js'
import type { ContainerManifest, GuestManifest, QemuManifest } from './types.js'

/** A guest's own rules, then its firewall's (which reads the NIC slots those default). */
export function finaliseGuest(m: GuestManifest, add: Add): void {
  if (m.kind === 'VM' || m.kind === 'TemplateVM') finaliseQemu(m, add)
  else finaliseContainer(m, add)
  if (m.spec.firewall) checkFirewall(m.spec.firewall, m.spec.networks, add)
}

function dedupe(list: string[]): string[] {
  return [...new Set(list)]
}

function checkExtra(family: 'qemu' | 'lxc', extra: Record<string, string>, add: Add): void {
  for (const key of Object.keys(extra)) {
    const path = ['spec', 'extra', key]
    if (!EXTRA_KEY.test(key)) {
      add('extra-key-invalid', path, `spec.extra key ${JSON.stringify(key)} is not a PVE parameter name`)
      continue
    }
    const reason = reservedExtraKey(family, key)
    if (reason) add('extra-reserved-key', path, reason)
  }
}

// qemu-server's drive buses (PVE::QemuServer::Drive, MAX_*_DISKS); PVE has no nvme disk bus
const DISK_BUS = /^(scsi|virtio|sata|ide)(\d+)$/
const BUS_MAX: Readonly<Record<string, number>> = { scsi: 30, virtio: 15, sata: 5, ide: 3 }

function checkCidr(value: string): boolean {
  const slash = value.indexOf('/')
  if (slash < 0) return false
  const addr = value.slice(0, slash)
  const prefix = value.slice(slash + 1)
  const family = isIP(addr)
  if (!family || !/^\d{1,3}$/.test(prefix)) return false
  return Number(prefix) <= (family === 4 ? 32 : 128)
}

function finaliseQemu(m: QemuManifest, add: Add): void {
  const { kind, spec } = m
  const name = m.metadata.name
  if (kind === 'TemplateVM' && spec.state !== 'stopped') {
    add('template-state', ['spec', 'state'], 'a TemplateVM is always stopped: remove state or write state: stopped')
  }
  spec['pve-name'] ??= name
  if (!HOSTNAME.test(spec['pve-name']))
    add(
      'field-invalid',
      ['spec', 'pve-name'],
      `pve-name ${JSON.stringify(spec['pve-name'])} must be a DNS name (letters, digits, "-" and ".")`,
    )
  spec.tags = dedupe(spec.tags)
  checkExtra('qemu', spec.extra, add)
  if (spec.ha) checkHa(kind, spec.ha, spec.state, spec.node, add)

  if (spec.clone !== undefined) {
    if (kind === 'TemplateVM') add('field-invalid', ['spec', 'clone'], 'clone is only supported for kind VM')
    if (spec.disks.length > 0)
      add(
        'clone-with-disks',
        ['spec', 'disks'],
        'a clone-backed VM takes its disks from the template: remove spec.disks (or remove clone)',
      )
  } else if (spec.disks.length === 0) {
    add('disks-required', ['spec'], 'declare at least one disk in spec.disks (or set spec.clone to clone a TemplateVM)')
  }

  const hw = spec.hardware
  const ciEnabled = hw?.['cloud-init']?.enabled === true
  const reservedSlots = new Map<string, string>()
  if (ciEnabled) reservedSlots.set(CLOUD_INIT_SLOT, 'the cloud-init drive')
  if (hw?.cdrom) reservedSlots.set(cdSlot(ciEnabled), 'the CD/DVD drive')

  const seen = new Map<string, number>()
  spec.disks.forEach((disk, i) => {
    const p: PathKey[] = ['spec', 'disks', i]
    disk.interface = (disk.interface ?? `scsi${i}`).trim()
    if (disk.size !== undefined && disk.image !== undefined) {
      add(
        'disk-size-with-image',
        [...p, 'size'],
        'an image-seeded disk takes its size from the image: remove size (or image)',
      )
    } else if (disk.size === undefined && disk.image === undefined) {
      add('disk-size-missing', p, 'a disk needs a size (e.g. size: 32GiB) or an image (the name of a DiskImage)')
    }
    const bus = DISK_BUS.exec(disk.interface)
    if (!bus || Number(bus[2]) > BUS_MAX[bus[1]!]!) {
      add(
        'disk-interface-invalid',
        [...p, 'interface'],
        `interface ${JSON.stringify(disk.interface)} must be scsi0-30, virtio0-15, sata0-5 or ide0-3 (PVE has no nvme disk bus)`,
      )
    } else if (disk.ssd !== undefined && bus[1] === 'virtio') {
      add(
        'ssd-bus',
        [...p, 'ssd'],
        `ssd is not supported on ${bus[1]} disks: use a scsi, sata or ide interface, or remove ssd`,
      )
    } else if (disk.iothread && (bus[1] === 'sata' || bus[1] === 'ide')) {
      // PVE's sata/ide drive formats have no iothread property: the create would fail with a 400
      add(
        'iothread-bus',
        [...p, 'iothread'],
        `iothread is only supported on scsi and virtio disks: use one of those interfaces, or remove iothread`,
      )
    }
    const prev = seen.get(disk.interface)
    if (prev !== undefined)
      add('slot-duplicate', [...p, 'interface'], `disk slot ${disk.interface} is already used by spec.disks[${prev}]`)
    else seen.set(disk.interface, i)
    const claimed = reservedSlots.get(disk.interface)
    if (claimed) add('slot-duplicate', [...p, 'interface'], `disk slot ${disk.interface} is used by ${claimed}`)
  })

  const nicSlots = new Map<string, string>()
  spec.networks.forEach((nic, i) => {
    nic.slot = (nic.slot ?? `net${i}`).trim()
    claimSlot('net', nic.slot, ['spec', 'networks', i, 'slot'], nicSlots, `spec.networks[${i}]`, add)
  })

  if (hw) {
    if (hw.cdrom && hw.cdrom.iso !== 'none') {
      const bad = checkResourceName(hw.cdrom.iso)
      if (bad)
        add('name-invalid', ['spec', 'hardware', 'cdrom', 'iso'], `${bad} (or write none to keep the drive empty)`)
      // qemu-server's create and update refuse an ISO without media=cdrom
      if (hw.cdrom.media === 'disk')
        add(
          'field-invalid',
          ['spec', 'hardware', 'cdrom', 'media'],
          'media: disk attaches the ISO as a hard disk, which PVE refuses ("explicit \'media=cdrom\' is required for iso images"); write media: cdrom or leave it out',
        )
    }
    const ci = hw['cloud-init']
    if (ci?.enabled && ci.storage === undefined) {
      add(
        'field-required',
        ['spec', 'hardware', 'cloud-init'],
        'missing required field "storage": a cloud-init drive needs a storage with images content',
      )
    }
    const pciSlots = new Map<string, number>()
    hw['pci-devices'].forEach((dev, i) => {
      const prev = pciSlots.get(dev.slot)
      if (prev !== undefined)
        add(
          'slot-duplicate',
          ['spec', 'hardware', 'pci-devices', i, 'slot'],
          `PCI slot ${dev.slot} is already used by pci-devices[${prev}]`,
        )
      else pciSlots.set(dev.slot, i)
    })
    hw['pci-devices'].sort((a, b) => Number(a.slot.slice(7)) - Number(b.slot.slice(7)))
  }

  const bootOrder = spec.options?.['boot-order']
  if (bootOrder) {
    const seenBoot = new Set<string>()
    bootOrder.forEach((entry, i) => {
      if (entry.trim() === '')
        add('field-invalid', ['spec', 'options', 'boot-order', i], 'boot-order entries must not be empty')
      else if (seenBoot.has(entry))
        add('value-duplicate', ['spec', 'options', 'boot-order', i], `boot-order lists ${entry} twice`)
      seenBoot.add(entry)
    })
  }

  const ci = spec['cloud-init-data']
  if (ci) {
    const p = ['spec', 'cloud-init-data']
    const keys = ci['ssh-keys']
    if (keys && ci['ssh-key-refs'])
      add('ssh-keys-conflict', [...p, 'ssh-key-refs'], 'use either ssh-keys or ssh-key-refs, not both')
    if (keys && keys.includes('*') && keys.length > 1)
      add(
        'ssh-keys-conflict',
        [...p, 'ssh-keys'],
        'ssh-keys: ["*"] leaves keys to PVE and cannot be mixed with real keys',
      )
    keys?.forEach((k, i) => {
      if (k.trim() === '') add('field-invalid', [...p, 'ssh-keys', i], 'ssh-keys entries must not be empty')
    })
    ci['ssh-key-refs']?.forEach((ref, i) => {
      if (!checkRef(ref, 'cloud-init.ssh-keys.'))
        add(
          'ref-invalid',
          [...p, 'ssh-key-refs', i],
          `ssh-key-refs entries must look like cloud-init.ssh-keys.<name> (name: lowercase letters, digits, "-"), got ${JSON.stringify(ref)}`,
        )
    })
    const pw = ci['ci-password-ref']
    if (pw !== undefined && !checkRef(pw, 'cloud-init.passwords.')) {
      add(
        'ref-invalid',
        [...p, 'ci-password-ref'],
        `ci-password-ref must look like cloud-init.passwords.<name>, got ${JSON.stringify(pw)}`,
      )
    }
    const nics = new Map<number, number>()
    ci.ipconfigs?.forEach((ipc, i) => {
      const q = [...p, 'ipconfigs', i]
      if (ipc.ip !== undefined && ipc.ip !== '' && !checkCidr(ipc.ip))
        add(
          'ipconfig-invalid',
          [...q, 'ip'],
          `ip ${JSON.stringify(ipc.ip)} must be an address in CIDR form, e.g. 192.168.1.10/24 (DHCP is not modelled)`,
        )
      if (ipc.gateway !== undefined && ipc.gateway !== '') {
        if (!isIP(ipc.gateway))
          add('ipconfig-invalid', [...q, 'gateway'], `gateway ${JSON.stringify(ipc.gateway)} must be an IP address`)
        else if (unmetRequires(FORMAT_REQUIRES['pve-qm-ipconfig'], { gw: ipc.gateway, ip: ipc.ip || undefined }).length)
          add('ipconfig-invalid', [...q, 'gateway'], "a gateway requires ip (PVE's ipconfig: gw requires ip)")
      }
      const prev = nics.get(ipc.nic)
      if (prev !== undefined)
        add('slot-duplicate', [...q, 'nic'], `ipconfig for nic ${ipc.nic} is already declared by ipconfigs[${prev}]`)
      else nics.set(ipc.nic, i)
    })
  }
}

function checkRef(ref: string, prefix: string): boolean {
  return ref.startsWith(prefix) && REF_NAME.test(ref.slice(prefix.length))
}

/** PVE's key families of NICs and mount points: the key's form and its highest number */
const SLOT_FORMS = {
  net: { pattern: /^net(\d+)$/, max: 31 },
  mp: { pattern: /^mp(\d+)$/, max: 255 },
} as const

/** One entry's slot: a key of PVE's family `form`, unused by the entries in `seen` (slot -> the entry using it). */
function claimSlot(
  form: keyof typeof SLOT_FORMS,
  slot: string,
  path: PathKey[],
  seen: Map<string, string>,
  entry: string,
  add: Add,
): void {
  const { pattern, max } = SLOT_FORMS[form]
  const mm = pattern.exec(slot)
  if (!mm || Number(mm[1]) > max) {
    add('slot-invalid', path, `slot ${JSON.stringify(slot)} must be ${form}N (N 0-${max})`)
    return
  }
  const prev = seen.get(slot)
  if (prev !== undefined) add('slot-duplicate', path, `slot ${slot} is already used by ${prev}`)
  else seen.set(slot, entry)
}

/** A guest path of a mount point or bind mount: absolute. */
function checkMountPoint(value: string | undefined, path: PathKey[], add: Add): void {
  if (value !== undefined && !value.startsWith('/'))
    add('path-not-absolute', path, `mount-point ${JSON.stringify(value)} must be an absolute path`)
}

const SYSTEM_ROOTS = new Set([
  '/',
  '/bin',
  '/boot',
  '/dev',
  '/etc',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/proc',
  '/root',
  '/run',
  '/sbin',
  '/srv',
  '/sys',
  '/usr',
  '/var',
])
const HOSTNAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/

function finaliseContainer(m: ContainerManifest, add: Add): void {
  const { kind, spec } = m
  const name = m.metadata.name
  if (kind === 'TemplateCT' && spec.state !== 'stopped') {
    add('template-state', ['spec', 'state'], 'a TemplateCT is always stopped: remove state or write state: stopped')
  }
  spec.tags = dedupe(spec.tags)
  checkExtra('lxc', spec.extra, add)
  if (spec.clone !== undefined) {
    if (kind === 'TemplateCT') add('field-invalid', ['spec', 'clone'], 'clone is only supported for kind LXC')
    // a full clone copies the template's root filesystem and mount points; ProxOps' config is written after it
    if (spec.template !== undefined)
      add(
        'clone-with-template',
        ['spec', 'template'],
        'a clone-backed LXC is not created from a CTTemplate: remove spec.template (or remove clone)',
      )
    for (const key of ['mount-points', 'bind-mounts'] as const)
      if (spec[key].length > 0)
        add(
          'clone-with-disks',
          ['spec', key],
          `a clone-backed LXC takes its mount points from the TemplateCT: remove spec.${key} (or remove clone)`,
        )
  } else if (spec.template === undefined) {
    add(
      'field-required',
      ['spec', 'template'],
      'spec.template is required (the CTTemplate to create from), unless spec.clone names a TemplateCT',
    )
  }
  if (spec.ha) checkHa(kind, spec.ha, spec.state, spec.node, add)
  spec.dns = { ...(spec.dns ?? {}), hostname: spec.dns?.hostname ?? name }
  if (!HOSTNAME.test(spec.dns.hostname))
    add(
      'field-invalid',
      ['spec', 'dns', 'hostname'],
      `hostname ${JSON.stringify(spec.dns.hostname)} must be a DNS name`,
    )

  const nicSlots = new Map<string, string>()
  spec.networks.forEach((nic, i) => {
    const p = ['spec', 'networks', i]
    nic.slot = (nic.slot ?? `net${i}`).trim()
    claimSlot('net', nic.slot, [...p, 'slot'], nicSlots, `spec.networks[${i}]`, add)
    if (nic.ip !== undefined && nic.ip !== 'dhcp' && nic.ip !== 'manual' && !checkCidr(nic.ip)) {
      add(
        'field-invalid',
        [...p, 'ip'],
        `ip ${JSON.stringify(nic.ip)} must be CIDR (e.g. 192.168.1.10/24), dhcp or manual`,
      )
    }
    if (nic.gw !== undefined && !isIP(nic.gw))
      add('field-invalid', [...p, 'gw'], `gw ${JSON.stringify(nic.gw)} must be an IP address`)
  })

  const mpSlots = new Map<string, string>()
  spec['mount-points'].forEach((mp, i) => {
    const p = ['spec', 'mount-points', i]
    mp.slot = (mp.slot ?? `mp${i}`).trim()
    claimSlot('mp', mp.slot, [...p, 'slot'], mpSlots, `spec.mount-points[${i}]`, add)
    checkMountPoint(mp['mount-point'], [...p, 'mount-point'], add)
  })
  const offset = spec['mount-points'].length
  spec['bind-mounts'].forEach((bm, i) => {
    const p = ['spec', 'bind-mounts', i]
    bm.slot = (bm.slot ?? `mp${offset + i}`).trim()
    claimSlot('mp', bm.slot, [...p, 'slot'], mpSlots, `spec.bind-mounts[${i}]`, add)
    const host = bm['host-path']
    const trimmed = host.length > 1 ? host.replace(/\/+$/, '') || '/' : host
    if (!host.startsWith('/'))
      add('bind-mount-host-path', [...p, 'host-path'], `host-path ${JSON.stringify(host)} must be an absolute path`)
    else if (SYSTEM_ROOTS.has(trimmed) || /(^|\/)\.\.(\/|$)/.test(host)) {
      add(
        'bind-mount-host-path',
        [...p, 'host-path'],
        `host-path ${JSON.stringify(host)} is a system directory (or climbs with ..): bind a dedicated data directory instead`,
      )
    }
    checkMountPoint(bm['mount-point'], [...p, 'mount-point'], add)
  })
}
