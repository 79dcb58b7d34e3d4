/**
 * Desired VM / TemplateVM -> the owned qemu config keys, each with its create form and its reconcile rule
 * (grow-only resize, live-form rewrites, tags as PVE stores them).
 */
import type { QemuManifest, VmHardware } from '@proxops/schema'
import type { SecretLookup } from '../../desired.js'
import { anomaly, NONE, parsePS, rewrite, withTokens, SENSITIVE, write, type Owned } from './fields.js'
import { cloudInitDataOwned } from './cloud-init.js'
import { bootOwned, cdAndCloudInitOwned } from './drives.js'
import { qemuNicOwned } from './nics.js'
import { tableFields } from './table.js'
import { changedTokens, createTokens } from './tokens.js'
import { firmwareVolumesOwned, PCI_TOKENS, QEMU_DRIVE_KEY, qemuDisksOwned } from './volumes.js'

export interface GuestBuildContext {
  /** volume id of an artifact by kind and name for a node (`local:iso/x.iso`), undefined when not declared */
  volid(kind: 'ISO' | 'CTTemplate' | 'DiskImage', name: string): string | undefined
  secrets?: SecretLookup
  /** the VM is clone-backed: the template's layout is expected, its cloud-init drive kept */
  cloned: boolean
  /** the tags field of a tag list (with the ownership tag); one per distinct list, as most guests repeat a few */
  tags(tags: readonly string[]): Owned
}

export interface GuestFields {
  owned: Owned[]
  /** keys sent on create only (ostemplate, extra): never compared */
  createOnly: Record<string, string | number>
  gaps: { field: string; note: string }[]
  /** slot keys ProxOps declares; live keys of the same families that are not here are live-only */
  declaredSlots: Set<string>
  /** desired invalid for creation (LXC keyctl/fuse) */
  createError?: string
  /** keys left to PVE on purpose (`ssh-keys: ["*"]`): never written and never deleted from a clone */
  leftToPve?: string[]
}

export function qemuFields(m: QemuManifest, ctx: GuestBuildContext): GuestFields {
  const s = m.spec
  const gaps: GuestFields['gaps'] = []
  const declaredSlots = new Set<string>()
  const owned = tableFields(
    'qemu',
    s,
    {
      devices: () => qemuDevices(s, ctx, gaps, declaredSlots),
      'boot-cloud-init': () => bootAndCloudInit(s, ctx, gaps),
      tags: () => [ctx.tags(s.tags)],
    },
    gaps,
  )

  const ci = s['cloud-init-data']
  const createOnly: Record<string, string> = { ...s.extra }
  if (Object.keys(s.extra).length > 0) gaps.push({ field: 'spec.extra', note: 'sent on create only; never compared' })
  const leftToPve = ci?.['ssh-keys']?.length === 1 && ci['ssh-keys'][0] === '*' ? ['sshkeys'] : []
  return { owned, createOnly, gaps, declaredSlots, ...(leftToPve.length > 0 ? { leftToPve } : {}) }
}

/** The devices family: the SCSI controller, disks, NICs, cloud-init and CD drives, EFI, TPM, PCI devices. */
function qemuDevices(
  s: QemuManifest['spec'],
  ctx: GuestBuildContext,
  gaps: GuestFields['gaps'],
  declaredSlots: Set<string>,
): Owned[] {
  const owned: Owned[] = []
  const hw: Partial<VmHardware> = s.hardware ?? {}
  for (const disk of qemuDisksOwned(s.disks, (image) => ctx.volid('DiskImage', image))) {
    if (disk.key !== 'scsihw') declaredSlots.add(disk.key)
    owned.push(disk)
  }
  s.networks.forEach((n, i) => {
    owned.push(qemuNicOwned(n, i))
    declaredSlots.add(n.slot)
  })

  const ciDrive = hw['cloud-init']?.enabled === true ? hw['cloud-init'] : undefined
  for (const drive of cdAndCloudInitOwned(hw, ctx)) {
    declaredSlots.add(drive.key)
    owned.push(drive)
  }

  for (const volume of firmwareVolumesOwned(hw, s.disks, ciDrive?.storage, gaps)) {
    declaredSlots.add(volume.key)
    owned.push(volume)
  }
  if (hw.tpm !== undefined) declaredSlots.add('tpmstate0')

  ;(hw['pci-devices'] ?? []).forEach((pci, i) => {
    declaredSlots.add(pci.slot)
    const device = pci.device.trim().toLowerCase()
    const create = withTokens(device, createTokens(PCI_TOKENS, pci, pci.slot))
    const norm = (d: string) => d.toLowerCase().replace(/^0000:/, '')
    owned.push({
      key: pci.slot,
      field: `spec.hardware.pci-devices[${i}]`,
      create,
      compare: (live) => {
        if (live === undefined) return [write(create, create, true)]
        const p = parsePS(live, 'host')
        if (!p) return [anomaly('invalid-live', `${pci.slot}: cannot read PVE's value`)]
        const changes: Record<string, string | undefined> = changedTokens(PCI_TOKENS, pci, p)
        if (norm(p.host ?? '') !== norm(device)) changes.host = device
        // extra PVE tokens (x-vga, rombar, mdev) are kept
        return Object.keys(changes).length > 0 ? [write(rewrite(p, changes, 'host'))] : NONE
      },
    })
  })
  return owned
}

/** The boot order and the cloud-init secrets and IP configs (a key is owned only when its value is non-empty). */
function bootAndCloudInit(s: QemuManifest['spec'], ctx: GuestBuildContext, gaps: GuestFields['gaps']): Owned[] {
  const owned: Owned[] = []
  const opt = s.options ?? {}
  if (opt['boot-order'] !== undefined && opt['boot-order'].length > 0) owned.push(bootOwned(opt['boot-order']))
  if (opt['nested-virt'])
    gaps.push({
      field: 'spec.options.nested-virt',
      note: 'PVE has no nestedvirt key: use cpu type host (or a +vmx/+svm flag); not sent',
    })

  const ci = s['cloud-init-data']
  if (ci !== undefined) owned.push(...cloudInitDataOwned(ci, ctx, gaps))
  return owned
}

/** Live slot keys of the families ProxOps manages (disks, NICs, PCI devices). */
export function qemuSlotFamily(key: string): 'disk' | 'nic' | 'pci' | undefined {
  if (QEMU_DRIVE_KEY.test(key)) return 'disk'
  if (/^net\d+$/.test(key)) return 'nic'
  if (/^hostpci\d+$/.test(key)) return 'pci'
  return undefined
}

export { SENSITIVE }
