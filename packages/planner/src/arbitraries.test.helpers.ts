/** fast-check arbitraries for valid desired sets (the schema's rules held) and live estates. */
import fc from 'fast-check'
import type { ContainerManifest, Manifest, QemuManifest } from '@proxops/schema'
import type { DesiredState } from './desired.js'
import { artifact, GiB, MiB, pool } from './fixtures.test.helpers.js'

const NODES = ['pve1', 'pve2'] as const
const TAGS = ['web', 'db', 'prod', 'Edge', 'k8s']
const sizeArb = fc.oneof(
  fc.integer({ min: 1, max: 16 }).map((g) => g * GiB),
  fc.constantFrom(512 * MiB, 1536 * MiB),
)
const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined })

const diskArb = (bus: 'scsi' | 'virtio' | 'sata', i: number) =>
  fc
    .record({
      storage: fc.constantFrom('local-lvm', 'local-zfs'),
      size: sizeArb,
      // PVE accepts iothread on scsi and virtio only
      iothread: bus === 'sata' ? fc.constant(false) : fc.boolean(),
      discard: opt(fc.constantFrom('ignore' as const, 'on' as const)),
      ssd: bus === 'virtio' ? fc.constant(undefined) : opt(fc.boolean()),
      aio: opt(fc.constantFrom('native' as const, 'threads' as const, 'io_uring' as const)),
    })
    .map((d) => ({ ...d, interface: `${bus}${i}` }))

const nicArb = (i: number) =>
  fc
    .record({
      model: fc.constantFrom('virtio', 'e1000'),
      bridge: fc.constantFrom('vmbr0', 'vmbr1'),
      mac: opt(
        fc
          .constantFrom('bc:24:11:0a:0b:0c', 'bc:24:11:1a:1b:1c')
          .map((m) => m.replace('0c', `${i}c`).replace('1c', `${i}d`)),
      ),
      vlan: opt(fc.integer({ min: 1, max: 4094 })),
      // megabytes per second as PVE reads rate=, fractions included (100 Mbit/s is 12.5)
      'rate-limit': opt(fc.oneof(fc.integer({ min: 1, max: 1000 }), fc.constantFrom(0.5, 12.5))),
      firewall: fc.boolean(),
    })
    .map((n) => ({ ...n, slot: `net${i}` }))

export function vmArb(name: string, vmid: number, template: boolean): fc.Arbitrary<QemuManifest> {
  return fc
    .record({
      node: fc.constantFrom(...NODES),
      state: template ? fc.constant('stopped' as const) : fc.constantFrom('started' as const, 'stopped' as const),
      memory: fc.integer({ min: 1, max: 64 }).map((n) => n * 256),
      cpuType: fc.constantFrom('host', 'x86-64-v2-AES', 'kvm64'),
      cores: fc.integer({ min: 1, max: 16 }),
      bus: fc.constantFrom('scsi' as const, 'virtio' as const, 'sata' as const),
      ndisks: fc.integer({ min: 1, max: 3 }),
      nnics: fc.integer({ min: 0, max: 2 }),
      seed: fc.integer(),
      machine: opt(fc.constantFrom('i440fx' as const, 'q35' as const)),
      sockets: opt(fc.integer({ min: 1, max: 2 })),
      numa: opt(fc.boolean()),
      efi: fc.boolean(),
      tpm: fc.boolean(),
      cloudInit: fc.boolean(),
      cdromNone: fc.boolean(),
      onboot: opt(fc.boolean()),
      agent: opt(fc.boolean()),
      hotplug: opt(fc.subarray(['network', 'disk', 'usb', 'memory', 'cpu'], { minLength: 1 })),
      ciUser: opt(fc.constantFrom('ops', 'root')),
      sshKeys: opt(fc.subarray(['ssh-ed25519 AAAAone a@x', 'ssh-rsa AAAAtwo b@y'], { minLength: 1 })),
      nameservers: opt(fc.subarray(['1.1.1.1', '9.9.9.9'], { minLength: 1 })),
      ip: opt(fc.integer({ min: 2, max: 250 }).map((n) => `10.0.0.${n}/24`)),
      tags: fc.subarray(TAGS),
      description: opt(fc.constantFrom('web server', 'line one\nline two\n')),
    })
    .chain((r) =>
      fc
        .tuple(
          fc.tuple(...Array.from({ length: r.ndisks }, (_, i) => diskArb(r.bus, i))),
          fc.tuple(...Array.from({ length: r.nnics }, (_, i) => nicArb(i))),
        )
        .map(([disks, nics]) => {
          const spec: QemuManifest['spec'] = {
            node: r.node,
            vmid,
            state: r.state,
            memory: r.memory,
            cpu: { type: r.cpuType, cores: r.cores },
            disks,
            networks: nics,
            hardware: {
              ...(r.machine ? { machine: r.machine } : {}),
              ...(r.sockets ? { sockets: r.sockets } : {}),
              ...(r.numa !== undefined ? { numa: r.numa } : {}),
              ...(r.efi
                ? {
                    bios: 'ovmf' as const,
                    'efi-disk': {
                      storage: 'local-lvm',
                      size: 4 * MiB,
                      template: '4m' as const,
                      'secure-boot': 'enabled' as const,
                    },
                  }
                : {}),
              ...(r.tpm ? { tpm: { version: 'v2.0' as const } } : {}),
              ...(r.cloudInit ? { 'cloud-init': { enabled: true, storage: 'local-lvm', size: '4M' } } : {}),
              ...(r.cdromNone ? { cdrom: { iso: 'none', media: 'cdrom' as const } } : {}),
              'pci-devices': [],
            },
            options: {
              ...(r.onboot !== undefined ? { onboot: r.onboot } : {}),
              ...(r.agent !== undefined ? { agent: r.agent } : {}),
              ...(r.hotplug ? { hotplug: r.hotplug } : {}),
            },
            'cloud-init-data': {
              ...(r.ciUser ? { 'ci-user': r.ciUser } : {}),
              ...(r.sshKeys ? { 'ssh-keys': r.sshKeys } : {}),
              ...(r.nameservers ? { nameservers: r.nameservers } : {}),
              ...(r.ip ? { ipconfigs: [{ nic: 0, ip: r.ip, gateway: '10.0.0.1' }] } : {}),
            },
            'pve-name': name,
            ...(r.description ? { 'pve-description': r.description } : {}),
            tags: r.tags,
            extra: {},
          }
          return {
            apiVersion: 'proxops/v1alpha1',
            kind: template ? ('TemplateVM' as const) : ('VM' as const),
            metadata: { name, labels: {}, annotations: {} },
            spec,
          } as QemuManifest
        }),
    )
}

export function lxcArb(name: string, vmid: number, template: boolean): fc.Arbitrary<ContainerManifest> {
  return fc
    .record({
      node: fc.constantFrom(...NODES),
      state: template ? fc.constant('stopped' as const) : fc.constantFrom('started' as const, 'stopped' as const),
      memory: fc.integer({ min: 1, max: 32 }).map((n) => n * 128),
      swap: opt(fc.integer({ min: 0, max: 8 }).map((n) => n * 256)),
      cores: fc.integer({ min: 1, max: 8 }),
      root: fc.record({ storage: fc.constantFrom('local-lvm', 'local-zfs'), size: sizeArb }),
      mp: opt(
        fc.record({
          storage: fc.constantFrom('local-lvm', 'local-zfs'),
          size: sizeArb,
          ro: opt(fc.boolean()),
          backup: opt(fc.boolean()),
        }),
      ),
      bind: opt(fc.record({ host: fc.constantFrom('/tank/a', '/tank/b/'), ro: opt(fc.boolean()) })),
      bridge: fc.constantFrom('vmbr0', 'vmbr1'),
      ip: opt(fc.integer({ min: 2, max: 250 }).map((n) => `10.1.0.${n}/24`)),
      firewall: fc.boolean(),
      tag: opt(fc.integer({ min: 1, max: 4094 })),
      nameservers: opt(fc.subarray(['1.1.1.1', '9.9.9.9'], { minLength: 1 })),
      domain: opt(fc.constantFrom('lan', 'example.org')),
      arch: opt(fc.constantFrom('amd64' as const, 'arm64' as const)),
      // privileged containers need root@pam for feature flags; the estates here are unprivileged (declared or default)
      unprivileged: opt(fc.constant(true)),
      nesting: opt(fc.boolean()),
      onboot: opt(fc.boolean()),
      console: opt(fc.boolean()),
      tags: fc.subarray(TAGS),
    })
    .map((r) => {
      const spec: ContainerManifest['spec'] = {
        node: r.node,
        vmid,
        template: 'debian-12',
        state: r.state,
        memory: r.memory,
        ...(r.swap !== undefined ? { swap: r.swap } : {}),
        cpu: { cores: r.cores },
        root: r.root,
        'mount-points': r.mp
          ? [
              {
                storage: r.mp.storage,
                size: r.mp.size,
                'mount-point': '/data',
                slot: 'mp0',
                options: {
                  ...(r.mp.ro !== undefined ? { 'read-only': r.mp.ro } : {}),
                  ...(r.mp.backup !== undefined ? { backup: r.mp.backup } : {}),
                },
              },
            ]
          : [],
        'bind-mounts': r.bind
          ? [
              {
                'host-path': r.bind.host,
                'mount-point': '/bind',
                slot: 'mp1',
                ...(r.bind.ro !== undefined ? { 'read-only': r.bind.ro } : {}),
              },
            ]
          : [],
        networks: [
          {
            bridge: r.bridge,
            firewall: r.firewall,
            slot: 'net0',
            ...(r.ip ? { ip: r.ip, gw: '10.1.0.1' } : {}),
            ...(r.tag ? { tag: r.tag } : {}),
          },
        ],
        dns: {
          hostname: name,
          ...(r.nameservers ? { nameservers: r.nameservers } : {}),
          ...(r.domain ? { domain: r.domain } : {}),
        },
        ...(r.arch ? { arch: r.arch } : {}),
        options: {
          ...(r.unprivileged !== undefined ? { unprivileged: r.unprivileged } : {}),
          ...(r.nesting !== undefined ? { nesting: r.nesting } : {}),
          ...(r.onboot !== undefined ? { onboot: r.onboot } : {}),
          ...(r.console !== undefined ? { console: r.console } : {}),
        },
        tags: r.tags,
        extra: {},
      }
      return {
        apiVersion: 'proxops/v1alpha1',
        kind: template ? ('TemplateCT' as const) : ('LXC' as const),
        metadata: { name, labels: {}, annotations: {} },
        spec,
      } as ContainerManifest
    })
}

/** A desired cluster: guests with unique vmids and names, plus the CTTemplate the containers need. */
export const desiredArb: fc.Arbitrary<DesiredState> = fc
  .uniqueArray(fc.integer({ min: 100, max: 160 }), { minLength: 0, maxLength: 6 })
  .chain((vmids) =>
    fc.tuple(
      ...vmids.map((vmid, i) =>
        fc.constantFrom('VM', 'VM', 'TemplateVM', 'LXC', 'TemplateCT').chain((k): fc.Arbitrary<Manifest> => {
          const name = `g${i}-${vmid}`
          return k === 'VM' || k === 'TemplateVM'
            ? vmArb(name, vmid, k === 'TemplateVM')
            : lxcArb(name, vmid, k === 'TemplateCT')
        }),
      ),
    ),
  )
  .map((guests) => ({
    cluster: 'homelab',
    manifests: [artifact('CTTemplate', 'debian-12', 'debian-12.tar.zst', ['pve1', 'pve2']), ...guests],
  }))

/** Two desired sets over the same vmids (the second is "the next push"), to produce drift of every kind. */
export const drift2Arb: fc.Arbitrary<[DesiredState, DesiredState]> = desiredArb.chain((a) =>
  fc
    .tuple(
      ...a.manifests.map((m): fc.Arbitrary<Manifest> => {
        if (m.kind === 'VM' || m.kind === 'TemplateVM')
          return vmArb(m.metadata.name, m.spec.vmid, m.kind === 'TemplateVM').map(
            (v) => ({ ...v, spec: { ...v.spec, node: m.spec.node } }) as QemuManifest,
          )
        if (m.kind === 'LXC' || m.kind === 'TemplateCT')
          return lxcArb(m.metadata.name, m.spec.vmid, m.kind === 'TemplateCT').map(
            (v) => ({ ...v, spec: { ...v.spec, node: m.spec.node } }) as ContainerManifest,
          )
        return fc.constant(m)
      }),
    )
    .map((ms): [DesiredState, DesiredState] => [a, { ...a, manifests: ms }]),
)

function withoutUnprivileged(o: ContainerManifest['spec']['options']): ContainerManifest['spec']['options'] {
  const { unprivileged: _u, ...rest } = o ?? {}
  return rest
}

/**
 * A TemplateCT and a clone-backed LXC of it on the same node: the clone's root on any storage, no smaller than
 * the template's (validation refuses smaller), no mount points of its own (the template's are copied).
 */
export const lxcCloneArb: fc.Arbitrary<DesiredState> = fc
  .tuple(lxcArb('ct-golden', 9100, true), lxcArb('app', 120, false), fc.integer({ min: 0, max: 3 }))
  .map(([tmpl, ct, grow]) => lxcClonePair(tmpl, ct, grow))

/** An LXC clone pair, then the next push: the same template, the clone's own fields (and growth) drawn again. */
export const lxcCloneDriftArb: fc.Arbitrary<[DesiredState, DesiredState]> = fc
  .tuple(
    lxcArb('ct-golden', 9100, true),
    fc.tuple(lxcArb('app', 120, false), fc.integer({ min: 0, max: 3 })),
    fc.tuple(lxcArb('app', 120, false), fc.integer({ min: 0, max: 3 })),
  )
  .map(([tmpl, [a, growA], [b, growB]]) => [lxcClonePair(tmpl, a, growA), lxcClonePair(tmpl, b, growB)])

function lxcClonePair(tmpl: ContainerManifest, ct: ContainerManifest, grow: number): DesiredState {
  const { template: _t, ...spec } = ct.spec
  const clone = {
    ...ct,
    spec: {
      ...spec,
      node: tmpl.spec.node,
      clone: 'ct-golden',
      root: { storage: ct.spec.root.storage, size: tmpl.spec.root.size + grow * 1024 ** 3 },
      'mount-points': [],
      'bind-mounts': [],
      // unprivileged is inherited (create-only): declared as the template declares it
      options: {
        ...withoutUnprivileged(ct.spec.options),
        ...(tmpl.spec.options?.unprivileged ? { unprivileged: true } : {}),
      },
    },
  } as ContainerManifest
  const template = { ...tmpl, spec: { ...tmpl.spec, 'bind-mounts': [] } } as ContainerManifest
  return {
    cluster: 'homelab',
    manifests: [artifact('CTTemplate', 'debian-12', 'debian-12.tar.zst', ['pve1', 'pve2']), template, clone],
  }
}

/**
 * A TemplateVM and a VM full-cloned from it on the same node: the clone takes the template's disks (it declares
 * none), and everything else (hardware, NICs, cloud-init, options) is its own, so the post-clone write changes
 * any of them.
 */
export const vmCloneArb: fc.Arbitrary<DesiredState> = fc
  .tuple(vmArb('golden', 9000, true), vmArb('app', 130, false))
  .map(([tmpl, vm]) => clonePair(tmpl, vm))

/** A template and clone pair, then the next push: the same template, the clone's own fields drawn again. */
export const vmCloneDriftArb: fc.Arbitrary<[DesiredState, DesiredState]> = fc
  .tuple(vmArb('golden', 9000, true), vmArb('app', 130, false), vmArb('app', 130, false))
  .map(([tmpl, a, b]) => [clonePair(tmpl, a), clonePair(tmpl, b)])

function clonePair(tmpl: QemuManifest, vm: QemuManifest): DesiredState {
  // a clone keeps its template's cloud-init drive (a CD declared on that slot instead is a volume-kind anomaly)
  const ci = tmpl.spec.hardware?.['cloud-init']
  const hardware = { ...vm.spec.hardware, ...(ci ? { 'cloud-init': ci } : {}) } as QemuManifest['spec']['hardware']
  const clone = {
    ...vm,
    spec: { ...vm.spec, node: tmpl.spec.node, clone: 'golden', disks: [], hardware },
  } as QemuManifest
  return { cluster: 'homelab', manifests: [tmpl, clone] }
}

/**
 * drift2Arb with two declared pools (`web`, `db/blue`): each guest of each push is in one of them or in none, so
 * a push moves guests between pools, into one and out of the declaration.
 */
export const poolDrift2Arb: fc.Arbitrary<[DesiredState, DesiredState]> = drift2Arb.chain(([a, b]) => {
  const choice = fc.constantFrom<string | undefined>('web', 'db/blue', undefined)
  const n = a.manifests.length
  return fc
    .tuple(fc.array(choice, { minLength: n, maxLength: n }), fc.array(choice, { minLength: n, maxLength: n }))
    .map(([pa, pb]): [DesiredState, DesiredState] => [withPools(a, pa), withPools(b, pb)])
})

function withPools(d: DesiredState, pools: readonly (string | undefined)[]): DesiredState {
  const manifests = d.manifests.map((m, i) => {
    const p = pools[i]
    if (p === undefined || !('vmid' in m.spec)) return m
    return { ...m, spec: { ...m.spec, pool: p } } as Manifest
  })
  return { ...d, manifests: [pool('web'), pool('db'), pool('blue', { id: 'db/blue' }), ...manifests] }
}

/**
 * drift2Arb with HA: each non-template guest of each push is an HA resource or not, with or without a node
 * preference (its own node first), so a push adds, changes and removes HA resources.
 */
export const haDrift2Arb: fc.Arbitrary<[DesiredState, DesiredState]> = drift2Arb.chain(([a, b]) => {
  const n = a.manifests.length
  const ha = fc.option(
    fc.record({ maxRestart: fc.integer({ min: 0, max: 3 }), preferred: fc.boolean(), strict: fc.boolean() }),
    { nil: undefined },
  )
  return fc
    .tuple(fc.array(ha, { minLength: n, maxLength: n }), fc.array(ha, { minLength: n, maxLength: n }))
    .map(([ha, hb]): [DesiredState, DesiredState] => [withHa(a, ha), withHa(b, hb)])
})

function withHa(
  d: DesiredState,
  choices: readonly ({ maxRestart: number; preferred: boolean; strict: boolean } | undefined)[],
): DesiredState {
  const manifests = d.manifests.map((m, i) => {
    const c = choices[i]
    if (c === undefined || (m.kind !== 'VM' && m.kind !== 'LXC')) return m
    const other = m.spec.node === 'pve1' ? 'pve2' : 'pve1'
    const ha = {
      max_restart: c.maxRestart,
      max_relocate: 1,
      strict: c.preferred && c.strict,
      ...(c.preferred ? { nodes: { [m.spec.node]: 2, [other]: 1 } } : {}),
    }
    return { ...m, spec: { ...m.spec, ha } } as Manifest
  })
  return { ...d, manifests }
}
