/**
 * The normalised manifest model: what `parseManifest` and the repository loader hand to the planner. Every type
 * here is the output of a valibot schema (manifest/schemas.ts, whose field descriptions are the documentation:
 * docs/schema-reference.md), with only the fields parse.ts's finalise step completes written out, by name.
 *
 * Conventions:
 * - Keys are spelled exactly as users write them in YAML (kebab-case), so `spec['cloud-init-data']`.
 * - `kind` is canonical (`TVM` -> `TemplateVM`), whatever spelling the file used.
 * - Defaults are applied where the reference defines one (state, disk interface, NIC slot and model, mount
 *   point slots, `pve-name`, `dns.hostname`, EFI disk size, TPM version, cloud-init drive size, CD media).
 * - Optional fields that are `undefined` are **not owned**: ProxOps never writes them and never reports drift.
 *   Tri-state booleans are `true | false | undefined`.
 * - Memory and swap are **MiB** (numbers). Disk, root filesystem, mount point and EFI disk sizes are **bytes**
 *   (numbers, always a whole number of MiB); `formatGiB(bytes)` gives PVE's `<storage>:<GiB>` token.
 */
import type { Completed, Defaulted, Out } from './infer.js'
import type { Kind } from '../kinds.js'
import type { DISRUPTION_POLICIES } from './parse.js'
import type {
  bindMountSchema,
  cloudInitDataSchema,
  ipConfigSchema,
  isoSpecSchema,
  lxcNicSchema,
  lxcOptionsSchema,
  lxcSpecSchema,
  metadataSchema,
  mountPointSchema,
  pciDeviceSchema,
  poolSpecSchema,
  vmDiskSchema,
  vmHardwareSchema,
  vmNicSchema,
  vmOptionsSchema,
  vmSpecSchema,
} from './schemas.js'
import type { haSchema } from './ha.js'

export type { FirewallAlias, FirewallIpset, FirewallRule, FirewallSpec } from './firewall.js'
export type { BackupJobSpec, BackupSelection, PruneBackupsKey } from '../backup/types.js'
import type { BackupJobSpec } from '../backup/types.js'
export type { HaState } from './ha.js'

export type PowerState = 'started' | 'stopped'

/**
 * The most disruptive side effect ProxOps may cause on a running guest while converging its config (the
 * config's `disruption`, the `proxops/disruption` annotation and the planner's policy: one list,
 * DISRUPTION_POLICIES). `allow` (= `stop`): reboot-class changes use the write, a graceful shutdown, then start.
 * `none`: reboot-class writes are sent and left pending in PVE, hotplug-class writes and mark-template of a
 * running guest are not made; both are reported. `hotplug` and `reboot` are the levels in between. Power changes
 * the manifest asks for (`state`) and prunes are not side effects: they are planned under every policy.
 */
export type DisruptionPolicy = (typeof DISRUPTION_POLICIES)[number]

/** name (identity within a kind and cluster), informational namespace and labels, annotations */
export type Metadata = Out<typeof metadataSchema>

interface Envelope<K extends Kind, S> {
  apiVersion: 'proxops/v1alpha1'
  kind: K
  metadata: Metadata
  spec: S
}

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

// ---------------------------------------------------------------- artifacts

type ArtifactSpecOut = Out<typeof isoSpecSchema>
export type ChecksumAlgorithm = NonNullable<NonNullable<ArtifactSpecOut['checksum']>['algorithm']>

/** the three artifact kinds share one spec */
export type ArtifactSpec = Completed<
  Omit<ArtifactSpecOut, 'node'>,
  {
    /** every node the file must exist on; the legacy `node` promoted; de-duplicated, order kept */
    nodes: string[]
    /** both or neither (the value lower-cased) */
    checksum?: { algorithm: ChecksumAlgorithm; value: string }
  }
>

export type IsoManifest = Envelope<'ISO', ArtifactSpec>
export type CtTemplateManifest = Envelope<'CTTemplate', ArtifactSpec>
export type DiskImageManifest = Envelope<'DiskImage', ArtifactSpec>

// ---------------------------------------------------------------- HA, Pool

/** `spec.ha` of a VM or LXC (manifest/ha.ts) */
export type HaSpec = Out<typeof haSchema>
/** `id` defaults to `metadata.name` */
export type PoolSpec = Defaulted<Out<typeof poolSpecSchema>, 'id'>

// ---------------------------------------------------------------- unions

export type GuestManifest = VmManifest | TemplateVmManifest | LxcManifest | TemplateCtManifest
export type QemuManifest = VmManifest | TemplateVmManifest
export type ContainerManifest = LxcManifest | TemplateCtManifest
export type ArtifactManifest = IsoManifest | CtTemplateManifest | DiskImageManifest
export type BackupJobManifest = Envelope<'BackupJob', BackupJobSpec>
export type PoolManifest = Envelope<'Pool', PoolSpec>
export type Manifest = GuestManifest | ArtifactManifest | BackupJobManifest | PoolManifest

export type ManifestOfKind<K extends Kind> = Extract<Manifest, { kind: K }>
