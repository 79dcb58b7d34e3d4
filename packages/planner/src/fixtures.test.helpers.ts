/**
 * Test fixtures for plan(): manifest and inventory builders. A test that applies a plan runs it on the
 * simulator in this process (test-support/sim.ts), the one model of PVE the tests use.
 * Named `*.test.helpers.ts`: not a test file, not published.
 */
import { readTags } from '@proxops/pve-client/wire'
import type {
  ArtifactManifest,
  BackupJobManifest,
  ContainerManifest,
  Manifest,
  PoolManifest,
  StorageManifest,
  QemuManifest,
  VmHardware,
  VmSpec,
} from '@proxops/schema'
import type { DesiredState } from './desired.js'
import { manifest } from './testing/manifest.js'
import type { LiveAccess, LiveGuest, LiveInventory } from './inventory.js'
import type { KindContext, PlannedGuest } from './kit/kind.js'
import { DEFAULT_POLICY, type Policy } from './plan-types.js'

export const GiB = 1024 ** 3
export const MiB = 1024 ** 2

/** spec overrides (in the parsed form); `hardware` is filled with the parser's defaults (no PCI devices) */
export type VmOverrides = Partial<Omit<VmSpec, 'hardware'>> & { hardware?: Partial<VmHardware> }

/**
 * A VM (or TemplateVM) as the schema's parser reads a plain document (2 GiB, 2 cores, one 32 GiB disk, one NIC
 * on vmbr0), so every default is the parser's; `over` then replaces spec fields with parsed values.
 */
export function vm(
  name: string,
  vmid: number,
  over: VmOverrides = {},
  kind: QemuManifest['kind'] = 'VM',
): QemuManifest {
  const base = manifest({
    kind,
    metadata: { name },
    spec: {
      node: 'pve1',
      vmid,
      memory: '2GiB',
      cpu: { type: 'host', cores: 2 },
      disks: [{ storage: 'local-lvm', size: '32GiB' }],
      networks: [{ bridge: 'vmbr0' }],
    },
  }) as QemuManifest
  const { hardware, ...rest } = over
  return {
    ...base,
    spec: { ...base.spec, ...rest, ...(hardware ? { hardware: { 'pci-devices': [], ...hardware } } : {}) },
  } as QemuManifest
}

/** An LXC (or TemplateCT) from template debian-12 as the parser reads it (512 MiB, 1 core, 8 GiB root); `over` replaces spec fields. */
export function lxc(
  name: string,
  vmid: number,
  over: Partial<ContainerManifest['spec']> = {},
  kind: ContainerManifest['kind'] = 'LXC',
): ContainerManifest {
  const base = manifest({
    kind,
    metadata: { name },
    spec: {
      node: 'pve1',
      vmid,
      template: 'debian-12',
      memory: '512MiB',
      cpu: { cores: 1 },
      root: { storage: 'local-lvm', size: '8GiB' },
      networks: [{ bridge: 'vmbr0' }],
    },
  }) as ContainerManifest
  return { ...base, spec: { ...base.spec, ...over } } as ContainerManifest
}

export function artifact(
  kind: ArtifactManifest['kind'],
  name: string,
  filename: string,
  nodes: string[] = ['pve1'],
  storage = 'local',
): ArtifactManifest {
  return manifest({
    kind,
    metadata: { name },
    spec: { nodes, storage, filename, url: `https://example.org/${filename}` },
  }) as ArtifactManifest
}

/**
 * A BackupJob as the parser reads its document (daily to `local`, vmid 100; the id is the name): `spec` is the
 * document's spec, written as in YAML.
 */
export function backupJob(name: string, spec: Readonly<Record<string, unknown>> = {}): BackupJobManifest {
  return manifest({
    kind: 'BackupJob',
    metadata: { name },
    spec: { schedule: 'daily', storage: 'local', selection: { vmids: [100] }, ...spec },
  }) as BackupJobManifest
}

/**
 * The guests (VMs named `g<vmid>`) and pools the jobs' selections name, declared: a job may select only what this
 * entry manages (kinds/backup-job/selection.ts).
 */
export function selectedBy(manifests: readonly Manifest[]): Manifest[] {
  const jobs = manifests.filter((m): m is BackupJobManifest => m.kind === 'BackupJob')
  const vmids = new Set(jobs.flatMap((m) => ('vmids' in m.spec.selection ? m.spec.selection.vmids : [])))
  const pools = new Set(jobs.flatMap((m) => ('pool' in m.spec.selection ? [m.spec.selection.pool] : [])))
  return [...[...vmids].map((v) => vm(`g${v}`, v)), ...[...pools].map((id) => pool(id))]
}

/** A Pool as the parser reads its document (the id is the name); `spec` is the document's spec. */
export function pool(name: string, spec: Readonly<Record<string, unknown>> = {}): PoolManifest {
  return manifest({ kind: 'Pool', metadata: { name }, spec }) as PoolManifest
}

export function storage(
  name: string,
  spec: Readonly<Record<string, unknown>> = { type: 'dir', path: `/srv/${name}` },
): StorageManifest {
  return manifest({ kind: 'Storage', metadata: { name }, spec }) as StorageManifest
}

export function desired(...manifests: Manifest[]): DesiredState {
  return { cluster: 'homelab', manifests }
}

/** A cluster on which every read succeeded and found nothing: the base every hand-built inventory starts from. */
export function emptyInventory(over: Partial<LiveInventory> = {}): LiveInventory {
  return {
    cluster: 'homelab',
    pveVersion: '9.1',
    nodes: [],
    guests: [],
    unknownGuests: [],
    storages: [],
    volumes: [],
    unreadableStorages: [],
    firewalls: [],
    ha: { known: { form: 'rules', resources: [], preferences: [] } },
    backupJobs: { known: [] },
    heldVmids: [],
    pools: { known: [] },
    access: { known: emptyAccess() },
    sdn: { known: { zones: [], vnets: [], controllers: [], subnets: [] } },
    ...over,
  }
}

/** user.cfg of a fresh install: root@pam, the built-in roles, the pam and pve realms (kinds/access) */
export function emptyAccess(): LiveAccess {
  return {
    users: [{ userid: 'root@pam', enable: true, expire: 0, email: 'root@localhost', groups: [], tokens: [] }],
    groups: [],
    roles: [
      { roleid: 'Administrator', privs: [...ADMIN_PRIVS].sort(), special: true },
      { roleid: 'NoAccess', privs: [], special: true },
      {
        roleid: 'PVEAuditor',
        privs: ['Datastore.Audit', 'Pool.Audit', 'SDN.Audit', 'Sys.Audit', 'VM.Audit'],
        special: true,
      },
    ],
    acl: [],
    realms: [
      { realm: 'pam', type: 'pam' },
      { realm: 'pve', type: 'pve' },
    ],
  }
}

/** a few of PVE 9's privileges (the Administrator role holds every one: what diff checks role privileges against) */
const ADMIN_PRIVS = [
  'Datastore.Allocate',
  'Datastore.AllocateSpace',
  'Datastore.Audit',
  'Group.Allocate',
  'Permissions.Modify',
  'Pool.Allocate',
  'Pool.Audit',
  'Realm.AllocateUser',
  'SDN.Audit',
  'Sys.Audit',
  'Sys.Modify',
  'User.Modify',
  'VM.Allocate',
  'VM.Audit',
  'VM.Clone',
  'VM.Config.Disk',
  'VM.PowerMgmt',
]

/** an access manifest of `kind` (Role, Group, User, Token, ACL) */
export function accessManifest(
  kind: 'Role' | 'Group' | 'User' | 'Token' | 'ACL',
  name: string,
  spec: Readonly<Record<string, unknown>>,
): Manifest {
  return manifest({ kind, metadata: { name }, spec })
}

export function inventory(guests: LiveGuest[] = [], over: Partial<LiveInventory> = {}): LiveInventory {
  return emptyInventory({
    nodes: [
      { node: 'pve1', online: true },
      { node: 'pve2', online: true },
      { node: 'pve3', online: true },
    ],
    guests: [...guests].sort((a, b) => a.vmid - b.vmid),
    ...over,
  })
}

export function guest(vmid: number, config: Record<string, string>, over: Partial<LiveGuest> = {}): LiveGuest {
  return {
    type: 'qemu',
    vmid,
    node: 'pve1',
    name: config.name ?? config.hostname,
    template: config.template === '1',
    status: 'stopped',
    tags: readTags(config.tags),
    digest: `d${vmid}`,
    config,
    pending: {},
    pendingDeletes: [],
    ...over,
  }
}

export const policy = (over: Partial<Policy> = {}): Policy => ({
  ...DEFAULT_POLICY,
  nodes: ['pve1', 'pve2', 'pve3'],
  ...over,
})

/** A secret lookup for tests, with values that must never reach a plan. */
export const SECRETS: Record<string, string> = {
  'cloud-init.ssh-keys.alice': 'ssh-ed25519 AAAACANARYKEYALICE alice@example',
  'cloud-init.passwords.default': 'CANARY-PASSWORD-7f3a',
}
export const lookup = (ref: string): string | undefined => SECRETS[ref]

/** A live qemu config matching `vm(name, vmid)` as PVE would store it. */
export function liveVm(
  vmid: number,
  name: string,
  over: Record<string, string> = {},
  g: Partial<LiveGuest> = {},
): LiveGuest {
  return guest(
    vmid,
    {
      name,
      memory: '2048',
      cpu: 'host',
      cores: '2',
      scsi0: `local-lvm:vm-${vmid}-disk-0,size=32G`,
      net0: 'virtio=BC:24:11:00:00:01,bridge=vmbr0',
      tags: 'proxops',
      ...over,
    },
    { status: 'running', ...g },
  )
}

/** A live lxc config matching `lxc(name, vmid)`. */
export function liveCt(
  vmid: number,
  name: string,
  over: Record<string, string> = {},
  g: Partial<LiveGuest> = {},
): LiveGuest {
  return guest(
    vmid,
    {
      hostname: name,
      memory: '512',
      cores: '1',
      rootfs: `local-lvm:vm-${vmid}-disk-0,size=8G`,
      net0: 'name=eth0,bridge=vmbr0,hwaddr=BC:24:11:00:00:02,type=veth',
      tags: 'proxops',
      ...over,
    },
    { type: 'lxc', status: 'running', ...g },
  )
}

/** An untagged or tagged orphan qemu guest. */
export const orphan = (vmid: number, tags = 'proxops', g: Partial<LiveGuest> = {}): LiveGuest =>
  guest(vmid, { name: `orphan-${vmid}`, memory: '512', ...(tags === '' ? {} : { tags }) }, g)

/** The context a kind plans in (kit/kind.ts), for testing one kind alone; `guests` as the guest kind planned them. */
export function kindContext(
  d: DesiredState,
  live: LiveInventory,
  p: Policy,
  guests: readonly PlannedGuest[] = [],
): KindContext {
  const online = new Map(live.nodes.map((n) => [n.node, n.online]))
  return {
    desired: d,
    live,
    policy: p,
    byKey: new Map(d.manifests.map((m) => [`${m.kind}/${m.metadata.name}`, m])),
    levelOf: () => 0,
    allowedNode: (n) => p.nodes.length === 0 || p.nodes.includes(n),
    nodeDown: (n) => online.get(n) !== true,
    guests,
    foreignGuests: new Map(),
    actionsOf: () => [],
  }
}
