/**
 * The normalised manifest model: what `parseManifest` and the repository loader hand to the planner.
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
import type { Kind } from '../kinds.js'
import type { DISRUPTION_POLICIES } from './parse.js'
import type { FirewallSpec } from './firewall.js'

export type { FirewallAlias, FirewallIpset, FirewallRule, FirewallSpec } from './firewall.js'
import type { BackupJobSpec } from '../backup/types.js'
export type { BackupJobSpec, BackupSelection, PruneBackupsKey } from '../backup/types.js'

export type PowerState = 'started' | 'stopped'

import type { HaSpec } from './ha.js'
import type { PoolSpec } from './pool.js'
export type { PoolSpec } from './pool.js'
export type { HaSpec, HaState } from './ha.js'
/**
 * The most disruptive side effect ProxOps may cause on a running guest while converging its config (the
 * config's `disruption`, the `proxops/disruption` annotation and the planner's policy: one list,
 * DISRUPTION_POLICIES). `allow` (= `stop`): reboot-class changes use the write, a graceful shutdown, then start.
 * `none`: reboot-class writes are sent and left pending in PVE, hotplug-class writes and mark-template of a
 * running guest are not made; both are reported. `hotplug` and `reboot` are the levels in between. Power changes
 * the manifest asks for (`state`) and prunes are not side effects: they are planned under every policy.
 */
export type DisruptionPolicy = (typeof DISRUPTION_POLICIES)[number]

export interface Metadata {
  /** identity within a kind and cluster (docs/repository.md#naming-rules) */
  name: string
  /** informational only */
  namespace?: string
  /** informational, free-form */
  labels: Record<string, string>
  /** free-form; `proxops/depends-on` and `proxops/disruption` are validated */
  annotations: Record<string, string>
}

interface Envelope<K extends Kind, S> {
  apiVersion: 'proxops/v1alpha1'
  kind: K
  metadata: Metadata
  spec: S
}

// ---------------------------------------------------------------- VM / TemplateVM

export interface VmCpu {
  /** PVE `cpu` (e.g. `host`, `x86-64-v2-AES`) */
  type: string
  /** PVE `cores`, > 0 */
  cores: number
  /** parsed, never sent (reference behaviour) */
  flags?: string[]
}

export interface VmDisk {
  /** pool token before `:` */
  storage: string
  /** bytes (whole MiB); undefined for image-seeded disks (size comes from the image) */
  size?: number
  /** name of a DiskImage in the same cluster: seeds the disk through `import-from` */
  image?: string
  /** slot key; default `scsi<i>` (i = list index) */
  interface: string
  /** VM-wide `scsihw`; the first disk declaring one wins */
  controller?: string
  /** `,iothread=1`; default false */
  iothread: boolean
  /** `ignore` | `on`; undefined = not owned */
  discard?: 'ignore' | 'on'
  /** tri-state `,ssd=1|0`; only on scsi/sata/ide slots */
  ssd?: boolean
  /** undefined = not owned */
  aio?: 'native' | 'threads' | 'io_uring'
}

export interface VmNic {
  /** head token; default `virtio` */
  model: string
  bridge: string
  /** lower-cased; undefined = PVE assigns (never drift) */
  mac?: string
  /** 1-4094, sent as `tag=` */
  vlan?: number
  /** MBit/s, sent as `rate=` */
  'rate-limit'?: number
  /** default false; only `true` is owned */
  firewall: boolean
  /** `net<N>`; default `net<i>` */
  slot: string
}

export interface PciDevice {
  /** `hostpci<N>`, N 0-999 */
  slot: string
  /** lower-cased BDF, e.g. `0000:17:00` or `01:00.0` */
  device: string
  /** tri-state */
  pcie?: boolean
}

export interface VmHardware {
  machine?: 'i440fx' | 'q35'
  bios?: 'seabios' | 'ovmf'
  /** PVE `vga` */
  display?: string
  sockets?: number
  numa?: boolean
  serial0?: string
  /** absent = IDE CD slot not owned; `iso: none` = detach */
  cdrom?: { iso: string; media: 'cdrom' | 'disk' }
  'efi-disk'?: {
    storage: string
    /** bytes; default 4 MiB */
    size: number
    template?: 'byos' | '2m' | '4m' | '8m'
    'secure-boot'?: 'enabled' | 'disabled'
  }
  'cloud-init'?: {
    /** default false; when true claims `ide2` */
    enabled: boolean
    /** required when enabled */
    storage?: string
    /** sent verbatim after `size=`; default `4M` */
    size: string
  }
  tpm?: { version: 'v1.2' | 'v2.0' }
  /** sorted by slot number */
  'pci-devices': PciDevice[]
}

/** Only truthy values are owned. */
export interface VmOptions {
  onboot?: boolean
  startup?: string
  protection?: boolean
  agent?: boolean
  acpi?: boolean
  tablet?: boolean
  hotplug?: string[]
  'boot-order'?: string[]
  'nested-virt'?: boolean
  hidden?: boolean
}

export interface IpConfig {
  /** NIC index, default 0 */
  nic: number
  /** CIDR; undefined = not owned */
  ip?: string
  gateway?: string
}

export interface CloudInitData {
  'ci-user'?: string
  /** inline public keys; `["*"]` = PVE owns the value */
  'ssh-keys'?: string[]
  /** `cloud-init.ssh-keys.<name>` references into the cluster SOPS document */
  'ssh-key-refs'?: string[]
  /** `cloud-init.passwords.<name>` */
  'ci-password-ref'?: string
  nameservers?: string[]
  'search-domains'?: string[]
  ipconfigs?: IpConfig[]
}

export interface VmSpec {
  node: string
  vmid: number
  /** default `started` for VM, `stopped` for TemplateVM (which cannot be `started`) */
  state: PowerState
  /** MiB */
  memory: number
  cpu: VmCpu
  /** empty when `clone` is set */
  disks: VmDisk[]
  networks: VmNic[]
  hardware?: VmHardware
  options?: VmOptions
  'cloud-init-data'?: CloudInitData
  /** PVE `name`; default `metadata.name` */
  'pve-name': string
  'pve-description'?: string
  /** as declared, de-duplicated, without the ownership tag */
  tags: string[]
  /** PVE key -> value, sent verbatim at create */
  extra: Record<string, string>
  /** name of a TemplateVM on the same node to full-clone from */
  clone?: string
  /** the guest firewall; absent = not owned (manifest/firewall.ts) */
  firewall?: FirewallSpec
  /** an HA resource (VM only, not TemplateVM) */
  ha?: HaSpec
  /** PVE pool id the guest is a member of; absent = membership not owned */
  pool?: string
}

export type VmManifest = Envelope<'VM', VmSpec>
export type TemplateVmManifest = Envelope<'TemplateVM', VmSpec & { state: 'stopped' }>

// ---------------------------------------------------------------- LXC / TemplateCT

export interface LxcNic {
  bridge: string
  /** guest interface name; undefined = the slot name is sent and never compared */
  iface?: string
  /** PVE default `veth`; not compared */
  type?: string
  /** VLAN tag 0-4094 (0 = none) */
  tag?: number
  /** lower-cased */
  hwaddr?: string
  'rate-limit'?: number
  firewall: boolean
  /** CIDR, `dhcp` or `manual` */
  ip?: string
  gw?: string
  /** `net<N>`; default `net<i>` */
  slot: string
}

export interface MountPointOptions {
  'read-only'?: boolean
  backup?: boolean
  acl?: boolean
  quota?: boolean
  shared?: boolean
  'mount-options'?: string
}

export interface LxcMountPoint {
  storage: string
  /** bytes (whole MiB) */
  size: number
  /** absolute guest path; undefined = PVE default `/mnt/mp<i>` */
  'mount-point'?: string
  /** `mp<N>`; default `mp<i>` */
  slot: string
  options?: MountPointOptions
}

export interface LxcBindMount {
  'host-path': string
  'mount-point': string
  /** `mp<N>`; default `mp<len(mount-points)+i>` */
  slot: string
  'read-only'?: boolean
}

/** Tri-state: undefined = PVE decides. */
export interface LxcOptions {
  unprivileged?: boolean
  protection?: boolean
  onboot?: boolean
  console?: boolean
  nesting?: boolean
  keyctl?: boolean
  fuse?: boolean
  startup?: string
  /** accepted, never sent */
  ttys?: number
}

export interface LxcSpec {
  node: string
  vmid: number
  /** name of the CTTemplate the container is created from; undefined for a clone */
  template?: string
  state: PowerState
  /** MiB */
  memory: number
  /** MiB; undefined = not sent */
  swap?: number
  cpu: { cores: number; units?: number }
  /** size in bytes (whole MiB) */
  root: { storage: string; size: number }
  'mount-points': LxcMountPoint[]
  'bind-mounts': LxcBindMount[]
  networks: LxcNic[]
  /** `hostname` defaults to `metadata.name` */
  dns: { hostname: string; nameservers?: string[]; domain?: string }
  arch?: 'amd64' | 'i686' | 'arm64'
  options?: LxcOptions
  'pve-description'?: string
  tags: string[]
  extra: Record<string, string>
  /** LXC only (rejected on a TemplateCT): name of a TemplateCT on the same node to full-clone from */
  clone?: string
  /** the guest firewall; absent = not owned (manifest/firewall.ts) */
  firewall?: FirewallSpec
  /** an HA resource (LXC only, not TemplateCT) */
  ha?: HaSpec
  /** PVE pool id the guest is a member of; absent = membership not owned */
  pool?: string
}

export type LxcManifest = Envelope<'LXC', LxcSpec>
export type TemplateCtManifest = Envelope<'TemplateCT', LxcSpec & { state: 'stopped' }>

// ---------------------------------------------------------------- artifacts

export type ChecksumAlgorithm = 'sha256' | 'sha1' | 'sha512' | 'md5'

export interface ArtifactSpec {
  /** every node the file must exist on; legacy `node` promoted; de-duplicated, order kept */
  nodes: string[]
  storage: string
  filename: string
  /** http(s) URL the PVE node downloads */
  url: string
  checksum?: { algorithm: ChecksumAlgorithm; value: string }
}

export type IsoManifest = Envelope<'ISO', ArtifactSpec>
export type CtTemplateManifest = Envelope<'CTTemplate', ArtifactSpec>
export type DiskImageManifest = Envelope<'DiskImage', ArtifactSpec>

// ---------------------------------------------------------------- unions

export type GuestManifest = VmManifest | TemplateVmManifest | LxcManifest | TemplateCtManifest
export type QemuManifest = VmManifest | TemplateVmManifest
export type ContainerManifest = LxcManifest | TemplateCtManifest
export type ArtifactManifest = IsoManifest | CtTemplateManifest | DiskImageManifest
export type BackupJobManifest = Envelope<'BackupJob', BackupJobSpec>
export type PoolManifest = Envelope<'Pool', PoolSpec>
export type Manifest = GuestManifest | ArtifactManifest | BackupJobManifest | PoolManifest

export type ManifestOfKind<K extends Kind> = Extract<Manifest, { kind: K }>
