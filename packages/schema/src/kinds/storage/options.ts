/**
 * The one field table of a Storage: every storage.cfg option ProxOps manages, with the plugin types that have it
 * (each pve-storage plugin's `options`), the ones where it is `fixed` (SectionConfig check_config refuses it on
 * every update, even unchanged) or required on create, and the form of its value. The schema, the planner's
 * create/compare and adopt read this table alone. docs/storage.md
 */

export const STORAGE_TYPES = ['dir', 'nfs', 'cifs', 'pbs', 'lvm', 'lvmthin', 'zfspool', 'btrfs', 'rbd'] as const
export type StorageType = (typeof STORAGE_TYPES)[number]

/** `string` as written; `bool` 1/0; `int` a whole number; `list` a sorted comma list (content, nodes) */
export type OptionForm = 'string' | 'bool' | 'int' | 'list' | 'prune'

export interface StorageOption {
  form: OptionForm
  /** the plugin types that have the option */
  types: readonly StorageType[]
  /** the types where it is `fixed`: set on create only, never sent on update */
  fixed?: readonly StorageType[]
  /** the types where a create needs it (not `optional` in the plugin's options) */
  required?: readonly StorageType[]
  description: string
}

const ALL = STORAGE_TYPES
const FILES = ['dir', 'nfs', 'cifs', 'btrfs'] as const
const BACKUPS = ['dir', 'nfs', 'cifs', 'btrfs', 'pbs'] as const

/** manifest key = PVE option name (kebab-case as storage.cfg writes it) */
export const STORAGE_OPTIONS = {
  content: {
    form: 'list',
    types: ALL,
    description: 'Content types the storage holds (images, rootdir, iso, vztmpl, backup, snippets, import).',
  },
  nodes: { form: 'list', types: ALL, description: 'Nodes that see the storage; absent = every node.' },
  disable: { form: 'bool', types: ALL, description: 'Disable the storage (`disable 1`).' },
  shared: {
    form: 'bool',
    types: ['dir', 'lvm', 'btrfs'],
    description: 'The same storage is reachable on every node (nfs, cifs, pbs and rbd are shared by type).',
  },
  path: {
    form: 'string',
    types: FILES,
    fixed: FILES,
    required: ['dir', 'btrfs'],
    description: 'Directory (nfs/cifs: the mount point, default /mnt/pve/<id>). Fixed after create.',
  },
  'content-dirs': {
    form: 'string',
    types: ['dir', 'nfs', 'cifs'],
    description: 'Overrides of the content subdirectories (`iso=isos,backup=dump`).',
  },
  'prune-backups': { form: 'prune', types: BACKUPS, description: 'Retention of backups on this storage.' },
  'max-protected-backups': {
    form: 'int',
    types: BACKUPS,
    description: 'Protected backups allowed per guest (-1 unlimited).',
  },
  format: { form: 'string', types: FILES, description: 'Default image format (raw, qcow2, vmdk; btrfs raw, subvol).' },
  'create-base-path': { form: 'bool', types: FILES, description: 'Create the base directory if it is missing.' },
  'create-subdirs': { form: 'bool', types: FILES, description: 'Populate the content subdirectories.' },
  is_mountpoint: {
    form: 'string',
    types: ['dir', 'btrfs'],
    description: 'The path is an externally managed mount point (`yes` or the mount point).',
  },
  bwlimit: {
    form: 'string',
    types: ['dir', 'nfs', 'cifs', 'lvm', 'lvmthin', 'zfspool', 'rbd'],
    description: 'I/O bandwidth limits (`clone=...,migration=...`, KiB/s).',
  },
  preallocation: {
    form: 'string',
    types: FILES,
    description: 'Preallocation of raw/qcow2 images (off, metadata, falloc, full).',
  },
  'snapshot-as-volume-chain': {
    form: 'bool',
    types: ['dir', 'nfs', 'cifs', 'lvm'],
    fixed: ['dir', 'nfs', 'cifs'],
    description: 'Snapshots as volume chains (qcow2 external snapshots).',
  },
  server: {
    form: 'string',
    types: ['nfs', 'cifs', 'pbs'],
    fixed: ['nfs', 'cifs', 'pbs'],
    required: ['nfs', 'cifs', 'pbs'],
    description: 'Server address. Fixed after create.',
  },
  export: {
    form: 'string',
    types: ['nfs'],
    fixed: ['nfs'],
    required: ['nfs'],
    description: 'NFS export path. Fixed after create.',
  },
  options: { form: 'string', types: ['nfs', 'cifs'], description: 'Mount options.' },
  share: {
    form: 'string',
    types: ['cifs'],
    fixed: ['cifs'],
    required: ['cifs'],
    description: 'CIFS share. Fixed after create.',
  },
  subdir: { form: 'string', types: ['cifs'], description: 'Subdirectory of the share to mount.' },
  domain: { form: 'string', types: ['cifs'], description: 'CIFS domain.' },
  smbversion: {
    form: 'string',
    types: ['cifs'],
    description: 'SMB protocol version (default, 2.0, 2.1, 3, 3.0, 3.11).',
  },
  username: { form: 'string', types: ['cifs', 'pbs', 'rbd'], description: 'User name (pbs: `user@realm!token`).' },
  datastore: {
    form: 'string',
    types: ['pbs'],
    fixed: ['pbs'],
    required: ['pbs'],
    description: 'Proxmox Backup Server datastore. Fixed after create.',
  },
  namespace: { form: 'string', types: ['pbs', 'rbd'], description: 'Namespace on the datastore or RBD pool.' },
  port: { form: 'int', types: ['pbs'], description: 'Proxmox Backup Server port (default 8007).' },
  fingerprint: { form: 'string', types: ['pbs'], description: "The server certificate's SHA-256 fingerprint." },
  nocow: { form: 'bool', types: ['btrfs'], description: 'Set the NOCOW flag on files.' },
  vgname: {
    form: 'string',
    types: ['lvm', 'lvmthin'],
    fixed: ['lvm', 'lvmthin'],
    required: ['lvm', 'lvmthin'],
    description: 'LVM volume group. Fixed after create.',
  },
  thinpool: {
    form: 'string',
    types: ['lvmthin'],
    fixed: ['lvmthin'],
    required: ['lvmthin'],
    description: 'LVM thin pool. Fixed after create.',
  },
  base: {
    form: 'string',
    types: ['lvm'],
    fixed: ['lvm'],
    description: 'Base volume (LVM on iSCSI). Fixed after create.',
  },
  saferemove: { form: 'bool', types: ['lvm'], description: 'Zero data of removed volumes.' },
  tagged_only: { form: 'bool', types: ['lvm'], description: 'Use only logical volumes tagged `pve-vm-ID`.' },
  pool: {
    form: 'string',
    types: ['zfspool', 'rbd'],
    fixed: ['zfspool'],
    required: ['zfspool'],
    description: 'ZFS pool / dataset, or RBD pool. Fixed after create for zfspool.',
  },
  blocksize: { form: 'string', types: ['zfspool'], description: 'ZFS block size of new volumes.' },
  sparse: { form: 'bool', types: ['zfspool'], description: 'Thin-provision ZFS volumes.' },
  mountpoint: { form: 'string', types: ['zfspool'], description: 'Mount point of the ZFS pool/dataset.' },
  monhost: { form: 'string', types: ['rbd'], description: 'Monitors of an external Ceph cluster.' },
  'data-pool': { form: 'string', types: ['rbd'], description: 'Data pool (erasure coding).' },
  krbd: { form: 'bool', types: ['rbd'], description: 'Access images through the kernel module.' },
} as const satisfies Record<string, StorageOption>

export type StorageOptionKey = keyof typeof STORAGE_OPTIONS

/**
 * The sensitive properties (each plugin's `sensitive-properties`, Plugin::sensitive_properties): PVE keeps them in
 * /etc/pve/priv and never returns them; the manifest names a SOPS reference (`<key>-ref: secrets.<name>`).
 */
export const STORAGE_SECRETS = {
  password: { types: ['cifs', 'pbs'] },
  keyring: { types: ['rbd'] },
  'encryption-key': { types: ['pbs'] },
  'master-pubkey': { types: ['pbs'] },
} as const satisfies Record<string, { types: readonly StorageType[] }>

export type StorageSecretKey = keyof typeof STORAGE_SECRETS

/** the manifest field of a sensitive property's reference */
export const secretRefField = (key: StorageSecretKey): `${StorageSecretKey}-ref` => `${key}-ref`

/** a storage id as pve-storage's `pve-storage-id` format accepts it (parse_storage_id) */
export const STORAGE_CFG_ID = /^[a-z][a-z0-9\-_.]*[a-z0-9]$/i

export const optionHas = (key: StorageOptionKey, type: StorageType): boolean =>
  (STORAGE_OPTIONS[key].types as readonly StorageType[]).includes(type)
export const optionFixed = (key: StorageOptionKey, type: StorageType): boolean =>
  ((STORAGE_OPTIONS[key] as StorageOption).fixed ?? []).includes(type)
export const optionRequired = (key: StorageOptionKey, type: StorageType): boolean =>
  ((STORAGE_OPTIONS[key] as StorageOption).required ?? []).includes(type)
