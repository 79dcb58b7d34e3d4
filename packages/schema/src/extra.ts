/**
 * `spec.extra`: a free-form map of PVE parameter -> string,
 * sent verbatim at create. Keys that collide with structured fields are rejected, and so is every key that
 * could bypass a data-loss guard (drives, NICs, mount points, unused volumes), hand out a credential, or touch
 * the object's lifecycle (`lock`, `template`, `start`, `archive`, `tags`).
 */

/** Exact reserved keys for VM and TemplateVM (see docs/schema-reference.md, `spec.extra`). */
export const VM_RESERVED_KEYS: ReadonlySet<string> = new Set([
  // keys the structured fields own
  'vmid',
  'name',
  'memory',
  'cpu',
  'cores',
  'machine',
  'bios',
  'vga',
  'cdrom',
  'ide0',
  'ide1',
  'ide2',
  'ide3',
  'efidisk0',
  'tpm0',
  'serial0',
  'onboot',
  'startup',
  'protection',
  'agent',
  'acpi',
  'tablet',
  'hotplug',
  'boot',
  'nestedvirt',
  'hidden',
  'tags',
  'ciuser',
  'sshkeys',
  'nameserver',
  'searchdomain',
  // structured fields the reference forgot
  'scsihw',
  'sockets',
  'numa',
  'description',
  'cipassword',
  'cicustom',
  'bootdisk',
  // lifecycle, credentials and guarded volumes
  'lock',
  'template',
  'start',
  'archive',
  'vmstate',
  'digest',
  'delete',
  'revert',
  'skiplock',
  'force',
  'pool',
  'unique',
  'live-restore',
])
/** Reserved key prefixes (followed by digits) for VM and TemplateVM. */
export const VM_RESERVED_PATTERNS: readonly RegExp[] = [
  /^scsi/,
  /^net/,
  /^ipconfig/, // any key starting with these
  /^(?:ide|sata|virtio|efidisk|tpmstate|unused|hostpci|nvme)\d+$/,
]

/** Exact reserved keys for LXC and TemplateCT (see docs/schema-reference.md, `spec.extra`). */
export const LXC_RESERVED_KEYS: ReadonlySet<string> = new Set([
  // keys the structured fields own
  'vmid',
  'ctid',
  'name',
  'memory',
  'core_count',
  'cores',
  'rootfs',
  'ostemplate',
  'ostype',
  'arch',
  'hostname',
  'nameserver',
  'searchdomain',
  'unprivileged',
  'onboot',
  'protection',
  'nesting',
  'keyctl',
  'fuse',
  'start',
  'tags',
  // structured fields the reference forgot
  'swap',
  'description',
  'features',
  'console',
  'startup',
  'ttys',
  // lifecycle, credentials and guarded volumes
  'lock',
  'template',
  'archive',
  'password',
  'ssh-public-keys',
  'digest',
  'delete',
  'revert',
  'force',
  'pool',
  'unique',
  'restore',
  'ignore-unpack-errors',
])
/** Reserved key prefixes for LXC and TemplateCT. */
export const LXC_RESERVED_PATTERNS: readonly RegExp[] = [/^net/, /^mp/, /^unused\d+$/]

/** PVE parameter names: a letter, then letters, digits, `_` and `-`. */
export const EXTRA_KEY = /^[A-Za-z][A-Za-z0-9_-]*$/

/** Why an extra key is refused for this guest family, or undefined when it may be sent. */
export function reservedExtraKey(family: 'qemu' | 'lxc', key: string): string | undefined {
  const k = key.toLowerCase()
  const exact = family === 'qemu' ? VM_RESERVED_KEYS : LXC_RESERVED_KEYS
  const patterns = family === 'qemu' ? VM_RESERVED_PATTERNS : LXC_RESERVED_PATTERNS
  if (k === 'tags') return 'spec.extra may not set "tags": use spec.tags (the ownership tag is always managed)'
  if (exact.has(k) || patterns.some((p) => p.test(k))) {
    return `spec.extra may not set "${key}": it is managed by a structured field or guarded against data loss; use the structured field instead`
  }
  return undefined
}
