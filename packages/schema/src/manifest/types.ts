/**
 * The normalised manifest model: what `parseManifest` and the repository loader hand to the planner. Every type
 * here is the output of a kind's valibot schema (kinds/<kind>/schema.ts, whose field descriptions are the
 * documentation: docs/schema-reference.md), with only the fields the kind's finalise step completes written out,
 * by name (kinds/<kind>/types.ts).
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
import type { Kind, Manifest } from '../kinds/registry.js'
import type { DISRUPTION_POLICIES } from './annotations.js'

export type { Envelope, Metadata } from '../kinds/contract.js'
export type {
  ContainerManifest,
  FirewallSpec,
  GuestManifest,
  HaSpec,
  IpConfig,
  LxcManifest,
  LxcNic,
  LxcSpec,
  PowerState,
  QemuManifest,
  TemplateCtManifest,
  TemplateVmManifest,
  VmDisk,
  VmHardware,
  VmManifest,
  VmNic,
  VmSpec,
} from '../kinds/guest/types.js'
export type {
  ArtifactManifest,
  ArtifactSpec,
  CtTemplateManifest,
  DiskImageManifest,
  IsoManifest,
} from '../kinds/artifact/types.js'
export type { BackupJobManifest, BackupJobSpec } from '../kinds/backup-job/types.js'
export type { PoolManifest, PoolSpec } from '../kinds/pool/types.js'
export type {
  AccessManifest,
  AclManifest,
  AclSpec,
  GroupManifest,
  GroupSpec,
  RoleManifest,
  RoleSpec,
  TokenManifest,
  TokenSpec,
  UserManifest,
  UserSpec,
} from '../kinds/access/types.js'
export type { ZoneManifest, ZoneSpec } from '../kinds/zone/types.js'
export type { VNetManifest, VNetSpec } from '../kinds/vnet/types.js'
export type { SubnetManifest, SubnetSpec } from '../kinds/subnet/types.js'
export type { SdnControllerManifest, SdnControllerSpec } from '../kinds/sdn-controller/types.js'
export type { StorageManifest, StorageSpec } from '../kinds/storage/types.js'
export type { ClusterOptionsManifest, ClusterOptionsSpec } from '../kinds/cluster-options/types.js'

/**
 * The most disruptive side effect ProxOps may cause on a running guest while converging its config (the
 * config's `disruption`, the `proxops/disruption` annotation and the planner's policy: one list,
 * DISRUPTION_POLICIES). `allow` (= `stop`): reboot-class changes use the write, a graceful shutdown, then start.
 * `none`: reboot-class writes are sent and left pending in PVE, hotplug-class writes and mark-template of a
 * running guest are not made; both are reported. `hotplug` and `reboot` are the levels in between. Power changes
 * the manifest asks for (`state`) and prunes are not side effects: they are planned under every policy.
 */
export type DisruptionPolicy = (typeof DISRUPTION_POLICIES)[number]

/** the normalised manifest of any kind, derived from the registry (kinds/registry.ts) */
export type { Manifest }

export type ManifestOfKind<K extends Kind> = Extract<Manifest, { kind: K }>
