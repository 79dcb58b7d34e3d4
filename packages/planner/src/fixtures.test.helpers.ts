/**
 * Test fixtures for plan(): manifest and inventory builders, and a small model of how PVE stores what a
 * plan sends (volume ids, MACs, sizes, masks), so tests can "apply" a plan to an inventory without I/O.
 * Named `*.test.helpers.ts`: not a test file, not published.
 */
import { formatPropertyString, formatSize, parsePropertyString, readTags } from '@proxops/pve-client/wire'
import type {
  ArtifactManifest,
  BackupJobManifest,
  ContainerManifest,
  Manifest,
  PoolManifest,
  QemuManifest,
  VmHardware,
  VmSpec,
} from '@proxops/schema'
import type { DesiredState } from './desired.js'
import { manifest } from './testing/manifest.js'
import type { LiveGuest, LiveInventory } from './inventory.js'
import { readDrive } from './plan/drives.js'
import { parsePS } from './plan/fields.js'
import { qemuNic } from './plan/nics.js'
import { BIND_MOUNT, EFI_DISK, isBareForm, liveSizeBytes, poolOf, TPM_STATE, volumeKindOf } from './plan/volumes.js'
import { DEFAULT_POLICY, type Plan, type PlanParamValue, type Policy } from './plan-types.js'

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

/** A Pool as the parser reads its document (the id is the name); `spec` is the document's spec. */
export function pool(name: string, spec: Readonly<Record<string, unknown>> = {}): PoolManifest {
  return manifest({ kind: 'Pool', metadata: { name }, spec }) as PoolManifest
}

export function desired(...manifests: Manifest[]): DesiredState {
  return { cluster: 'homelab', manifests }
}

export function inventory(guests: LiveGuest[] = [], over: Partial<LiveInventory> = {}): LiveInventory {
  return {
    cluster: 'homelab',
    pveVersion: '9.1',
    nodes: [
      { node: 'pve1', online: true },
      { node: 'pve2', online: true },
      { node: 'pve3', online: true },
    ],
    guests: [...guests].sort((a, b) => a.vmid - b.vmid),
    unknownGuests: [],
    storages: [],
    volumes: [],
    unreadableStorages: [],
    ...over,
  }
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

// ------------------------------------------------------------------ a tiny model of PVE's normalisation

function resolve(v: PlanParamValue): string {
  if (typeof v !== 'object') return String(v)
  const vals = v.secret.refs.map((r) => SECRETS[r] ?? '')
  if (v.secret.encoding === 'plain') return vals[0] ?? ''
  const keys = [
    ...new Set(
      vals
        .join('\n')
        .split('\n')
        .filter((l) => l !== ''),
    ),
  ]
  return encodeURIComponent(keys.join('\n'))
}

let macCounter = 0
function normaliseValue(type: 'qemu' | 'lxc', vmid: number, key: string, value: string, diskNo: { n: number }): string {
  // a volume's create form as PVE stores it: its own volume name, `size=` by format_size, tokens sorted
  const kind = volumeKindOf(type, key, value)
  if (kind !== undefined && kind !== BIND_MOUNT) {
    const p = parsePS(value, kind.head)
    const head = p?.[kind.head]
    if (p === undefined || head === undefined) return value
    // qemu-server names the cloud-init drive's volume after the VM and stores it as a CD
    if (readDrive(value)?.kind === 'cloud-init') return `${poolOf(head) ?? ''}:vm-${vmid}-cloudinit,media=cdrom`
    if (!isBareForm(head)) return value
    delete p['import-from']
    let size = liveSizeBytes(head, undefined) ?? 0
    if (kind === EFI_DISK || kind === TPM_STATE) size = 4 * MiB
    if (head.endsWith(':0')) size = 2 * GiB // image-seeded: the image's size
    p.size = formatSize(size)
    p[kind.head] = `${poolOf(head)}:vm-${vmid}-disk-${diskNo.n++}`
    return formatPropertyString(p, { defaultKey: kind.head })
  }
  if (/^net\d+$/.test(key)) {
    const p = parsePropertyString(value, type === 'qemu' ? { defaultKey: 'model' } : {})
    if (type === 'qemu') {
      // qemu-server's parse_net reads the model and MAC; print_net writes `<model>=<MAC>` and sorted tokens
      const nic = qemuNic(value)
      const model = nic?.model ?? 'virtio'
      const mac = (
        nic?.mac ?? `BC:24:11:00:00:${(macCounter++ % 256).toString(16).padStart(2, '0').toUpperCase()}`
      ).toUpperCase()
      delete p.model
      delete p.macaddr
      delete p[model]
      return [
        `${model}=${mac}`,
        ...Object.keys(p)
          .sort()
          .map((k) => `${k}=${p[k]}`),
      ].join(',')
    }
    p.hwaddr ??= `BC:24:11:00:01:${(macCounter++ % 256).toString(16).padStart(2, '0').toUpperCase()}`
    p.type ??= 'veth'
    const { name, ...rest } = p
    return [
      `name=${name}`,
      ...Object.keys(rest)
        .sort()
        .map((k) => `${k}=${rest[k]}`),
    ].join(',')
  }
  if (key === 'cipassword') return '**********'
  return value
}

/** Applies the plan's requests to a copy of the inventory the way PVE would store them. */
export function applyPlan(plan: Plan, inv: LiveInventory): LiveInventory {
  const guests = new Map(inv.guests.map((g) => [g.vmid, { ...g, config: { ...g.config } }]))
  const volumes = [...inv.volumes]
  // user.cfg's pools: `pool` of a create/clone joins at the end of the worker and is never in the config
  const pools =
    inv.pools && 'pools' in inv.pools
      ? new Map(inv.pools.pools.map((p) => [p.poolid, { ...p, vmids: [...p.vmids] }]))
      : undefined
  const join = (poolid: string | undefined, vmid: number): void => {
    if (!pools || poolid === undefined) return
    for (const p of pools.values()) p.vmids = p.vmids.filter((v) => v !== vmid)
    const p = pools.get(poolid)
    if (p) p.vmids = [...p.vmids, vmid].sort((a, b) => a - b)
  }
  const disks = new Map<number, { n: number }>()
  const diskNo = (vmid: number) => {
    let d = disks.get(vmid)
    if (!d) disks.set(vmid, (d = { n: 10 }))
    return d
  }
  for (const a of plan.actions) {
    for (const r of a.requests) {
      switch (r.call) {
        case 'createGuest': {
          const vmid = Number(r.params.vmid)
          const config: Record<string, string> = {}
          for (const [k, v] of Object.entries(r.params)) {
            if (k === 'vmid' || k === 'start' || k === 'pool') continue
            config[k] = normaliseValue(r.guest, vmid, k, resolve(v), diskNo(vmid))
          }
          if (r.params.pool !== undefined) join(String(r.params.pool), vmid)
          if (r.guest === 'lxc') delete config.ostemplate
          guests.set(
            vmid,
            guest(vmid, config, { type: r.guest, node: r.node, status: r.params.start === 1 ? 'running' : 'stopped' }),
          )
          break
        }
        case 'cloneGuest': {
          const src = guests.get(r.vmid)
          const vmid = Number(r.params.newid)
          const config: Record<string, string> = { ...(src?.config ?? {}) }
          delete config.template
          if (r.guest === 'qemu') config.name = String(r.params.name)
          else {
            // pve-container clone_vm: `hostname` replaces the copied one; a full clone copies every volume onto
            // `storage` (else the source's storage) as the new guest's disk
            if (r.params.hostname !== undefined) config.hostname = String(r.params.hostname)
            let n = 0
            for (const key of Object.keys(config)
              .filter((k) => k === 'rootfs' || /^mp\d+$/.test(k))
              .sort()) {
              const value = config[key] as string
              const storage = r.params.storage !== undefined ? String(r.params.storage) : value.split(':')[0]
              config[key] = value.replace(/^[^,]+/, `${storage}:vm-${vmid}-disk-${n++}`)
            }
          }
          guests.set(vmid, guest(vmid, config, { type: r.guest, node: r.node, status: 'stopped' }))
          if (r.params.pool !== undefined) join(String(r.params.pool), vmid)
          break
        }
        case 'updateConfig': {
          const g = guests.get(r.vmid)
          if (!g) break
          const config = { ...g.config }
          for (const [k, v] of Object.entries(r.params)) {
            if (k === 'delete') {
              for (const d of String(v).split(',')) delete config[d]
              continue
            }
            if (r.onlyIfAbsent?.includes(k) && config[k] !== undefined) continue
            config[k] = normaliseValue(r.guest, r.vmid, k, resolve(v), diskNo(r.vmid))
          }
          guests.set(
            r.vmid,
            guest(r.vmid, config, { type: g.type, node: g.node, status: g.status, template: g.template }),
          )
          break
        }
        case 'resizeDisk': {
          const g = guests.get(r.vmid)
          if (!g) break
          const v = g.config[r.disk] ?? ''
          g.config[r.disk] = v.replace(/size=[^,]+/, `size=${r.size}`)
          break
        }
        case 'snapshot': {
          // PVE's current config names the latest snapshot in `parent` (bookkeeping, never drift)
          const g = guests.get(r.vmid)
          if (g) guests.set(r.vmid, { ...g, config: { ...g.config, parent: 'proxops-20260101T000000Z' } })
          break
        }
        case 'markTemplate': {
          const g = guests.get(r.vmid)
          if (g) guests.set(r.vmid, { ...g, template: true, config: { ...g.config, template: '1' } })
          break
        }
        case 'start':
        case 'stop':
        case 'shutdown': {
          const g = guests.get(r.vmid)
          if (g) guests.set(r.vmid, { ...g, status: r.call === 'start' ? 'running' : 'stopped' })
          break
        }
        case 'deleteGuest':
          guests.delete(r.vmid)
          if (pools) for (const p of pools.values()) p.vmids = p.vmids.filter((v) => v !== r.vmid)
          break
        case 'createPool':
          pools?.set(String(r.params.poolid), {
            poolid: String(r.params.poolid),
            ...(r.params.comment ? { comment: String(r.params.comment) } : {}),
            vmids: [],
            storages: [],
          })
          break
        case 'updatePool': {
          const p = pools?.get(String(r.params.poolid))
          if (!p) break
          if (r.params.comment !== undefined) p.comment = String(r.params.comment)
          for (const vmid of String(r.params.vms ?? '')
            .split(',')
            .filter(Boolean)
            .map(Number))
            if (r.params.delete === 1) p.vmids = p.vmids.filter((v) => v !== vmid)
            else join(p.poolid, vmid)
          break
        }
        case 'deletePool':
          pools?.delete(r.poolid)
          break
        case 'downloadUrl':
          volumes.push({
            node: r.node,
            storage: r.storage,
            volid: `${r.storage}:${String(r.params.content)}/${String(r.params.filename)}`,
            content: String(r.params.content),
          })
          break
        default:
          break
      }
    }
  }
  return {
    ...inv,
    guests: [...guests.values()].sort((a, b) => a.vmid - b.vmid),
    volumes,
    ...(pools ? { pools: { pools: [...pools.values()].sort((a, b) => (a.poolid < b.poolid ? -1 : 1)) } } : {}),
  }
}

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
