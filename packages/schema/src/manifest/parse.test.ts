import { describe, expect, it } from 'vitest'
import { parseManifest, type ManifestIssue } from './parse.js'
import { clone, validManifests } from '../test-support/manifests.js'
import { GiB, MiB } from '../quantity.js'
import { KINDS } from '../kinds.js'

function issues(doc: unknown): ManifestIssue[] {
  const r = parseManifest(doc)
  if (r.ok) throw new Error('expected issues, got a manifest')
  return r.issues
}
function ok(doc: unknown) {
  const r = parseManifest(doc)
  if (!r.ok) throw new Error(JSON.stringify(r.issues, null, 2))
  return r.manifest as any
}
function one(doc: unknown): [string, string] {
  const list = issues(doc)
  expect(list, JSON.stringify(list)).toHaveLength(1)
  return [list[0]!.code, list[0]!.path.join('.')]
}

describe('envelope', () => {
  it.each(KINDS)('accepts a minimal %s', (kind) => {
    expect(ok(clone(validManifests[kind])).kind).toBe(kind)
  })

  it.each([
    ['vm', 'VM'],
    ['Vm', 'VM'],
    ['templatevm', 'TemplateVM'],
    ['TVM', 'TemplateVM'],
    ['template', 'TemplateVM'],
    ['lxc', 'LXC'],
    ['TCT', 'TemplateCT'],
    ['templatect', 'TemplateCT'],
    ['iso', 'ISO'],
    ['ctt', 'CTTemplate'],
    ['CtTemplate', 'CTTemplate'],
    ['disk', 'DiskImage'],
    ['DISKIMAGE', 'DiskImage'],
  ])('kind %s is %s', (spelling, canonical) => {
    const base = clone(validManifests[canonical as keyof typeof validManifests])
    base.kind = spelling
    expect(ok(base).kind).toBe(canonical)
  })

  it('rejects an unknown kind and lists the valid set', () => {
    const m = clone(validManifests.VM)
    m.kind = 'VirtualMachine'
    const [issue] = issues(m)
    expect(issue).toMatchObject({ code: 'kind-unknown', path: ['kind'] })
    expect(issue!.message).toContain('VM, TemplateVM, LXC, TemplateCT, ISO, CTTemplate, DiskImage')
  })

  it('rejects another apiVersion', () => {
    const m = clone(validManifests.VM)
    m.apiVersion = 'proxops/v1'
    expect(one(m)).toEqual(['api-version', 'apiVersion'])
  })

  it('requires apiVersion, kind, metadata.name and spec', () => {
    expect(issues({ kind: 'VM' }).map((i) => i.code)).toContain('field-required')
    expect(issues({ apiVersion: 'proxops/v1alpha1' })[0]).toMatchObject({ code: 'field-required', path: [] })
    const m = clone(validManifests.ISO)
    delete m.metadata.name
    expect(one(m)).toEqual(['field-required', 'metadata.name'])
    delete m.spec
    expect(issues(m).map((i) => i.path.join('.'))).toContain('spec')
  })

  it('names a missing or unknown field by its full path, not its last key (the loader prefixes the others)', () => {
    const m = clone(validManifests.VM)
    delete m.spec.cpu.type
    m.spec.cpu.typo = 'host'
    m.spec.networks[0].bridge = 7
    expect(issues(m).map((i) => i.message)).toEqual(
      expect.arrayContaining([
        'missing required field "spec.cpu.type"',
        expect.stringMatching(/^unknown field "spec\.cpu\.typo": did you mean "type"\?/),
        'must be a string',
      ]),
    )
  })

  it('rejects a non-mapping document', () => {
    expect(one([1, 2])).toEqual(['yaml-not-mapping', ''])
    expect(one('VM')).toEqual(['yaml-not-mapping', ''])
  })

  it('rejects unknown fields with a suggestion', () => {
    const m = clone(validManifests.VM)
    m.spec.memroy = '1GiB'
    const [issue] = issues(m)
    expect(issue).toMatchObject({ code: 'field-unknown', path: ['spec', 'memroy'] })
    expect(issue!.message).toContain('did you mean "memory"')
  })

  it.each(['App', 'app_vm', '-app', 'app-', 'a--b', 'a'.repeat(64), ''])('rejects metadata.name %j', (name) => {
    const m = clone(validManifests.VM)
    m.metadata.name = name
    expect(one(m)).toEqual(['name-invalid', 'metadata.name'])
  })

  it('stringifies scalar labels and annotations', () => {
    const m = clone(validManifests.VM)
    m.metadata.labels = { tier: 1, on: true }
    expect(ok(m).metadata.labels).toEqual({ tier: '1', on: 'true' })
  })

  it('validates proxops annotations', () => {
    const m = clone(validManifests.VM)
    m.metadata.annotations = { 'proxops/depends-on': 'ISO:talos, ctt:debian-base,' }
    expect(ok(m).metadata.annotations['proxops/depends-on']).toBe('ISO:talos, ctt:debian-base,')
    m.metadata.annotations = { 'proxops/depends-on': 'ISO talos' }
    expect(one(m)).toEqual(['annotation-invalid', 'metadata.annotations.proxops/depends-on'])
    m.metadata.annotations = { 'proxops/depends-on': 'Widget:x' }
    expect(one(m)).toEqual(['annotation-invalid', 'metadata.annotations.proxops/depends-on'])
    m.metadata.annotations = { 'proxops/disruption': 'reboot', 'example.com/owner': 'me' }
    expect(ok(m).metadata.annotations['proxops/disruption']).toBe('reboot')
    m.metadata.annotations = { 'proxops/disruption': 'sometimes' }
    expect(one(m)).toEqual(['annotation-invalid', 'metadata.annotations.proxops/disruption'])
    m.metadata.annotations = { 'proxops/safety-snapshots': 'false' }
    expect(ok(m).metadata.annotations['proxops/safety-snapshots']).toBe('false')
    m.metadata.annotations = { 'proxops/suspend': 'incident 42: disk firmware' }
    expect(ok(m).metadata.annotations['proxops/suspend']).toBe('incident 42: disk firmware')
    m.metadata.annotations = { 'proxops/suspend': ' ' }
    expect(one(m)).toEqual(['annotation-invalid', 'metadata.annotations.proxops/suspend'])
    m.metadata.annotations = { 'proxops/prune': 'never', 'proxops/ignore-fields': 'spec.memory, spec.disks[0].size' }
    expect(ok(m).metadata.annotations['proxops/prune']).toBe('never')
    m.metadata.annotations = { 'proxops/prune': 'sometimes' }
    expect(one(m)).toEqual(['annotation-invalid', 'metadata.annotations.proxops/prune'])
    m.metadata.annotations = { 'proxops/ignore-fields': 'memory' }
    expect(one(m)).toEqual(['annotation-invalid', 'metadata.annotations.proxops/ignore-fields'])
    m.metadata.annotations = { 'proxops/safety-snapshots': 'yes' }
    expect(one(m)).toEqual(['annotation-invalid', 'metadata.annotations.proxops/safety-snapshots'])
    m.metadata.annotations = { 'proxops/depend-on': 'ISO:talos' }
    expect(one(m)).toEqual(['annotation-invalid', 'metadata.annotations.proxops/depend-on'])
  })
})

describe('VM', () => {
  it('normalises and applies defaults', () => {
    const vm = ok(validManifests.VM)
    expect(vm.spec).toMatchObject({
      state: 'started',
      memory: 2048,
      'pve-name': 'app-vm',
      tags: [],
      extra: {},
      disks: [{ storage: 'local-lvm', size: 32 * GiB, interface: 'scsi0', iothread: false }],
      networks: [{ model: 'virtio', bridge: 'vmbr0', firewall: false, slot: 'net0' }],
    })
    expect(vm.spec.disks[0].ssd).toBeUndefined()
  })

  it.each([
    ['8G', 'quantity-not-whole-mib'],
    [2048, 'quantity-not-whole-mib'],
    ['lots', 'quantity-invalid'],
    ['1.5GiB', 'quantity-invalid'],
    [true, 'field-type'],
    ['0', 'quantity-range'],
  ])('memory %j -> %s', (memory, code) => {
    const m = clone(validManifests.VM)
    m.spec.memory = memory
    expect(one(m)).toEqual([code, 'spec.memory'])
  })

  it('accepts memory in any binary form', () => {
    const m = clone(validManifests.VM)
    for (const [memory, mib] of [
      ['8GiB', 8192],
      ['8Gi', 8192],
      ['8192MiB', 8192],
      [`${8 * GiB}`, 8192],
      [GiB, 1024],
      ['1048576KiB', 1024],
    ] as const) {
      m.spec.memory = memory
      expect(ok(m).spec.memory).toBe(mib)
    }
  })

  it.each([
    [0, 'vmid-range'],
    [99, 'vmid-range'],
    [1e9, 'vmid-range'],
    [100.5, 'field-type'],
    ['100', 'field-type'],
  ])('vmid %j -> %s', (vmid, code) => {
    const m = clone(validManifests.VM)
    m.spec.vmid = vmid
    expect(one(m)).toEqual([code, 'spec.vmid'])
  })

  it('state: started, stopped, else state-invalid', () => {
    const m = clone(validManifests.VM)
    m.spec.state = 'stopped'
    expect(ok(m).spec.state).toBe('stopped')
    m.spec.state = 'running'
    expect(one(m)).toEqual(['state-invalid', 'spec.state'])
  })

  it('TemplateVM defaults to stopped and refuses started', () => {
    const m = clone(validManifests.TemplateVM)
    expect(ok(m).spec.state).toBe('stopped')
    m.spec.state = 'started'
    expect(one(m)).toEqual(['template-state', 'spec.state'])
  })

  it('disk rules', () => {
    const m = clone(validManifests.VM)
    m.spec.disks = [{ storage: 'local-lvm' }]
    expect(one(m)).toEqual(['disk-size-missing', 'spec.disks.0'])
    m.spec.disks = [{ storage: 'local-lvm', size: '8GiB', image: 'debian' }]
    expect(one(m)).toEqual(['disk-size-with-image', 'spec.disks.0.size'])
    m.spec.disks = [{ storage: 'local-lvm', image: 'debian-13-cloud' }]
    expect(ok(m).spec.disks[0]).toMatchObject({ image: 'debian-13-cloud', interface: 'scsi0' })
    m.spec.disks = [{ storage: 'local-lvm', size: '8GiB', interface: 'usb0' }]
    expect(one(m)).toEqual(['disk-interface-invalid', 'spec.disks.0.interface'])
    m.spec.disks = [{ storage: 'local-lvm', size: '8GiB', interface: 'ide4' }]
    expect(one(m)).toEqual(['disk-interface-invalid', 'spec.disks.0.interface'])
    // PVE::QemuServer::Drive knows ide, sata, scsi and virtio only: an nvme slot would fail the create
    m.spec.disks = [{ storage: 'local-lvm', size: '8GiB', interface: 'nvme0' }]
    expect(one(m)).toEqual(['disk-interface-invalid', 'spec.disks.0.interface'])
    m.spec.disks = [
      { storage: 'local-lvm', size: '8GiB' },
      { storage: 'local-lvm', size: '8GiB', interface: 'scsi0' },
    ]
    expect(one(m)).toEqual(['slot-duplicate', 'spec.disks.1.interface'])
    m.spec.disks = [{ storage: 'local-lvm', size: '8GiB', interface: 'virtio0', ssd: true }]
    expect(one(m)).toEqual(['ssd-bus', 'spec.disks.0.ssd'])
    m.spec.disks = [
      {
        storage: 'local-lvm',
        size: '8GiB',
        interface: 'sata0',
        ssd: false,
        discard: 'On',
        aio: 'io_uring',
        iothread: true,
      },
    ]
    expect(one(m)).toEqual(['iothread-bus', 'spec.disks.0.iothread'])
    m.spec.disks = [
      { storage: 'local-lvm', size: '8GiB', interface: 'sata0', ssd: false, discard: 'On', aio: 'io_uring' },
    ]
    expect(ok(m).spec.disks[0]).toMatchObject({ ssd: false, discard: 'on', aio: 'io_uring', iothread: false })
    m.spec.disks = [{ storage: 'local-lvm', size: '32G' }]
    expect(one(m)).toEqual(['quantity-not-whole-mib', 'spec.disks.0.size'])
    m.spec.disks = [{ storage: 'bad storage', size: '8GiB' }]
    expect(one(m)).toEqual(['storage-id-invalid', 'spec.disks.0.storage'])
    m.spec.disks = []
    expect(one(m)).toEqual(['disks-required', 'spec'])
  })

  it('the CD and cloud-init drives own their IDE slots', () => {
    const m = clone(validManifests.VM)
    m.spec.hardware = { cdrom: { iso: 'talos' } }
    m.spec.disks = [{ storage: 'local-lvm', size: '8GiB', interface: 'ide2' }]
    expect(one(m)).toEqual(['slot-duplicate', 'spec.disks.0.interface'])
    m.spec.hardware = { cdrom: { iso: 'talos' }, 'cloud-init': { enabled: true, storage: 'local-lvm' } }
    m.spec.disks = [{ storage: 'local-lvm', size: '8GiB', interface: 'ide3' }]
    expect(one(m)).toEqual(['slot-duplicate', 'spec.disks.0.interface'])
  })

  it('an ISO attaches as a CD only (qemu-server: explicit media=cdrom is required for iso images)', () => {
    const m = clone(validManifests.VM)
    m.spec.hardware = { cdrom: { iso: 'talos', media: 'disk' } }
    expect(one(m)).toEqual(['field-invalid', 'spec.hardware.cdrom.media'])
    m.spec.hardware = { cdrom: { iso: 'none', media: 'disk' } }
    expect(ok(m).spec.hardware?.cdrom).toEqual({ iso: 'none', media: 'disk' })
  })

  it('clone rules', () => {
    const m = clone(validManifests.VM)
    m.spec.clone = 'alma-tpl'
    expect(one(m)).toEqual(['clone-with-disks', 'spec.disks'])
    m.spec.disks = []
    expect(ok(m).spec.clone).toBe('alma-tpl')
    const t = clone(validManifests.TemplateVM)
    t.spec.clone = 'other'
    t.spec.disks = []
    expect(one(t)).toEqual(['field-invalid', 'spec.clone'])
  })

  it('LXC clone rules: a TemplateCT instead of a CTTemplate, no mount points; not on a TemplateCT', () => {
    const m = clone(validManifests.LXC)
    m.spec.clone = 'debian-tpl'
    expect(one(m)).toEqual(['clone-with-template', 'spec.template'])
    delete m.spec.template
    const parsed = ok(m).spec
    expect([parsed.clone, parsed.template]).toEqual(['debian-tpl', undefined])
    m.spec['mount-points'] = [{ storage: 'local-lvm', size: '1GiB' }]
    expect(one(m)).toEqual(['clone-with-disks', 'spec.mount-points'])
    m.spec['mount-points'] = []
    m.spec['bind-mounts'] = [{ 'host-path': '/srv/data', 'mount-point': '/data' }]
    expect(one(m)).toEqual(['clone-with-disks', 'spec.bind-mounts'])
    const plain = clone(validManifests.LXC)
    delete plain.spec.template
    expect(one(plain)).toEqual(['field-required', 'spec.template'])
    const t = clone(validManifests.TemplateCT)
    t.spec.clone = 'other'
    delete t.spec.template
    expect(one(t)).toEqual(['field-invalid', 'spec.clone'])
  })

  it('NIC rules', () => {
    const m = clone(validManifests.VM)
    m.spec.networks = [{ bridge: 'vmbr0', mac: 'BC:24:11:AA:BB:CC', vlan: 100, 'rate-limit': 500, firewall: true }]
    expect(ok(m).spec.networks[0]).toMatchObject({ mac: 'bc:24:11:aa:bb:cc', vlan: 100, slot: 'net0', model: 'virtio' })
    m.spec.networks = [{ bridge: 'vmbr0', vlan: 0 }]
    expect(one(m)).toEqual(['field-invalid', 'spec.networks.0.vlan'])
    // PVE's rate= is megabytes per second as a floating point number: 100 Mbit/s is 12.5
    m.spec.networks = [{ bridge: 'vmbr0', 'rate-limit': 12.5 }]
    expect(ok(m).spec.networks[0]?.['rate-limit']).toBe(12.5)
    m.spec.networks = [{ bridge: 'vmbr0', 'rate-limit': -0.5 }]
    expect(one(m)).toEqual(['field-invalid', 'spec.networks.0.rate-limit'])
    m.spec.networks = [{ bridge: 'vmbr0', 'rate-limit': '12.5' }]
    expect(one(m)).toEqual(['field-type', 'spec.networks.0.rate-limit'])
    m.spec.networks = [{ bridge: 'vmbr0', mac: 'nope' }]
    expect(one(m)).toEqual(['field-invalid', 'spec.networks.0.mac'])
    m.spec.networks = [{ bridge: 'vmbr0' }, { bridge: 'vmbr1', slot: 'net0' }]
    expect(one(m)).toEqual(['slot-duplicate', 'spec.networks.1.slot'])
    m.spec.networks = [{ bridge: 'vmbr0', slot: 'eth0' }]
    expect(one(m)).toEqual(['slot-invalid', 'spec.networks.0.slot'])
    m.spec.networks = [{ bridge: '' }]
    expect(one(m)).toEqual(['field-invalid', 'spec.networks.0.bridge'])
  })

  it('slot messages name the form and the entry already using a slot, for NICs and mount points alike', () => {
    const ct = clone(validManifests.LXC)
    ct.spec.networks = [{ bridge: 'vmbr0' }, { bridge: 'vmbr1', slot: 'net0' }, { bridge: 'vmbr2', slot: 'net32' }]
    ct.spec['mount-points'] = [{ storage: 'local-lvm', size: '1GiB', 'mount-point': 'data' }]
    ct.spec['bind-mounts'] = [{ 'host-path': '/srv/x', 'mount-point': '/x', slot: 'mp0' }]
    expect(issues(ct).map((i) => i.message)).toEqual([
      'slot net0 is already used by spec.networks[0]',
      'slot "net32" must be netN (N 0-31)',
      'mount-point "data" must be an absolute path',
      'slot mp0 is already used by spec.mount-points[0]',
    ])
  })

  it('hardware rules and defaults', () => {
    const m = clone(validManifests.VM)
    m.spec.hardware = {
      machine: 'q35',
      bios: 'ovmf',
      'efi-disk': { storage: 'local-lvm', template: '4m' },
      tpm: {},
      'cloud-init': { enabled: true, storage: 'local-lvm' },
      cdrom: { iso: 'none' },
      'pci-devices': [
        { slot: 'hostpci1', device: '0000:18:00' },
        { slot: 'hostpci0', device: '0000:17:00.1', pcie: true },
      ],
    }
    const hw = ok(m).spec.hardware
    expect(hw['efi-disk']).toEqual({ storage: 'local-lvm', size: 4 * MiB, template: '4m' })
    // absent version: not owned (the planner creates v2.0)
    expect(hw.tpm).toEqual({})
    expect(hw['cloud-init']).toEqual({ enabled: true, storage: 'local-lvm', size: '4M' })
    expect(hw.cdrom).toEqual({ iso: 'none', media: 'cdrom' })
    expect(hw['pci-devices'].map((d: { slot: string }) => d.slot)).toEqual(['hostpci0', 'hostpci1'])

    m.spec.hardware = { 'cloud-init': { enabled: true } }
    expect(one(m)).toEqual(['field-required', 'spec.hardware.cloud-init'])
    m.spec.hardware = { machine: 'pc' }
    expect(one(m)).toEqual(['field-invalid', 'spec.hardware.machine'])
    m.spec.hardware = { cdrom: { iso: 'Talos ISO' } }
    expect(one(m)).toEqual(['name-invalid', 'spec.hardware.cdrom.iso'])
    m.spec.hardware = { 'pci-devices': [{ slot: 'hostpci1000', device: '01:00.0' }] }
    expect(one(m)).toEqual(['slot-invalid', 'spec.hardware.pci-devices.0.slot'])
    m.spec.hardware = { 'pci-devices': [{ slot: 'hostpci0', device: 'gpu' }] }
    expect(one(m)).toEqual(['pci-device-invalid', 'spec.hardware.pci-devices.0.device'])
    m.spec.hardware = {
      'pci-devices': [
        { slot: 'hostpci0', device: '01:00.0' },
        { slot: 'hostpci0', device: '02:00.0' },
      ],
    }
    expect(one(m)).toEqual(['slot-duplicate', 'spec.hardware.pci-devices.1.slot'])
    m.spec.hardware = { 'cloud-init': { enabled: true, storage: 'local-lvm', size: 'big' } }
    expect(one(m)).toEqual(['quantity-invalid', 'spec.hardware.cloud-init.size'])
  })

  it('options: boot-order unique', () => {
    const m = clone(validManifests.VM)
    m.spec.options = { 'boot-order': ['scsi0', 'net0', 'scsi0'] }
    expect(one(m)).toEqual(['value-duplicate', 'spec.options.boot-order.2'])
  })

  it('cloud-init data rules', () => {
    const m = clone(validManifests.VM)
    const ci = (data: unknown) => ({
      ...clone(validManifests.VM),
      spec: { ...clone(validManifests.VM).spec, 'cloud-init-data': data },
    })
    expect(ok(ci({ 'ssh-keys': ['*'] })).spec['cloud-init-data']['ssh-keys']).toEqual(['*'])
    expect(one(ci({ 'ssh-keys': ['*', 'ssh-ed25519 AAAA x'] }))).toEqual([
      'ssh-keys-conflict',
      'spec.cloud-init-data.ssh-keys',
    ])
    expect(one(ci({ 'ssh-keys': ['ssh-ed25519 AAAA x'], 'ssh-key-refs': ['cloud-init.ssh-keys.main'] }))).toEqual([
      'ssh-keys-conflict',
      'spec.cloud-init-data.ssh-key-refs',
    ])
    expect(one(ci({ 'ssh-key-refs': ['secrets.main'] }))).toEqual([
      'ref-invalid',
      'spec.cloud-init-data.ssh-key-refs.0',
    ])
    expect(one(ci({ 'ssh-key-refs': ['cloud-init.ssh-keys.Main.Key'] }))).toEqual([
      'ref-invalid',
      'spec.cloud-init-data.ssh-key-refs.0',
    ])
    expect(one(ci({ 'ci-password-ref': 'cloud-init.passwords.' }))).toEqual([
      'ref-invalid',
      'spec.cloud-init-data.ci-password-ref',
    ])
    expect(ok(ci({ 'ci-password-ref': 'cloud-init.passwords.default' })).kind).toBe('VM')
    expect(one(ci({ ipconfigs: [{ ip: '10.0.0.5' }] }))).toEqual([
      'ipconfig-invalid',
      'spec.cloud-init-data.ipconfigs.0.ip',
    ])
    expect(one(ci({ ipconfigs: [{ ip: '10.0.0.5/24', gateway: 'router' }] }))).toEqual([
      'ipconfig-invalid',
      'spec.cloud-init-data.ipconfigs.0.gateway',
    ])
    expect(one(ci({ ipconfigs: [{ gateway: '10.0.0.1' }] }))).toEqual([
      'ipconfig-invalid',
      'spec.cloud-init-data.ipconfigs.0.gateway',
    ])
    expect(one(ci({ ipconfigs: [{ ip: '10.0.0.5/24' }, { nic: 0, ip: '10.0.0.6/24' }] }))).toEqual([
      'slot-duplicate',
      'spec.cloud-init-data.ipconfigs.1.nic',
    ])
    expect(
      ok(
        ci({
          ipconfigs: [
            { ip: '10.0.0.5/24', gateway: '10.0.0.1' },
            { nic: 1, ip: 'fd00::5/64' },
          ],
        }),
      ).spec['cloud-init-data'].ipconfigs[0].nic,
    ).toBe(0)
    void m
  })

  it('spec.extra: reserved keys, key shape, stringified values', () => {
    const m = clone(validManifests.VM)
    m.spec.extra = { args: '-cpu host', balloon: 0, kvm: true }
    expect(ok(m).spec.extra).toEqual({ args: '-cpu host', balloon: '0', kvm: 'true' })
    for (const key of [
      'scsi1',
      'net2',
      'ipconfig1',
      'ide0',
      'sata3',
      'virtio4',
      'efidisk0',
      'tpmstate0',
      'unused0',
      'lock',
      'tags',
      'Memory',
      'hostpci2',
      'scsihw',
      'template',
      'cipassword',
    ]) {
      m.spec.extra = { [key]: 'x' }
      expect(one(m), key).toEqual(['extra-reserved-key', `spec.extra.${key}`])
    }
    m.spec.extra = { 'bad key': 'x' }
    expect(one(m)).toEqual(['extra-key-invalid', 'spec.extra.bad key'])
    m.spec.extra = { virtiofs0: 'share,cache=auto' }
    expect(ok(m).spec.extra.virtiofs0).toBe('share,cache=auto')
  })

  it('tags follow the PVE tag rule, are de-duplicated, and may not be an ownership marker', () => {
    const m = clone(validManifests.VM)
    m.spec.tags = ['web', 'prod', 'web']
    expect(ok(m).spec.tags).toEqual(['web', 'prod'])
    for (const bad of ['', 'two words', 'a;b', 'a,b', 'x'.repeat(257), '-lead', 'proxops.other', 'ProxOps.a']) {
      m.spec.tags = [bad]
      expect(one(m), bad).toEqual(['tag-invalid', 'spec.tags.0'])
    }
  })

  it('pve-name must be a DNS name', () => {
    const m = clone(validManifests.VM)
    m.spec['pve-name'] = 'App.Example'
    expect(ok(m).spec['pve-name']).toBe('App.Example')
    m.spec['pve-name'] = 'app vm'
    expect(one(m)).toEqual(['field-invalid', 'spec.pve-name'])
  })

  it('node names', () => {
    const m = clone(validManifests.VM)
    for (const bad of ['', 'pve/1', 'pve 1', 'x'.repeat(65)]) {
      m.spec.node = bad
      expect(one(m), bad).toEqual(['node-name-invalid', 'spec.node'])
    }
  })
})

describe('LXC', () => {
  it('normalises and applies defaults', () => {
    const ct = ok(validManifests.LXC)
    expect(ct.spec).toMatchObject({
      state: 'started',
      memory: 512,
      root: { storage: 'local-lvm', size: 8 * GiB },
      dns: { hostname: 'cache-01' },
      networks: [{ bridge: 'vmbr0', slot: 'net0', firewall: false }],
      'mount-points': [],
      'bind-mounts': [],
    })
    expect(ct.spec.swap).toBeUndefined()
    expect(ct.spec.networks[0].iface).toBeUndefined()
  })

  it('swap may be 0 and must be whole MiB', () => {
    const m = clone(validManifests.LXC)
    m.spec.swap = '0'
    expect(ok(m).spec.swap).toBe(0)
    m.spec.swap = '1G'
    expect(one(m)).toEqual(['quantity-not-whole-mib', 'spec.swap'])
  })

  it('mount point and bind mount slots share the mpN namespace', () => {
    const m = clone(validManifests.LXC)
    m.spec['mount-points'] = [
      {
        storage: 'local-lvm',
        size: '8GiB',
        'mount-point': '/data',
        options: { backup: false, 'mount-options': 'noatime' },
      },
    ]
    m.spec['bind-mounts'] = [{ 'host-path': '/srv/media/', 'mount-point': '/media', 'read-only': true }]
    const spec = ok(m).spec
    expect(spec['mount-points'][0]).toMatchObject({ slot: 'mp0', size: 8 * GiB })
    expect(spec['bind-mounts'][0]).toMatchObject({ slot: 'mp1' })
    m.spec['bind-mounts'] = [{ 'host-path': '/srv/media', 'mount-point': '/media', slot: 'mp0' }]
    expect(one(m)).toEqual(['slot-duplicate', 'spec.bind-mounts.0.slot'])
  })

  it.each(['/', '/etc', '/etc/', '/usr', '/var/', 'data', '/srv/../etc'])('refuses bind host-path %j', (host) => {
    const m = clone(validManifests.LXC)
    m.spec['bind-mounts'] = [{ 'host-path': host, 'mount-point': '/m' }]
    expect(one(m)).toEqual(['bind-mount-host-path', 'spec.bind-mounts.0.host-path'])
  })

  it('guest paths must be absolute', () => {
    const m = clone(validManifests.LXC)
    m.spec['mount-points'] = [{ storage: 'local-lvm', size: '1GiB', 'mount-point': 'data' }]
    expect(one(m)).toEqual(['path-not-absolute', 'spec.mount-points.0.mount-point'])
  })

  it('NIC ip forms and tag range', () => {
    const m = clone(validManifests.LXC)
    m.spec.networks = [
      { bridge: 'vmbr0', ip: 'dhcp' },
      { bridge: 'vmbr1', ip: '10.0.0.2/24', gw: '10.0.0.1', tag: 0, hwaddr: 'BC:24:11:00:00:01' },
    ]
    expect(ok(m).spec.networks[1]).toMatchObject({ slot: 'net1', hwaddr: 'bc:24:11:00:00:01' })
    m.spec.networks = [{ bridge: 'vmbr0', ip: '10.0.0.2' }]
    expect(one(m)).toEqual(['field-invalid', 'spec.networks.0.ip'])
    m.spec.networks = [{ bridge: 'vmbr0', tag: 4095 }]
    expect(one(m)).toEqual(['field-invalid', 'spec.networks.0.tag'])
  })

  it('TemplateCT defaults to stopped, refuses started, still needs template', () => {
    const m = clone(validManifests.TemplateCT)
    expect(ok(m).spec.state).toBe('stopped')
    m.spec.state = 'started'
    expect(one(m)).toEqual(['template-state', 'spec.state'])
    delete m.spec.template
    m.spec.state = 'stopped'
    expect(one(m)).toEqual(['field-required', 'spec.template'])
  })

  it('spec.extra reserved keys for containers', () => {
    const m = clone(validManifests.LXC)
    for (const key of ['rootfs', 'mp0', 'net1', 'unused3', 'lock', 'features', 'password', 'hostname', 'tags']) {
      m.spec.extra = { [key]: 'x' }
      expect(one(m), key).toEqual(['extra-reserved-key', `spec.extra.${key}`])
    }
    m.spec.extra = { cmode: 'shell', dev0: '/dev/dri/renderD128' }
    expect(ok(m).spec.extra.cmode).toBe('shell')
  })
})

describe('artifacts', () => {
  it('promotes legacy node and de-duplicates nodes', () => {
    const m = clone(validManifests.ISO)
    delete m.spec.nodes
    m.spec.node = 'pve2'
    expect(ok(m).spec).toEqual({
      nodes: ['pve2'],
      storage: 'local',
      filename: 'talos.iso',
      url: 'https://downloads.example.invalid/talos.iso',
    })
    m.spec.nodes = ['pve1', 'pve3', 'pve1']
    expect(ok(m).spec.nodes).toEqual(['pve1', 'pve3'])
    delete m.spec.node
    m.spec.nodes = []
    expect(one(m)).toEqual(['field-required', 'spec'])
  })

  it.each([
    ['ISO', 'talos.iso', true],
    ['ISO', 'talos.IMG', true],
    ['ISO', 'talos.qcow2', false],
    ['CTTemplate', 'debian.tar.zst', true],
    ['CTTemplate', 'debian.tar.gz', true],
    ['CTTemplate', 'debian.tgz', false],
    ['DiskImage', 'd.qcow2', true],
    ['DiskImage', 'd.raw', true],
    ['DiskImage', 'd.vmdk', true],
    ['DiskImage', 'd.img', false],
    ['DiskImage', 'd.qcow', false],
    ['DiskImage', 'd.iso', false],
  ] as const)('%s filename %s allowed: %s', (kind, filename, allowed) => {
    const m = clone(validManifests[kind])
    m.spec.filename = filename
    if (allowed) ok(m)
    else expect(one(m)).toEqual(['filename-extension', 'spec.filename'])
  })

  it.each(['../x.iso', 'a/b.iso', '.hidden.iso', ' x.iso'])('filename %j is invalid', (filename) => {
    const m = clone(validManifests.ISO)
    m.spec.filename = filename
    expect(one(m)).toEqual(['filename-invalid', 'spec.filename'])
  })

  it('url and checksum', () => {
    const m = clone(validManifests.ISO)
    m.spec.url = 'ftp://x/y.iso'
    expect(one(m)).toEqual(['url-invalid', 'spec.url'])
    m.spec.url = 'http://mirror.example.invalid/y.iso'
    ok(m)
    m.spec.checksum = { algorithm: 'SHA256' }
    expect(one(m)).toEqual(['checksum-incomplete', 'spec.checksum'])
    m.spec.checksum = { algorithm: 'SHA256', value: 'ABC' }
    expect(one(m)).toEqual(['field-invalid', 'spec.checksum.value'])
    m.spec.checksum = { algorithm: 'SHA256', value: 'A'.repeat(64) }
    expect(ok(m).spec.checksum).toEqual({ algorithm: 'sha256', value: 'a'.repeat(64) })
    m.spec.checksum = { algorithm: 'crc32', value: 'ab' }
    expect(issues(m)[0]).toMatchObject({ code: 'field-invalid', path: ['spec', 'checksum', 'algorithm'] })
  })
})
