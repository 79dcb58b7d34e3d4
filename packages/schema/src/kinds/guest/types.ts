/**
 * The normalised guest manifests (VM, TemplateVM, LXC, TemplateCT): the schemas' output (schema.ts), with only
 * the fields finalise.ts completes written out, by name. Conventions: manifest/types.ts.
 */
import type { Envelope } from '../contract.js'
import type { Completed, Defaulted, Out } from '../../manifest/infer.js'
import type {
  bindMountSchema,
  cloudInitDataSchema,
  ipConfigSchema,
  lxcNicSchema,
  lxcOptionsSchema,
  lxcSpecSchema,
  mountPointSchema,
  pciDeviceSchema,
  vmDiskSchema,
  vmHardwareSchema,
  vmNicSchema,
  vmOptionsSchema,
  vmSpecSchema,
} from './schema.js'

export type { FirewallAlias, FirewallIpset, FirewallRule, FirewallSpec } from './firewall.js'
export type { HaSpec, HaState } from './ha.js'

export type PowerState = 'started' | 'stopped'

// ---------------------------------------------------------------- VM / TemplateVM

type VmSpecOut = Out<typeof vmSpecSchema>
export type VmCpu = VmSpecOut['cpu']
/** `interface` defaults to `scsi<i>` (i = list index) */
export type VmDisk = Defaulted<Out<typeof vmDiskSchema>, 'interface'>
/** `slot` defaults to `net<i>` */
export type VmNic = Defaulted<Out<typeof vmNicSchema>, 'slot'>
export type PciDevice = Out<typeof pciDeviceSchema>
export type VmHardware = Out<typeof vmHardwareSchema>
/** only truthy values are owned */
export type VmOptions = Out<typeof vmOptionsSchema>
export type IpConfig = Out<typeof ipConfigSchema>
export type CloudInitData = Out<typeof cloudInitDataSchema>

export type VmSpec = Completed<
  VmSpecOut,
  {
    /** empty when `clone` is set */
    disks: VmDisk[]
    networks: VmNic[]
    /** PVE `name`; default `metadata.name` */
    'pve-name': string
  }
>

export type VmManifest = Envelope<'VM', VmSpec>
export type TemplateVmManifest = Envelope<'TemplateVM', VmSpec & { state: 'stopped' }>

// ---------------------------------------------------------------- LXC / TemplateCT

type LxcSpecOut = Out<typeof lxcSpecSchema>
/** `slot` defaults to `net<i>` */
export type LxcNic = Defaulted<Out<typeof lxcNicSchema>, 'slot'>
/** `slot` defaults to `mp<i>` */
export type LxcMountPoint = Defaulted<Out<typeof mountPointSchema>, 'slot'>
export type MountPointOptions = NonNullable<LxcMountPoint['options']>
/** `slot` defaults to `mp<len(mount-points)+i>` */
export type LxcBindMount = Defaulted<Out<typeof bindMountSchema>, 'slot'>
/** tri-state: undefined = PVE decides */
export type LxcOptions = Out<typeof lxcOptionsSchema>

export type LxcSpec = Completed<
  LxcSpecOut,
  {
    'mount-points': LxcMountPoint[]
    'bind-mounts': LxcBindMount[]
    networks: LxcNic[]
    /** `hostname` defaults to `metadata.name` */
    dns: Defaulted<NonNullable<LxcSpecOut['dns']>, 'hostname'>
  }
>

export type LxcManifest = Envelope<'LXC', LxcSpec>
export type TemplateCtManifest = Envelope<'TemplateCT', LxcSpec & { state: 'stopped' }>

export type QemuManifest = VmManifest | TemplateVmManifest
export type ContainerManifest = LxcManifest | TemplateCtManifest
export type GuestManifest = QemuManifest | ContainerManifest
