/**
 * The desired state plan() reads: the normalised manifests of one cluster, as @proxops/schema's loader hands
 * them over (kebab-case keys, defaults applied, sizes in bytes, memory in MiB, `undefined` = not owned).
 * The interfaces below are the subset of the schema's manifest model the planner reads, declared here
 * structurally so that a schema `Manifest[]` is accepted as is and the planner never depends on the
 * loader's internals.
 */

import type { BackupJobManifest } from './backup/types.js'

export type PowerState = 'started' | 'stopped'

export interface DesiredMetadata {
  name: string
  annotations?: Readonly<Record<string, string>>
}

export interface VmDisk {
  storage: string
  /** bytes; undefined for image-seeded disks */
  size?: number
  /** DiskImage name (seeds the disk through import-from) */
  image?: string
  interface: string
  controller?: string
  iothread: boolean
  discard?: 'ignore' | 'on'
  ssd?: boolean
  aio?: 'native' | 'threads' | 'io_uring'
}

export interface VmNic {
  model: string
  bridge: string
  mac?: string
  vlan?: number
  'rate-limit'?: number
  firewall: boolean
  slot: string
}

export interface VmHardware {
  machine?: 'i440fx' | 'q35'
  bios?: 'seabios' | 'ovmf'
  display?: string
  sockets?: number
  numa?: boolean
  serial0?: string
  cdrom?: { iso: string; media: 'cdrom' | 'disk' }
  'efi-disk'?: {
    storage: string
    size: number
    template?: 'byos' | '2m' | '4m' | '8m'
    'secure-boot'?: 'enabled' | 'disabled'
  }
  'cloud-init'?: { enabled: boolean; storage?: string; size: string }
  tpm?: { version: 'v1.2' | 'v2.0' }
  'pci-devices'?: readonly { slot: string; device: string; pcie?: boolean }[]
}

export interface VmOptions {
  onboot?: boolean
  startup?: string
  protection?: boolean
  agent?: boolean
  acpi?: boolean
  tablet?: boolean
  hotplug?: readonly string[]
  'boot-order'?: readonly string[]
  'nested-virt'?: boolean
  hidden?: boolean
}

export interface CloudInitData {
  'ci-user'?: string
  'ssh-keys'?: readonly string[]
  'ssh-key-refs'?: readonly string[]
  'ci-password-ref'?: string
  nameservers?: readonly string[]
  'search-domains'?: readonly string[]
  ipconfigs?: readonly { nic: number; ip?: string; gateway?: string }[]
}

export interface VmSpec {
  node: string
  vmid: number
  state: PowerState
  /** MiB */
  memory: number
  cpu: { type: string; cores: number; flags?: readonly string[] }
  disks: readonly VmDisk[]
  networks: readonly VmNic[]
  hardware?: VmHardware
  options?: VmOptions
  'cloud-init-data'?: CloudInitData
  'pve-name': string
  'pve-description'?: string
  tags: readonly string[]
  extra: Readonly<Record<string, string>>
  clone?: string
}

export interface LxcNic {
  bridge: string
  iface?: string
  type?: string
  tag?: number
  hwaddr?: string
  'rate-limit'?: number
  firewall: boolean
  ip?: string
  gw?: string
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

export interface LxcSpec {
  node: string
  vmid: number
  template: string
  state: PowerState
  memory: number
  swap?: number
  cpu: { cores: number }
  root: { storage: string; size: number }
  'mount-points': readonly {
    storage: string
    size: number
    'mount-point'?: string
    slot: string
    options?: MountPointOptions
  }[]
  'bind-mounts': readonly { 'host-path': string; 'mount-point': string; slot: string; 'read-only'?: boolean }[]
  networks: readonly LxcNic[]
  dns: { hostname: string; nameservers?: readonly string[]; domain?: string }
  arch?: 'amd64' | 'i686' | 'arm64'
  options?: {
    unprivileged?: boolean
    protection?: boolean
    onboot?: boolean
    console?: boolean
    nesting?: boolean
    keyctl?: boolean
    fuse?: boolean
    startup?: string
  }
  'pve-description'?: string
  tags: readonly string[]
  extra: Readonly<Record<string, string>>
}

export interface ArtifactSpec {
  nodes: readonly string[]
  storage: string
  filename: string
  url: string
  checksum?: { algorithm: 'sha256' | 'sha1' | 'sha512' | 'md5'; value: string }
}

export interface VmManifest {
  kind: 'VM' | 'TemplateVM'
  metadata: DesiredMetadata
  spec: VmSpec
}
export interface LxcManifest {
  kind: 'LXC' | 'TemplateCT'
  metadata: DesiredMetadata
  spec: LxcSpec
}
export interface ArtifactManifest {
  kind: 'ISO' | 'CTTemplate' | 'DiskImage'
  metadata: DesiredMetadata
  spec: ArtifactSpec
}
export type DesiredManifest = VmManifest | LxcManifest | ArtifactManifest | BackupJobManifest

export interface DesiredState {
  cluster: string
  /** the repository commit, recorded in the plan */
  commit?: string
  manifests: readonly DesiredManifest[]
}

/**
 * Decrypted SOPS values by document path (`cloud-init.ssh-keys.alice`). plan() uses them only to compare
 * `sshkeys` with PVE; the plan itself holds the references, never the values.
 */
export type SecretLookup = (ref: string) => string | undefined

export function isArtifact(m: DesiredManifest): m is ArtifactManifest {
  return m.kind === 'ISO' || m.kind === 'CTTemplate' || m.kind === 'DiskImage'
}
export function isBackupJob(m: DesiredManifest): m is BackupJobManifest {
  return m.kind === 'BackupJob'
}
export function isQemu(m: DesiredManifest): m is VmManifest {
  return m.kind === 'VM' || m.kind === 'TemplateVM'
}
