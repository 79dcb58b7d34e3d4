/**
 * qemu-server API2/Qemu.pm's option groups as `$check_vm_modify_config_perm` reads them (`$cpuoptions`,
 * `$memoryoptions`, `$hwtypeoptions`, `$generaloptions`, `$diskoptions`, `$cloudinitoptions`): the privilege an
 * option needs (access/guest-perms.ts), and, for an option in no group, root@pam only (http/root-only.ts). Declared
 * once for both, with the parameters the create and update handlers take out before those checks.
 */
export const CPU = new Set(['cores', 'cpu', 'runningcpu', 'cpulimit', 'cpuunits', 'numa', 'smp', 'sockets', 'vcpus'])
export const MEMORY = new Set(['memory', 'balloon', 'shares', 'allow-ksm'])
export const HWTYPE = new Set([
  'acpi',
  'hotplug',
  'kvm',
  'machine',
  'runningmachine',
  'scsihw',
  'smbios1',
  'tablet',
  'vga',
  'watchdog',
  'audio0',
  'rng0',
])
export const GENERAL = new Set([
  'agent',
  'autostart',
  'bios',
  'description',
  'keyboard',
  'localtime',
  'migrate_downtime',
  'migrate_speed',
  'name',
  'onboot',
  'ostype',
  'protection',
  'reboot',
  'startdate',
  'startup',
  'tdf',
  'template',
])
export const DISKOPT = new Set(['boot', 'bootdisk', 'vmstatestorage'])
export const CLOUDINIT = new Set([
  'cicustom',
  'cipassword',
  'citype',
  'ciuser',
  'ciupgrade',
  'nameserver',
  'searchdomain',
  'sshkeys',
])

/** options checked on their own in `$check_vm_modify_config_perm` (power, network, cloud-init and state keys) */
const QEMU_SINGLES = ['freeze', 'running-nets-host-mtu', 'vmstate', 'tags', 'cdrom']

/** every option some group (or a check of its own) lets a non-root caller set; any other is root@pam only */
export const QEMU_GROUPED: ReadonlySet<string> = new Set([
  ...CPU,
  ...MEMORY,
  ...HWTYPE,
  ...GENERAL,
  ...DISKOPT,
  ...CLOUDINIT,
  ...QEMU_SINGLES,
])
/** the numbered options the groups take by family (disks, devices, NICs, ipconfig, numa nodes) */
export const QEMU_GROUPED_RE =
  /^(?:(?:ide|scsi|virtio|sata|unused|serial|usb|hostpci|virtiofs|net|ipconfig|numa)\d+|efidisk0|tpmstate0)$/
export const QEMU_DRIVE_RE = /^(?:(?:ide|scsi|virtio|sata)\d+|efidisk0|tpmstate0)$/

/** parameters the qemu create/update handlers take out before checking config permissions */
export const QEMU_META = new Set([
  'node',
  'vmid',
  'archive',
  'bwlimit',
  'force',
  'unique',
  'pool',
  'storage',
  'start',
  'live-restore',
  'ha-managed',
  'import-working-storage',
  'digest',
  'delete',
  'revert',
  'skiplock',
  'background_delay',
  'skip_cloud_init',
])
