/**
 * adopt, then plan: what adopt writes for a live guest plans no change against that same guest, for every value
 * the manifest models (the rest are adopt gaps and unmanaged keys in the plan, never writes); over random live
 * configs, and over the guests the simulator made of random desired sets.
 */
import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { parseManifest } from '@proxops/schema'
import type { Manifest } from '@proxops/schema'
import type { LiveGuest, LiveInventory } from '../inventory.js'
import { plan } from '../plan/plan.js'
import { defaultBootDevices } from '../kinds/guest/drives.js'
import { QEMU_NIC_MODELS } from '../kinds/guest/keys.js'
import { DEFAULT_POLICY, type Plan } from '../plan-types.js'
import { adopt } from './adopt.js'
import { tableRows, type FieldRow } from '../kinds/guest/table.js'
import { desiredArb } from '../arbitraries.test.helpers.js'
import { emptyInventory, lookup } from '../fixtures.test.helpers.js'
import { simApply, simCycle, withSim } from '../test-support/sim.js'

function inventory(guests: LiveGuest[]): LiveInventory {
  return emptyInventory({
    cluster: 'homelab',
    pveVersion: '9.1.1',
    nodes: [{ node: 'pve1', online: true }],
    guests,
    // the CT template the containers were made from, adopted as a CTTemplate
    volumes: [
      { node: 'pve1', storage: 'local', volid: 'local:vztmpl/debian-12.tar.zst', content: 'vztmpl' },
      { node: 'pve1', storage: 'local', volid: 'local:iso/debian-12.iso', content: 'iso' },
    ],
  })
}

function liveGuest(type: 'qemu' | 'lxc', vmid: number, config: Record<string, string>, running: boolean): LiveGuest {
  return {
    type,
    node: 'pve1',
    vmid,
    name: type === 'qemu' ? config.name : config.hostname,
    template: false,
    status: running ? 'running' : 'stopped',
    tags: (config.tags ?? '').split(';').filter((t) => t !== ''),
    digest: 'd0',
    config,
    pending: {},
    pendingDeletes: [],
  }
}

/** adopt the inventory, parse every document with the schema, plan them against the same inventory. */
function adoptThenPlan(live: LiveInventory, policy = { ...DEFAULT_POLICY, nodes: ['pve1'] }): Plan {
  const result = adopt(live, { cluster: 'homelab' })
  const manifests: Manifest[] = []
  for (const file of result.files) {
    const doc = file.document as { kind: string; spec: Record<string, unknown> }
    // PVE does not record an LXC's template (an adopt INCOMPLETE item): the user names the adopted one
    if (doc.kind === 'LXC' || doc.kind === 'TemplateCT') doc.spec.template = 'debian-12-tar-zst'
    const parsed = parseManifest(doc)
    if (!parsed.ok) throw new Error(`${file.path}: ${JSON.stringify(parsed.issues)}`)
    manifests.push(parsed.manifest)
  }
  return plan({ cluster: 'homelab', manifests }, live, policy)
}

describe('adopt then plan', () => {
  it('pools: Pool manifests (nested ids in spec.id, comment without the marker) and spec.pool plan no change', () => {
    const g = (vmid: number) =>
      liveGuest(
        'qemu',
        vmid,
        {
          name: `g${vmid}`,
          memory: '1024',
          cores: '1',
          cpu: 'host',
          scsi0: `local-lvm:vm-${vmid}-disk-0,size=8G`,
          tags: 'proxops',
        },
        false,
      )
    const live: LiveInventory = {
      ...inventory([g(120), g(121), g(122)]),
      pools: {
        known: [
          { poolid: 'a', comment: 'managed-by=proxops', vmids: [120], storages: [] },
          { poolid: 'a/Blue_1', comment: 'managed-by=proxops blue tier', vmids: [121], storages: [] },
          { poolid: 'manual', comment: 'made by hand', vmids: [], storages: [] },
        ],
      },
    }
    const result = adopt(live, { cluster: 'homelab' })
    const docs = result.files.filter((f) => f.kind === 'Pool').map((f) => [f.path, f.document.spec])
    expect(docs).toEqual([
      ['pool/homelab/a-blue-1.yaml', { id: 'a/Blue_1', comment: 'blue tier' }],
      ['pool/homelab/a.yaml', {}],
      ['pool/homelab/manual.yaml', { comment: 'made by hand' }],
    ])
    const spec = (vmid: number) => result.files.find((f) => f.vmid === vmid)!.document.spec as Record<string, unknown>
    expect([spec(120).pool, spec(121).pool, spec(122).pool]).toEqual(['a', 'a/Blue_1', undefined])
    // the only change: the pool made by hand is claimed (its comment gains the marker, the text stays)
    expect(adoptThenPlan(live).actions.map((a) => [a.type, a.address, a.diffs.map((d) => d.after)])).toEqual([
      ['update', 'Pool/manual', ['managed-by=proxops made by hand']],
    ])
  })

  it('AdoptedE1000_82540emNicPlansNoChange (one NIC model list for plan and adopt)', () => {
    const g = liveGuest(
      'qemu',
      120,
      {
        name: 'legacy',
        memory: '1024',
        cores: '1',
        cpu: 'kvm64',
        scsi0: 'local-lvm:vm-120-disk-0,size=8G',
        net0: 'e1000-82540em=BC:24:11:12:34:56,bridge=vmbr0,tag=30',
        tags: 'proxops',
      },
      true,
    )
    const p = adoptThenPlan(inventory([g]))
    expect(p.actions).toEqual([])
    expect(p.anomalies).toEqual([])
  })

  it('a changed model of such a NIC is one rewrite with the model once, keeping the MAC', () => {
    const g = liveGuest(
      'qemu',
      121,
      {
        name: 'legacy',
        memory: '1024',
        cores: '1',
        cpu: 'kvm64',
        scsi0: 'local-lvm:vm-121-disk-0,size=8G',
        net0: 'e1000-82540em=BC:24:11:12:34:56,bridge=vmbr0',
      },
      false,
    )
    const adopted = adopt(inventory([g]), { cluster: 'homelab' }).files.find((f) => f.kind === 'VM')!
    const doc = adopted.document as { spec: { networks: { model: string }[] } }
    doc.spec.networks[0]!.model = 'virtio'
    const parsed = parseManifest(doc)
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues))
    const p = plan({ cluster: 'homelab', manifests: [parsed.manifest] }, inventory([g]), {
      ...DEFAULT_POLICY,
      nodes: ['pve1'],
    })
    expect(p.actions.map((a) => a.requests[0])).toMatchObject([
      { call: 'updateConfig', params: { net0: 'virtio=BC:24:11:12:34:56,bridge=vmbr0' } },
    ])
  })

  it('the boot order qemu-server derived is not pinned into the manifest; a chosen one is (get_default_bootdevices)', () => {
    const cfg = {
      name: 'web',
      memory: '1024',
      cores: '1',
      scsi0: 'local-lvm:vm-122-disk-0,size=8G',
      net0: 'virtio=BC:24:11:12:34:57,bridge=vmbr0',
    }
    const bootOrder = (boot: string) => {
      const file = adopt(inventory([liveGuest('qemu', 122, { ...cfg, boot }, false)]), {
        cluster: 'homelab',
      }).files.find((f) => f.kind === 'VM')!
      return (file.document as { spec: { options?: { 'boot-order'?: string[] } } }).spec.options?.['boot-order']
    }
    expect(bootOrder('order=scsi0;net0')).toBeUndefined()
    expect(bootOrder('order=net0;scsi0')).toEqual(['net0', 'scsi0'])
  })

  /**
   * Live values for every row of a kind's field table, by codec; a string row needs a sample here (a value
   * the manifest accepts), so a new row cannot escape this property.
   */
  const SAMPLES: Record<string, readonly string[]> = {
    name: ['web', 'db-1', 'build'],
    hostname: ['cache', 'dns-1'],
    description: ['a web server', 'line one\nline two'],
    bios: ['seabios', 'ovmf'],
    serial0: ['socket'],
    startup: ['order=1', 'order=2,up=30'],
    ciuser: ['admin', 'debian'],
    searchdomain: ['lan', 'example.org'],
    // `hidden` is spec.options.hidden, `flags` spec.cpu.flags; other tokens are adopt gaps, kept by a compare
    cpu: ['host', 'kvm64', 'x86-64-v2-AES', 'host,hidden=1', 'host,flags=+aes;-pcid', 'kvm64,phys-bits=host'],
    // PVE's other vga tokens are adopt gaps and kept by a compare
    vga: ['std', 'qxl', 'serial0', 'std,memory=32'],
    // pve-hotplug-features: 1 is network,disk,usb, 0 is none
    hotplug: ['1', '0', 'network,disk', 'disk,usb,cpu,memory'],
  }
  const rowValue = (r: FieldRow): fc.Arbitrary<string> => {
    const c = r.codec
    if (c.t === 'int')
      return c.mib
        ? fc.integer({ min: 1, max: 64 }).map((n) => String(n * 128))
        : fc.integer({ min: 1, max: 8 }).map(String)
    if (c.t === 'flag')
      return c.defaultKey === undefined
        ? fc.constantFrom('0', '1')
        : fc.constantFrom('0', '1', `${c.defaultKey}=1,fstrim_cloned_disks=1`, '1,type=virtio')
    if (c.t === 'list' && c.read === undefined) return fc.constantFrom('1.1.1.1', '9.9.9.9 1.1.1.1')
    if (c.t === 'enum') return fc.constantFrom(...c.values)
    // pinned versions are adopted as their family
    if (c.t === 'machine') return fc.constantFrom('q35', 'pc', 'pc-q35-8.1', 'pc-i440fx-9.0+pve0')
    const samples = SAMPLES[r.key]
    if (!samples) throw new Error(`field table row ${r.key}: add a live sample to SAMPLES`)
    return fc.constantFrom(...samples)
  }
  const REQUIRED = new Set(['memory', 'cores', 'name', 'hostname'])
  /** A live value (or none, unless PVE requires the key) for every row of the kind's table. */
  const tableConfig = (type: 'qemu' | 'lxc'): fc.Arbitrary<Record<string, string>> =>
    fc
      .tuple(
        ...tableRows(type).map((r) =>
          (REQUIRED.has(r.key) ? rowValue(r) : opt(rowValue(r))).map((v) => [r.key, v] as const),
        ),
      )
      .map((entries) => Object.fromEntries(entries.filter((e): e is readonly [string, string] => e[1] !== undefined)))

  const mac = fc
    .array(fc.integer({ min: 0, max: 255 }), { minLength: 3, maxLength: 3 })
    .map((b) => `BC:24:11:${b.map((x) => x.toString(16).padStart(2, '0').toUpperCase()).join(':')}`)
  const opt = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(a, { nil: undefined })
  const bool1 = opt(fc.constant('1'))
  const slotsOf = (prefix: readonly string[], min: number, max: number) =>
    fc.uniqueArray(fc.constantFrom(...prefix), { minLength: min, maxLength: max })

  /** A live qemu config made of values the VM manifest models. */
  const qemuConfig = (vmid: number): fc.Arbitrary<Record<string, string>> =>
    fc
      .record({
        table: tableConfig('qemu'),
        disks: slotsOf(['scsi0', 'scsi1', 'virtio0', 'sata0'], 1, 3).chain((slots) =>
          fc.tuple(
            ...slots.map((slot, i) =>
              fc
                .record({
                  // as qemu-server's format_size prints it: whole GiB as G, else M
                  size: fc.oneof(
                    fc.integer({ min: 1, max: 512 }).map((n) => `${n}G`),
                    fc.integer({ min: 1, max: 4096 }).map((n) => `${n * 1024 + 512}M`),
                  ),
                  iothread: slot.startsWith('sata') ? fc.constant(undefined) : bool1,
                  discard: opt(fc.constantFrom('on', 'ignore')),
                  ssd: slot.startsWith('virtio') ? fc.constant(undefined) : opt(fc.constantFrom('0', '1')),
                  aio: opt(fc.constantFrom('native', 'io_uring')),
                })
                .map((d): [string, string] => [
                  slot,
                  [
                    `local-lvm:vm-${vmid}-disk-${i}`,
                    ...(d.aio ? [`aio=${d.aio}`] : []),
                    ...(d.discard ? [`discard=${d.discard}`] : []),
                    ...(d.iothread ? ['iothread=1'] : []),
                    `size=${d.size}`,
                    ...(d.ssd ? [`ssd=${d.ssd}`] : []),
                  ].join(','),
                ]),
            ),
          ),
        ),
        scsihw: opt(fc.constantFrom('virtio-scsi-single', 'lsi')),
        // the cloud-init drive and a CD drive, on the slots plan() gives them or on another IDE slot (adopt gaps,
        // unmanaged in the plan); the CD holds an adopted ISO, another ISO, the host's drive or nothing
        cloudInit: opt(fc.constantFrom('ide2', 'ide0')),
        cd: opt(
          fc.record({
            slot: fc.constantFrom('ide0', 'ide2', 'ide3'),
            medium: fc.constantFrom('none', 'local:iso/debian-12.iso', 'local:iso/other.iso', 'cdrom'),
          }),
        ),
        // tokens beside the volume or device that PVE owns (ms-cert, size, x-vga) are kept by a compare
        efidisk0: opt(
          fc
            .record({ efitype: opt(fc.constantFrom('2m', '4m')), keys: opt(fc.constantFrom('0', '1')) })
            .map(({ efitype, keys }) =>
              [
                `local-lvm:vm-${vmid}-disk-9`,
                ...(efitype ? [`efitype=${efitype}`] : []),
                'ms-cert=2023',
                ...(keys ? [`pre-enrolled-keys=${keys}`] : []),
                'size=4M',
              ].join(','),
            ),
        ),
        // the version is chosen at creation; absent means qemu-server's default v1.2
        tpmstate0: opt(
          fc.constantFrom('', ',version=v1.2', ',version=v2.0').map((v) => `local-lvm:vm-${vmid}-disk-8,size=4M${v}`),
        ),
        hostpci0: opt(fc.constantFrom('0000:17:00.0', '0000:17:00.0,pcie=1', '17:00.0,pcie=0,x-vga=1')),
        nics: slotsOf(['net0', 'net1'], 0, 2).chain((slots) =>
          fc.tuple(
            ...slots.map((slot) =>
              fc
                .record({
                  model: fc.constantFrom(...QEMU_NIC_MODELS),
                  mac,
                  bridge: fc.constantFrom('vmbr0', 'vmbr1'),
                  tag: opt(fc.integer({ min: 1, max: 4094 })),
                  firewall: bool1,
                  rate: opt(fc.oneof(fc.integer({ min: 1, max: 1000 }), fc.constantFrom(0.5, 12.5, 62.5))),
                  // parse_net reads both `<model>=<mac>` and `model=<model>,macaddr=<mac>`
                  keyed: fc.boolean(),
                  // tokens the manifest does not model: adopt gaps, kept by a compare
                  queues: opt(fc.constant('queues=2')),
                })
                .map((n): [string, string] => [
                  slot,
                  [
                    n.keyed ? `model=${n.model},macaddr=${n.mac}` : `${n.model}=${n.mac}`,
                    ...(n.queues ? [n.queues] : []),
                    `bridge=${n.bridge}`,
                    ...(n.firewall ? ['firewall=1'] : []),
                    ...(n.rate !== undefined ? [`rate=${n.rate}`] : []),
                    ...(n.tag !== undefined ? [`tag=${n.tag}`] : []),
                  ].join(','),
                ]),
            ),
          ),
        ),
        tags: fc.uniqueArray(fc.constantFrom('web', 'prod', 'db'), { maxLength: 2 }),
        // cloud-init data: a static IP config (with tokens the manifest does not model: kept), DHCP (a gap), keys
        // matching no SOPS entry (left to PVE)
        ipconfig0: opt(
          fc.constantFrom('ip=10.0.0.5/24', 'gw=10.0.0.1,ip=10.0.0.5/24', 'ip=10.0.0.5/24,ip6=auto', 'ip=dhcp'),
        ),
        sshkeys: opt(fc.constant(encodeURIComponent('ssh-ed25519 AAAAB alice@x\nssh-rsa AAAAC bob@y'))),
        // qemu-server's own order (bookkeeping, not adopted) or one somebody chose (adopted as boot-order)
        boot: opt(fc.constantFrom('derived', 'chosen')),
      })
      .map(({ disks, nics, tags, boot, table, cloudInit, cd, ...rest }) => {
        const config: Record<string, string> = Object.fromEntries([...disks, ...nics] as [string, string][])
        if (cloudInit !== undefined) config[cloudInit] = `local-lvm:vm-${vmid}-cloudinit,media=cdrom`
        if (cd !== undefined) config[cd.slot] ??= `${cd.medium},media=cdrom`
        Object.assign(config, table)
        for (const [k, v] of Object.entries(rest)) if (v !== undefined) config[k] = v
        if (config.scsihw !== undefined && !disks.some(([slot]) => slot.startsWith('scsi'))) delete config.scsihw
        const devices = defaultBootDevices(config)
        if (boot === 'derived') config.boot = `order=${devices.join(';')}`
        if (boot === 'chosen') config.boot = `order=${[...devices.slice(1), devices[0]!].join(';')}`
        config.tags = [...tags, 'proxops'].sort().join(';')
        return config
      })

  /** A live container config made of values the LXC manifest models. */
  const lxcConfig = (vmid: number): fc.Arbitrary<Record<string, string>> =>
    fc
      .record({
        table: tableConfig('lxc'),
        rootSize: fc.constantFrom('8G', '1536M', '64G'),
        net: opt(
          fc.record({
            bridge: fc.constantFrom('vmbr0', 'vmbr1'),
            hwaddr: mac,
            ip: opt(fc.constantFrom('dhcp', '10.0.0.5/24')),
            tag: opt(fc.integer({ min: 1, max: 4094 })),
            firewall: bool1,
            rate: opt(fc.oneof(fc.integer({ min: 1, max: 1000 }), fc.constantFrom(0.5, 12.5, 62.5))),
            gw: opt(fc.constant('10.0.0.1')),
            type: opt(fc.constant('veth')),
            mtu: opt(fc.constant('mtu=1400')),
          }),
        ),
        mp: opt(
          fc.record({
            size: fc.integer({ min: 1, max: 64 }),
            backup: opt(fc.constantFrom('0', '1')),
            ro: opt(fc.constantFrom('0', '1')),
            mountoptions: opt(fc.constantFrom('noatime', 'noatime;nodev')),
            // a token the manifest does not model: an adopt gap, kept by a compare
            replicate: opt(fc.constant('replicate=0')),
          }),
        ),
        bind: opt(fc.record({ ro: opt(fc.constantFrom('0', '1')) })),
        // pve-container's features: the modelled ones and one the manifest does not model (a gap, kept by a rewrite)
        features: fc.record({
          nesting: opt(fc.constantFrom('0', '1')),
          keyctl: opt(fc.constantFrom('0', '1')),
          fuse: opt(fc.constantFrom('0', '1')),
          mount: opt(fc.constant('nfs')),
        }),
      })
      .map((c) => {
        const config: Record<string, string> = {
          ...c.table,
          rootfs: `local-lvm:subvol-${vmid}-disk-0,size=${c.rootSize}`,
          ostype: 'debian',
          tags: 'proxops',
        }
        if (c.net) {
          const n = c.net
          config.net0 = [
            'name=eth0',
            `bridge=${n.bridge}`,
            ...(n.firewall ? ['firewall=1'] : []),
            ...(n.gw ? [`gw=${n.gw}`] : []),
            `hwaddr=${n.hwaddr}`,
            ...(n.ip ? [`ip=${n.ip}`] : []),
            ...(n.mtu ? [n.mtu] : []),
            ...(n.rate !== undefined ? [`rate=${n.rate}`] : []),
            ...(n.tag !== undefined ? [`tag=${n.tag}`] : []),
            ...(n.type ? [`type=${n.type}`] : []),
          ].join(',')
        }
        if (c.mp) {
          config.mp0 = [
            `local-lvm:subvol-${vmid}-disk-1`,
            'mp=/data',
            ...(c.mp.backup ? [`backup=${c.mp.backup}`] : []),
            ...(c.mp.mountoptions ? [`mountoptions=${c.mp.mountoptions}`] : []),
            ...(c.mp.replicate ? [c.mp.replicate] : []),
            ...(c.mp.ro ? [`ro=${c.mp.ro}`] : []),
            `size=${c.mp.size}G`,
          ].join(',')
        }
        if (c.bind) config.mp1 = ['/srv/shared', 'mp=/shared', ...(c.bind.ro ? [`ro=${c.bind.ro}`] : [])].join(',')
        const features = Object.entries(c.features).filter(([, v]) => v !== undefined)
        if (features.length > 0) config.features = features.map(([k, v]) => `${k}=${v}`).join(',')
        return config
      })

  test.prop([fc.tuple(qemuConfig(200), fc.boolean()), fc.tuple(lxcConfig(300), fc.boolean())], { numRuns: 150 })(
    'AdoptThenPlanIsEmpty over random live configs (every modelled value round-trips)',
    ([vmCfg, vmOn], [ctCfg, ctOn]) => {
      const live = inventory([liveGuest('qemu', 200, vmCfg, vmOn), liveGuest('lxc', 300, ctCfg, ctOn)])
      const p = adoptThenPlan(live)
      expect(p.actions).toEqual([])
      expect(p.anomalies).toEqual([])
      // a boot order somebody chose is adopted; the one qemu-server derived is neither adopted nor a gap
      expect(p.gaps.map((g) => g.field)).not.toContain('boot')
    },
  )

  test.prop([desiredArb], { numRuns: 60 })(
    'AdoptThenPlanIsEmpty over what PVE made of any desired set (applied on the simulator, adopted from what it shows)',
    (d) =>
      withSim(undefined, async (env) => {
        const policy = { ...DEFAULT_POLICY, nodes: ['pve1', 'pve2', 'pve3'] }
        await simApply(env, d, policy, lookup)
        const { live } = await simCycle(env, d, policy, { secrets: lookup })
        const p = adoptThenPlan(live, policy)
        expect(p.actions).toEqual([])
        expect(p.anomalies).toEqual([])
      }),
  )
})
