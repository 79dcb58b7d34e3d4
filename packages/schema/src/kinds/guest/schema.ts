/**
 * valibot schemas of the guest kinds (VM, TemplateVM, LXC, TemplateCT). They check shapes, types and
 * single-field rules and convert quantities; finalise.ts then applies the cross-field rules and context defaults.
 */
import * as v from 'valibot'
import { issueMessage as m } from '../../errors.js'
import {
  bool,
  diskBytes,
  decimal,
  int,
  list,
  memoryMiB,
  nodeName,
  nonEmptyStr,
  obj,
  oneOf,
  oneOfIgnoreCase,
  POOL_ID,
  resourceName,
  scalarString,
  storageId,
  str,
  stringList,
  tag,
  verbatimQuantity,
} from '../../manifest/fields.js'
import { firewallSchema } from './firewall.js'
import { haSchema } from './ha.js'

const vmid = int(
  'PVE guest id, unique per node within the cluster (shared by VMs and containers).',
  100,
  999_999_999,
  'vmid-range',
)
const node = nodeName(
  'PVE node the guest lives on; must be in the cluster `nodes` allowlist. A guest found on another allowlisted node is migrated here (changing it moves the guest; see docs/safety.md, Migration); a guest HA manages through `spec.ha` stays where HA placed it, and this is its preferred node; a template is never moved.',
)
const tags = v.optional(list(tag, 'PVE tags; the ownership tag `proxops` is always added.'), [])
const extra = (family: string) =>
  v.optional(
    v.pipe(
      v.record(v.string(), scalarString, m('field-type', 'must be a mapping of PVE keys to values')),
      v.description(
        `PVE ${family} parameters sent verbatim at create. Keys managed by structured fields, drive/NIC/mount-point keys, \`unusedN\`, \`lock\` and \`tags\` are rejected.`,
      ),
    ),
    {},
  )
const state = (def: 'started' | 'stopped', description: string) =>
  v.optional(
    v.pipe(
      v.picklist(['started', 'stopped'], m('state-invalid', 'state must be "started" or "stopped"')),
      v.description(description),
    ),
    def,
  )

/** `spec.pool` of guests */
const poolRef = v.pipe(
  v.string(m('field-type', 'must be a string')),
  v.description(
    'PVE pool the guest is a member of: set with `pool=` at create/clone, else through the pools API. A Pool of the same id in this cluster is created first; absent = membership not owned.',
  ),
  v.regex(POOL_ID, m('field-invalid', 'must be a PVE pool id (up to three "/"-separated levels)')),
)

// no regex flags here: JSON Schema patterns carry none, and editors must accept what validate accepts
const MAC = /^[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){5}$/
const mac = (description: string) =>
  v.pipe(
    v.string(m('field-type', 'must be a string')),
    v.description(description),
    v.regex(MAC, m('field-invalid', 'must be a MAC address like "bc:24:11:00:00:01"')),
    v.transform((s) => s.toLowerCase()),
  )

/** a NIC's `rate=`: qemu-server and pve-container read it as megabytes per second, a floating point number */
const rateLimit = decimal(
  "Rate limit in megabytes per second, sent as PVE's `rate=` (MB/s, not Mbit/s: 100 Mbit/s is 12.5).",
  0,
)

// ---------------------------------------------------------------- VM

export const vmDiskSchema = obj(
  {
    storage: storageId('Storage pool the volume is allocated on (the token before ":").'),
    size: v.optional(
      diskBytes('Disk size (e.g. "32GiB"); a whole number of MiB. Must be omitted when `image` is set.'),
    ),
    image: v.optional(
      resourceName(
        'Name of a DiskImage in the same cluster that seeds this disk (import-from); the size then comes from the image.',
      ),
    ),
    interface: v.optional(
      str('Drive slot: scsiN, virtioN, sataN or ideN. Default `scsi<i>` (i = list index). Unique.'),
    ),
    controller: v.optional(
      str('VM-wide SCSI controller (`scsihw`, e.g. `virtio-scsi-single`); the first disk declaring one wins.'),
    ),
    iothread: v.optional(bool('`iothread=1`.'), false),
    discard: v.optional(oneOfIgnoreCase(['ignore', 'on'], '`discard=`; absent = not owned.')),
    ssd: v.optional(bool('Tri-state `ssd=1|0`; only on scsi, sata and ide slots; absent = not owned.')),
    aio: v.optional(oneOf(['native', 'threads', 'io_uring'], '`aio=`; absent = not owned.')),
  },
  'One drive slot.',
)

export const vmNicSchema = obj(
  {
    model: v.optional(nonEmptyStr('NIC model (virtio, e1000, rtl8139, vmxnet3, ...).'), 'virtio'),
    bridge: nonEmptyStr('Bridge, e.g. `vmbr0`.'),
    mac: v.optional(mac('Pinned MAC address; absent = PVE assigns one and it is never compared.')),
    vlan: v.optional(int('VLAN tag (sent as `tag=`).', 1, 4094)),
    'rate-limit': v.optional(rateLimit),
    firewall: v.optional(bool('`firewall=1`.'), false),
    slot: v.optional(str('`netN` key; default `net<i>` (i = list index). Unique.')),
  },
  'One network interface.',
)

/** A host PCI address, `domain:bus:device[.fn]` with PVE's optional domain (`01:00.0`), as qemu-server's hostpci `host` accepts. */
const BDF = /^(?:[0-9a-f]{2,5}:)?[0-9a-f]{2}:[0-9a-f]{2}(?:\.[0-7])?$/
export const pciDeviceSchema = obj(
  {
    slot: v.pipe(
      v.string(m('field-type', 'must be a string')),
      v.description('`hostpciN` key, N from 0 to 999. Unique.'),
      v.regex(/^hostpci[0-9]{1,3}$/, m('slot-invalid', 'slot must be hostpci0 .. hostpci999')),
    ),
    device: v.pipe(
      v.string(m('field-type', 'must be a string')),
      v.description('Host PCI address (`0000:17:00`, `01:00.0`), case-insensitive.'),
      v.transform((s) => s.trim().toLowerCase()),
      v.regex(BDF, m('pci-device-invalid', 'device must be a PCI address like "0000:17:00" or "01:00.0"')),
    ),
    pcie: v.optional(bool('Tri-state `pcie=1|0`; absent = not owned.')),
  },
  'One PCI passthrough device.',
)

export const vmHardwareSchema = obj(
  {
    machine: v.optional(oneOf(['i440fx', 'q35'], 'Machine type; absent = not owned (PVE default i440fx).')),
    bios: v.optional(oneOf(['seabios', 'ovmf'], 'Firmware; absent = not owned.')),
    display: v.optional(str('PVE `vga` (e.g. `std`, `serial0`).')),
    sockets: v.optional(int('CPU sockets.', 1)),
    numa: v.optional(bool('`numa=1`.')),
    serial0: v.optional(str('PVE `serial0` (e.g. `socket`).')),
    cdrom: v.optional(
      obj(
        {
          iso: str('Name of an ISO in the same cluster to attach, or `none` to keep the drive empty.'),
          media: v.optional(oneOf(['cdrom', 'disk'], '`media=`; PVE attaches an ISO only as `cdrom`.'), 'cdrom'),
        },
        'CD/DVD drive (ide2, or ide3 when cloud-init is enabled). Absent = the slot is not owned.',
      ),
    ),
    'efi-disk': v.optional(
      obj(
        {
          storage: storageId('Storage for the EFI vars disk.'),
          size: v.optional(diskBytes('EFI disk size.'), '4MiB'),
          template: v.optional(oneOf(['byos', '2m', '4m', '8m'], '`efitype=`; absent = not owned.')),
          'secure-boot': v.optional(oneOf(['enabled', 'disabled'], '`pre-enrolled-keys=1|0`; absent = not owned.')),
        },
        'EFI vars disk (`efidisk0`); use with `bios: ovmf`.',
      ),
    ),
    'cloud-init': v.optional(
      obj(
        {
          enabled: v.optional(bool('Attach a cloud-init drive on ide2.'), false),
          storage: v.optional(
            storageId('Storage for the cloud-init drive (needs `images` content); required when enabled.'),
          ),
          size: v.optional(
            verbatimQuantity(
              'Not sent: qemu-server allocates every cloud-init drive with 4 MiB (CLOUDINIT_DISK_SIZE).',
            ),
            '4M',
          ),
        },
        'Cloud-init drive.',
      ),
    ),
    tpm: v.optional(
      obj(
        {
          version: v.optional(
            oneOf(
              ['v1.2', 'v2.0'],
              'TPM version, chosen at creation only. Absent: a new TPM state is created as `v2.0` and an existing one keeps its version (not owned).',
            ),
          ),
        },
        'TPM state (`tpmstate0`).',
      ),
    ),
    'pci-devices': v.optional(list(pciDeviceSchema, 'PCI passthrough devices (`hostpciN`).'), []),
  },
  'Hardware settings; absent fields are not owned.',
)

export const vmOptionsSchema = obj(
  {
    onboot: v.optional(bool('`onboot=1` when true.')),
    startup: v.optional(str('`startup=` (e.g. `order=10`).')),
    protection: v.optional(bool('`protection=1` when true.')),
    agent: v.optional(bool('`agent=1` when true.')),
    acpi: v.optional(bool('`acpi=1` when true.')),
    tablet: v.optional(bool('`tablet=1` when true.')),
    hotplug: v.optional(stringList('`hotplug=` items (disk, network, usb, ...).')),
    'boot-order': v.optional(stringList('`boot=order=a;b`: slot names, non-empty and unique.')),
    'nested-virt': v.optional(bool('`nestedvirt=1` when true.')),
    hidden: v.optional(bool('`hidden=1` when true.')),
  },
  'VM options; only true/non-empty values are owned.',
)

export const ipConfigSchema = obj(
  {
    nic: v.optional(int('NIC index (ipconfigN).', 0, 31), 0),
    ip: v.optional(str('Static address in CIDR form (e.g. `192.168.1.10/24`); absent = not owned.')),
    gateway: v.optional(str('Gateway address; requires `ip`.')),
  },
  'One ipconfigN entry.',
)

export const cloudInitDataSchema = obj(
  {
    'ci-user': v.optional(str('`ciuser`.')),
    'ssh-keys': v.optional(
      stringList('Inline public keys (`sshkeys`); `["*"]` leaves the value to PVE. Not with `ssh-key-refs`.'),
    ),
    'ssh-key-refs': v.optional(stringList('`cloud-init.ssh-keys.<name>` references into the cluster SOPS document.')),
    'ci-password-ref': v.optional(str('`cloud-init.passwords.<name>` reference into the cluster SOPS document.')),
    nameservers: v.optional(stringList('`nameserver` entries.')),
    'search-domains': v.optional(stringList('`searchdomain` entries.')),
    ipconfigs: v.optional(list(ipConfigSchema, 'Static IP configuration per NIC.')),
  },
  'Cloud-init data; a key is owned only when non-empty.',
)

const vmSpecEntries = (template: boolean) => ({
  node,
  vmid,
  state: template
    ? state('stopped', 'Templates are always stopped; `started` is rejected.')
    : state('started', 'Power state: `started` or `stopped`.'),
  memory: memoryMiB('Memory (e.g. "4GiB"); a whole number of MiB.'),
  cpu: obj(
    {
      type: nonEmptyStr('PVE `cpu` type (e.g. `host`).'),
      cores: int('`cores`.', 1),
      flags: v.optional(stringList('CPU flags (parsed, not sent).')),
    },
    'CPU.',
  ),
  disks: v.optional(list(vmDiskSchema, 'Drives; at least one unless `clone` is set, none when it is.'), []),
  networks: v.optional(list(vmNicSchema, 'Network interfaces (`netN`).'), []),
  hardware: v.optional(vmHardwareSchema),
  options: v.optional(vmOptionsSchema),
  'cloud-init-data': v.optional(cloudInitDataSchema),
  'pve-name': v.optional(str('PVE `name`; default `metadata.name`.')),
  'pve-description': v.optional(str('PVE `description`.')),
  tags,
  extra: extra('qemu'),
  clone: v.optional(
    resourceName(
      template
        ? 'Rejected on a TemplateVM: only a VM is cloned from a template.'
        : 'Name of a TemplateVM to full-clone from, on the node the VM is created on; then `disks` must be empty.',
    ),
  ),
  firewall: v.optional(firewallSchema),
  ha: v.optional(haSchema),
  pool: v.optional(poolRef),
})

export const vmSpecSchema = obj(vmSpecEntries(false), 'VM spec.')
export const templateVmSpecSchema = obj(vmSpecEntries(true), 'TemplateVM spec (same fields as VM).')

// ---------------------------------------------------------------- LXC

export const lxcNicSchema = obj(
  {
    bridge: nonEmptyStr('Bridge, e.g. `vmbr0`.'),
    iface: v.optional(str('Guest interface name (`name=`); default the slot name.')),
    type: v.optional(str('Interface type (PVE default `veth`); not compared.')),
    tag: v.optional(int('VLAN tag.', 0, 4094)),
    hwaddr: v.optional(mac('Pinned MAC address.')),
    'rate-limit': v.optional(rateLimit),
    firewall: v.optional(bool('`firewall=1`.'), false),
    ip: v.optional(str('`ip=`: CIDR (e.g. `192.168.1.10/24`), `dhcp` or `manual`.')),
    gw: v.optional(str('`gw=` gateway address.')),
    slot: v.optional(str('`netN` key; default `net<i>`. Unique.')),
  },
  'One container network interface.',
)

export const mountPointSchema = obj(
  {
    storage: storageId('Storage the volume is allocated on.'),
    size: diskBytes('Volume size (e.g. "8GiB"); a whole number of MiB.'),
    'mount-point': v.optional(str('Absolute guest path (`mp=`); default `/mnt/mp<i>`.')),
    slot: v.optional(str('`mpN` key; default `mp<i>`. Unique across mount points and bind mounts.')),
    options: v.optional(
      obj(
        {
          'read-only': v.optional(bool('Tri-state `ro=`.')),
          backup: v.optional(bool('Tri-state `backup=`.')),
          acl: v.optional(bool('Tri-state `acl=`.')),
          quota: v.optional(bool('Tri-state `quota=`.')),
          shared: v.optional(bool('Tri-state `shared=`.')),
          'mount-options': v.optional(str('`mountoptions=` (e.g. `noatime`).')),
        },
        'Mount point options; absent = PVE default.',
      ),
    ),
  },
  'An allocated volume mounted into the container.',
)

export const bindMountSchema = obj(
  {
    'host-path': str('Absolute host directory; system directories (/, /etc, /usr, ...) are refused.'),
    'mount-point': str('Absolute guest path.'),
    slot: v.optional(str('`mpN` key; default `mp<len(mount-points)+i>`.')),
    'read-only': v.optional(bool('Tri-state `ro=`.')),
  },
  'A host directory bind-mounted into the container (needs root@pam).',
)

export const lxcOptionsSchema = obj(
  {
    unprivileged: v.optional(bool('Create-only `unprivileged=`.')),
    protection: v.optional(bool('`protection=`.')),
    onboot: v.optional(bool('`onboot=`.')),
    console: v.optional(bool('`console=`.')),
    nesting: v.optional(bool('`features=nesting=`.')),
    keyctl: v.optional(bool('`true` cannot be created on PVE 9 (reported at create).')),
    fuse: v.optional(bool('`true` cannot be created on PVE 9 (reported at create).')),
    startup: v.optional(str('`startup=`.')),
    ttys: v.optional(int('Accepted, never sent.', 0)),
  },
  'Container options; absent = PVE decides.',
)

const lxcSpecEntries = (template: boolean) => ({
  node,
  vmid,
  template: v.optional(
    resourceName('Name of the CTTemplate (vztmpl archive) the container is created from; not with `clone`.'),
  ),
  state: template
    ? state('stopped', 'Templates are always stopped; `started` is rejected.')
    : state('started', 'Power state: `started` or `stopped`.'),
  memory: memoryMiB('Memory (e.g. "1GiB"); a whole number of MiB.'),
  swap: v.optional(memoryMiB('Swap (e.g. "512MiB"); a whole number of MiB; absent = not sent.', 0)),
  cpu: obj({ cores: int('`cores`.', 1), units: v.optional(int('CPU units (parsed, not sent).', 0)) }, 'CPU.'),
  root: obj(
    {
      storage: storageId('Storage of the root filesystem.'),
      size: diskBytes('Root filesystem size; a whole number of MiB.'),
    },
    'Root filesystem (`rootfs`).',
  ),
  'mount-points': v.optional(list(mountPointSchema, 'Allocated volumes (`mpN`).'), []),
  'bind-mounts': v.optional(list(bindMountSchema, 'Host bind mounts (`mpN`).'), []),
  networks: v.optional(list(lxcNicSchema, 'Network interfaces (`netN`).'), []),
  dns: v.optional(
    obj(
      {
        hostname: v.optional(str('`hostname`; default `metadata.name`.')),
        nameservers: v.optional(stringList('`nameserver` entries.')),
        domain: v.optional(str('`searchdomain`.')),
      },
      'Hostname and DNS.',
    ),
  ),
  arch: v.optional(oneOf(['amd64', 'i686', 'arm64'], '`arch`; absent = PVE default amd64.')),
  options: v.optional(lxcOptionsSchema),
  'pve-description': v.optional(str('PVE `description`.')),
  tags,
  extra: extra('lxc'),
  clone: v.optional(
    resourceName(
      template
        ? 'Rejected on a TemplateCT: only an LXC is cloned from a template.'
        : 'Name of a TemplateCT to full-clone from (onto `root.storage`), on the node the container is created on; then `template`, `mount-points` and `bind-mounts` must be absent.',
    ),
  ),
  firewall: v.optional(firewallSchema),
  ha: v.optional(haSchema),
  pool: v.optional(poolRef),
})

export const lxcSpecSchema = obj(lxcSpecEntries(false), 'LXC spec.')
export const templateCtSpecSchema = obj(lxcSpecEntries(true), 'TemplateCT spec (same fields as LXC).')
