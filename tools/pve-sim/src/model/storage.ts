import { createHash } from 'node:crypto'
import { fail500 } from './errors.js'
import { GiB } from './sizes.js'

/**
 * Storages: one cluster-wide configuration (`storage.cfg`, pve-storage `PVE::Storage::config`) and the volumes
 * on them. A local storage has one volume namespace per node; a shared one (`nfs`, `cifs`, `rbd`, `cephfs`, or
 * `shared 1`) has one namespace for every node that sees it.
 */

export type StorageType = 'dir' | 'lvmthin' | 'lvm' | 'zfspool' | 'nfs' | 'cifs' | 'cephfs' | 'rbd' | 'btrfs' | 'pbs'
export type ContentType = 'images' | 'rootdir' | 'iso' | 'vztmpl' | 'import' | 'snippets' | 'backup'

/** the plugin data the simulator models per type: allowed content, default content, file-based (pve-storage `plugindata`) */
export const STORAGE_TYPES: Record<
  StorageType,
  { content: ContentType[]; defaultContent: ContentType[]; file: boolean; shared: boolean }
> = {
  dir: {
    content: ['images', 'rootdir', 'vztmpl', 'iso', 'backup', 'snippets', 'import'],
    defaultContent: ['images', 'rootdir'],
    file: true,
    shared: false,
  },
  nfs: {
    content: ['images', 'rootdir', 'vztmpl', 'iso', 'backup', 'snippets', 'import'],
    defaultContent: ['images'],
    file: true,
    shared: true,
  },
  cifs: {
    content: ['images', 'rootdir', 'vztmpl', 'iso', 'backup', 'snippets', 'import'],
    defaultContent: ['images'],
    file: true,
    shared: true,
  },
  cephfs: {
    content: ['vztmpl', 'iso', 'backup', 'snippets', 'import'],
    defaultContent: ['backup'],
    file: true,
    shared: true,
  },
  lvmthin: { content: ['images', 'rootdir'], defaultContent: ['images', 'rootdir'], file: false, shared: false },
  lvm: { content: ['images', 'rootdir'], defaultContent: ['images', 'rootdir'], file: false, shared: false },
  zfspool: { content: ['images', 'rootdir'], defaultContent: ['images', 'rootdir'], file: false, shared: false },
  rbd: { content: ['images', 'rootdir'], defaultContent: ['images'], file: false, shared: true },
  // BTRFSPlugin: a directory plugin with subvolumes; local unless `shared 1`
  btrfs: {
    content: ['images', 'rootdir', 'vztmpl', 'iso', 'backup', 'snippets', 'import'],
    defaultContent: ['images', 'rootdir'],
    file: true,
    shared: false,
  },
  // PBSPlugin: backups only, on a Proxmox Backup Server every node reaches
  pbs: { content: ['backup'], defaultContent: ['backup'], file: false, shared: true },
}

export function isStorageType(t: string): t is StorageType {
  return Object.prototype.hasOwnProperty.call(STORAGE_TYPES, t)
}

export interface StorageDef {
  id: string
  type: StorageType
  content: ContentType[]
  total: number
  /** dir-like storages: the directory volumes live in */
  path?: string
  /** the `shared` flag as PVE reports it (always set for nfs/cifs/cephfs/rbd) */
  shared: boolean
  /** `nodes` restriction; undefined = every node */
  nodes?: string[]
  /** `disable 1` */
  disable?: boolean
  /** every other config property as stored (server, export, pool, vgname, thinpool, ...) */
  extra: Record<string, string>
}

export interface Volume {
  volid: string
  content: ContentType
  format: string
  size: number
  ctime: number
  vmid?: number
  parent?: string
  /** files fetched by download-url or added by control: their checksums per algorithm */
  checksums?: Record<string, string>
  /** what a test wrote into a disk (control `writeVolume`): a migration, a disk move or a reassignment carries it */
  data?: string
}

/**
 * What a fresh install writes into storage.cfg: `local` (dir) for ISOs, CT templates and backups (plus
 * import images on PVE 9), `local-lvm` (lvmthin) for guest disks. `local-zfs` stands for a ZFS pool an
 * admin added (a ZFS install has it instead of local-lvm).
 */
export function defaultStorages(version: '9.1' | '8.4'): StorageDef[] {
  const localContent: ContentType[] =
    version === '9.1' ? ['backup', 'import', 'iso', 'vztmpl'] : ['backup', 'iso', 'vztmpl']
  return [
    {
      id: 'local',
      type: 'dir',
      content: localContent,
      total: 100 * GiB,
      path: '/var/lib/vz',
      shared: false,
      extra: {},
    },
    {
      id: 'local-lvm',
      type: 'lvmthin',
      content: ['images', 'rootdir'],
      total: 500 * GiB,
      shared: false,
      extra: { thinpool: 'data', vgname: 'pve' },
    },
    {
      id: 'local-zfs',
      type: 'zfspool',
      content: ['images', 'rootdir'],
      total: 1000 * GiB,
      shared: false,
      extra: { pool: 'rpool/data', sparse: '1' },
    },
  ]
}

/** volumes of one storage namespace, with an owner index so disk numbering stays O(disks of that guest) */
class VolumeStore {
  readonly volumes = new Map<string, Volume>()
  readonly byOwner = new Map<number, Set<string>>()
}

/** storage.cfg plus the state around it: shared namespaces, offline storages, held storage locks */
export class StorageConfig {
  private defs = new Map<string, StorageDef>()
  /** bumped on every write: the digest GET /storage reports and PUT checks */
  private generation = 0
  readonly shared = new Map<string, VolumeStore>()
  /** storages whose check_connection fails (an NFS server down, a Ceph cluster unreachable) */
  readonly offline = new Set<string>()
  /** storages whose cluster lock (shared) or node lock (local) someone else holds */
  readonly lockHeld = new Set<string>()
  /**
   * the sensitive properties of each storage (/etc/pve/priv/storage/<id>.pw, .enc, .master.pem, the ceph
   * keyring): kept apart from storage.cfg, never listed (PVE::API2::Storage::Config extract_sensitive_params)
   */
  readonly priv = new Map<string, Record<string, string>>()
  /** `qemu-img info` runs (file_size_info) that listings of file storages' images cost, on every node */
  imageInfoRuns = 0

  constructor(defs: StorageDef[]) {
    for (const d of defs) this.defs.set(d.id, d)
  }

  all(): StorageDef[] {
    return [...this.defs.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  }

  get(id: string): StorageDef | undefined {
    return this.defs.get(id)
  }

  set(d: StorageDef): void {
    this.defs.set(d.id, d)
    this.generation++
  }

  delete(id: string): void {
    this.defs.delete(id)
    this.priv.delete(id)
    this.shared.delete(id)
    this.offline.delete(id)
    this.lockHeld.delete(id)
    this.generation++
  }

  digest(): string {
    return createHash('sha1')
      .update(`${this.generation}\n${JSON.stringify(this.all())}`)
      .digest('hex')
  }

  onNode(d: StorageDef, node: string): boolean {
    return d.nodes === undefined || d.nodes.includes(node)
  }
}

/** file-based storages keep images as files with an extension (`100/vm-100-disk-0.qcow2`) */
export function isFileStorage(t: StorageType): boolean {
  return STORAGE_TYPES[t].file
}

/** the content types in the order list_volumes walks them (PVE::Storage::volume_list) */
const LIST_ORDER: readonly ContentType[] = ['rootdir', 'images', 'vztmpl', 'iso', 'backup', 'snippets', 'import']

/** The directory inside a dir storage that holds a content type (PVE's default subdirs). */
export function contentDir(content: ContentType): string {
  switch (content) {
    case 'iso':
      return 'template/iso'
    case 'vztmpl':
      return 'template/cache'
    case 'backup':
      return 'dump'
    case 'snippets':
      return 'snippets'
    case 'import':
      return 'import'
    default:
      return 'images'
  }
}

/** `local-lvm:vm-100-disk-0` -> ['local-lvm', 'vm-100-disk-0'] */
export function splitVolid(volid: string): [string, string] | undefined {
  const m = /^([a-z][a-z0-9\-_.]*[a-z0-9]):(.+)$/i.exec(volid)
  return m && m[1] && m[2] ? [m[1], m[2]] : undefined
}

/**
 * The content type a volume name stands for, read from the name alone as each plugin's parse_volname does
 * (pve-storage Plugin, LVMPlugin, LvmThinPlugin, ZFSPoolPlugin, RBDPlugin): the volume need not exist. A name
 * the plugin cannot read dies with the plugin's message.
 */
export function parseVolname(d: StorageDef, volname: string): ContentType {
  switch (d.type) {
    case 'lvm':
      if (/^vm-\d+-\S+$/.test(volname)) return 'images'
      throw fail500(`unable to parse lvm volume name '${volname}'`)
    case 'lvmthin':
      if (/^(vm|base)-\d+-\S+$/.test(volname)) return 'images'
      throw fail500(`unable to parse lvm volume name '${volname}'`)
    case 'zfspool':
      if (/^((base|basevol)-\d+-\S+\/)?(base|basevol|vm|subvol)-\d+-\S+$/.test(volname)) return 'images'
      throw fail500(`unable to parse zfs volume name '${volname}'`)
    case 'rbd':
      if (/^(base-\d+-\S+\/)?(base)?(vm)?-\d+-\S+$/.test(volname)) return 'images'
      throw fail500(`unable to parse rbd volume name '${volname}'`)
    default:
      return parseDirVolname(volname)
  }
}

/** Plugin::parse_volname for the directory-like types (dir, nfs, cifs, cephfs) */
function parseDirVolname(volname: string): ContentType {
  const image = /^(?:\d+\/\S+\/)?\d+\/(\S+)$/.exec(volname)
  if (image) {
    if (/^((vm-|base-|subvol-)\d+-[^/\s]+|(base-)?[^/\s]+)\.(raw|qcow2|vmdk|subvol)$/.test(image[1] ?? ''))
      return 'images'
    throw fail500(`unable to parse volume filename '${image[1] ?? ''}'`)
  }
  if (/^iso\/[^/]+\.(?:iso|img)$/i.test(volname)) return 'iso'
  if (/^vztmpl\/[^/]+\.(?:tar(?!\.)|tar\.(?:gz|xz|zst|bz2))$/i.test(volname)) return 'vztmpl'
  if (/^backup\/[^/]+\.(tgz|(?:tar|vma)(?:\.(gz|lzo|zst|bz2))?)$/.test(volname)) return 'backup'
  if (/^snippets\/[^/]+$/.test(volname)) return 'snippets'
  if (/^import\/[ a-zA-Z0-9\-.+=_]+\.ova\/[ a-zA-Z0-9\-.+=_]+\.(qcow2|raw|vmdk)$/.test(volname)) return 'import'
  if (/^import\/[ a-zA-Z0-9\-.+=_]+\.(ova|ovf|qcow2|raw|vmdk)$/.test(volname)) return 'import'
  throw fail500(`unable to parse directory volume name '${volname}'`)
}

/** The owner vmid encoded in an image volume name (`vm-100-disk-0`, `100/vm-100-disk-0.raw`, `subvol-...`). */
export function volumeOwner(volname: string): number | undefined {
  const last =
    volname
      .split('/')
      .filter((p) => p !== '')
      .slice(-1)[0] ?? ''
  const m = /^(?:vm|base|subvol|basevol)-(\d+)-/.exec(last)
  return m && m[1] ? Number(m[1]) : undefined
}

/**
 * The `format` PVE reports for a file of a content type (pve-storage Plugin get_subdir_files), or undefined when
 * the name does not match the content type's pattern: `[^/]+$ISO_EXT_RE_0` and `[^/]+$VZTMPL_EXT_RE_1` (both
 * case-insensitive; a template's format is `t` + its compression, or `tar`), and for uploads and downloads of
 * import files `$SAFE_CHAR_CLASS_RE+$UPLOAD_IMPORT_EXT_RE_1`. A plain `.tar` template exists since pve-storage
 * 9.0.15 (`plainTar: false` for PVE 8).
 */
export function fileFormat(
  content: ContentType,
  filename: string,
  opts: { plainTar?: boolean } = {},
): string | undefined {
  switch (content) {
    case 'iso':
      return /[^/]+\.(?:iso|img)$/i.test(filename) ? 'iso' : undefined
    case 'vztmpl': {
      const m = /[^/]+\.(?:(tar)(?!\.)|tar\.(gz|xz|zst|bz2))$/i.exec(filename)
      if (!m) return undefined
      if (m[1] !== undefined) return opts.plainTar === false ? undefined : m[1] === 'tar' ? 'tar' : `t${m[1]}`
      return `t${m[2] ?? ''}`
    }
    case 'import':
      return /[a-zA-Z0-9\-.+=_]+\.(ova|qcow2|raw|vmdk)$/.exec(filename)?.[1]
    case 'snippets':
      return 'snippet'
    default:
      return undefined
  }
}

export class NodeStorage {
  private local = new Map<string, VolumeStore>()

  constructor(
    readonly node: string,
    readonly config: StorageConfig,
  ) {}

  /** the storages configured for this node (storage_check_node), enabled or not */
  get defs(): StorageDef[] {
    return this.config.all().filter((d) => this.config.onNode(d, this.node))
  }

  /** a storage's config, whatever nodes it is restricted to (storage_config) */
  def(id: string): StorageDef | undefined {
    return this.config.get(id)
  }

  /** storage_check_enabled: the storage exists, is not disabled and is configured for this node */
  checkEnabled(id: string): StorageDef {
    const d = this.config.get(id)
    if (!d) throw fail500(`storage '${id}' does not exist`)
    if (d.disable) throw fail500(`storage '${id}' is disabled`)
    if (!this.config.onNode(d, this.node)) throw fail500(`storage '${id}' is not available on node '${this.node}'`)
    return d
  }

  /**
   * activate_storage: `storage_check_enabled` (disabled, not on this node) then `check_connection`;
   * every PVE code path that touches a storage's volumes goes through it.
   */
  activate(id: string): StorageDef {
    const d = this.checkEnabled(id)
    if (this.config.offline.has(id)) throw fail500(`storage '${id}' is not online`)
    return d
  }

  /**
   * cluster_lock_storage: a shared storage takes the cluster-wide `storage-<id>` cfs lock, a local one a
   * flock on this node; a held lock times out with PVE's message (pve-cluster `cfs_lock_storage`).
   */
  lockStorage(id: string): void {
    if (!this.config.lockHeld.has(id)) return
    const d = this.config.get(id)
    if (d?.shared) throw fail500(`cfs-lock 'storage-${id}' error: got lock request timeout`)
    throw fail500(`can't lock file '/var/lock/pve-manager/pve-storage-${id}' - got timeout`)
  }

  private store(id: string): VolumeStore | undefined {
    const d = this.config.get(id)
    if (!d || !this.config.onNode(d, this.node)) return undefined
    const map = d.shared ? this.config.shared : this.local
    let st = map.get(id)
    if (!st) map.set(id, (st = new VolumeStore()))
    return st
  }

  list(id: string): Volume[] {
    return [...(this.store(id)?.volumes.values() ?? [])].sort((a, b) =>
      a.volid < b.volid ? -1 : a.volid > b.volid ? 1 : 0,
    )
  }

  /**
   * volume_list (PVE::Storage) through the plugin's list_volumes: the content types the storage is configured for,
   * `content` narrowing them to one; no iso or vztmpl files for a vmid. On a file storage list_images runs
   * file_size_info (`qemu-img info`) on every image it visits, once per images/rootdir pass: counted in
   * `imageInfoRuns`. Sorted by lower-cased volid, as volume_list sorts.
   */
  volumeList(id: string, filter: { content?: string; vmid?: number } = {}): Volume[] {
    const d = this.config.get(id)
    if (!d) return []
    const all = this.list(id)
    const out: Volume[] = []
    for (const type of LIST_ORDER) {
      if ((filter.content !== undefined && type !== filter.content) || !d.content.includes(type)) continue
      if (type === 'images' || type === 'rootdir') {
        const visited = all.filter(
          (v) =>
            (v.content === 'images' || v.content === 'rootdir') &&
            (filter.vmid === undefined || v.vmid === filter.vmid),
        )
        if (isFileStorage(d.type)) this.config.imageInfoRuns += visited.length
        out.push(...visited.filter((v) => v.content === type))
      } else if (!isFileStorage(d.type)) {
        continue
      } else if (type === 'iso' || type === 'vztmpl') {
        if (filter.vmid === undefined) out.push(...all.filter((v) => v.content === type))
      } else if (type === 'backup') {
        out.push(...all.filter((v) => v.content === type && (filter.vmid === undefined || v.vmid === filter.vmid)))
      } else {
        out.push(...all.filter((v) => v.content === type))
      }
    }
    const key = (v: Volume) => v.volid.toLowerCase()
    return out.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0))
  }

  get(volid: string): Volume | undefined {
    const s = splitVolid(volid)
    return s ? this.store(s[0])?.volumes.get(volid) : undefined
  }

  add(storage: string, v: Volume): void {
    const st = this.store(storage)
    if (!st) return
    st.volumes.set(v.volid, v)
    const owner = volumeOwner(splitVolid(v.volid)?.[1] ?? '')
    if (owner === undefined) return
    let set = st.byOwner.get(owner)
    if (!set) st.byOwner.set(owner, (set = new Set()))
    set.add(v.volid)
  }

  remove(volid: string): boolean {
    const s = splitVolid(volid)
    if (!s) return false
    const st = this.store(s[0])
    if (!st) return false
    const owner = volumeOwner(s[1])
    if (owner !== undefined) st.byOwner.get(owner)?.delete(volid)
    return st.volumes.delete(volid)
  }

  used(id: string): number {
    let n = 0
    for (const v of this.store(id)?.volumes.values() ?? []) n += v.size
    return n
  }

  /** find_free_diskname: the first N with neither vm-/base-/subvol- name taken on that storage */
  private freeDiskNumber(id: string, vmid: number): number {
    const taken = new Set<number>()
    const re = new RegExp(`(?:^|/)(?:vm|base|subvol|basevol)-${vmid}-disk-(\\d+)`)
    for (const volid of this.store(id)?.byOwner.get(vmid) ?? []) {
      const m = re.exec(volid.split(':')[1] ?? '')
      if (m && m[1]) taken.add(Number(m[1]))
    }
    let n = 0
    while (taken.has(n)) n++
    return n
  }

  /**
   * vdisk_alloc: activates the storage, takes its lock, and names the volume the way each plugin does:
   * dir/nfs/cifs `local:100/vm-100-disk-0.raw`, lvmthin/lvm/rbd `local-lvm:vm-100-disk-0`,
   * zfspool `local-zfs:vm-100-disk-0` (CT rootdir: `subvol-101-disk-0`).
   */
  allocDisk(id: string, vmid: number, size: number, opts: { format?: string; ct?: boolean; ctime: number }): Volume {
    const d = this.activate(id)
    this.lockStorage(id)
    const n = this.freeDiskNumber(id, vmid)
    let volid: string
    let format: string
    if (isFileStorage(d.type)) {
      format = opts.format ?? 'raw'
      volid = `${id}:${vmid}/vm-${vmid}-disk-${n}.${format}`
    } else if (d.type === 'zfspool' && opts.ct) {
      format = 'subvol'
      volid = `${id}:subvol-${vmid}-disk-${n}`
    } else {
      format = 'raw'
      volid = `${id}:vm-${vmid}-disk-${n}`
    }
    const v: Volume = { volid, content: opts.ct ? 'rootdir' : 'images', format, size, ctime: opts.ctime, vmid }
    this.add(id, v)
    return v
  }

  /**
   * The target side of storage_migrate (volume_import with `allow_rename`): the volume arrives on storage `id`
   * under its own name when that is free there (`vm-100-disk-0`, `vm-100-cloudinit`), else as the storage's next
   * free disk name, named the way the target's plugin names it; a file storage keeps a qcow2/vmdk/raw format,
   * any other stores raw (a ZFS container volume `subvol`). Snapshots travel inside the volume (with_snapshots).
   */
  receive(id: string, v: Volume, vmid: number, opts: { ct: boolean }): Volume {
    const d = this.activate(id)
    this.lockStorage(id)
    const [, volname] = splitVolid(v.volid) ?? ['', '']
    const leafOf = (name: string) => (name.split('/').pop() ?? name).replace(/\.(raw|qcow2|vmdk|subvol)$/, '')
    let leaf = leafOf(volname)
    const zfsCt = d.type === 'zfspool' && opts.ct
    leaf = zfsCt ? leaf.replace(/^vm-/, 'subvol-') : leaf.replace(/^subvol-/, 'vm-')
    const taken = new Set([...(this.store(id)?.byOwner.get(vmid) ?? [])].map((x) => leafOf(splitVolid(x)?.[1] ?? '')))
    if (taken.has(leaf)) leaf = `${zfsCt ? 'subvol' : 'vm'}-${vmid}-disk-${this.freeDiskNumber(id, vmid)}`
    const file = isFileStorage(d.type)
    const format = file ? (['raw', 'qcow2', 'vmdk'].includes(v.format) ? v.format : 'raw') : zfsCt ? 'subvol' : 'raw'
    const volid = file ? `${id}:${vmid}/${leaf}.${format}` : `${id}:${leaf}`
    const moved: Volume = { volid, content: v.content, format, size: v.size, ctime: v.ctime, vmid }
    if (v.data !== undefined) moved.data = v.data
    this.add(id, moved)
    return moved
  }

  /**
   * vdisk_clone (a linked clone), named as each plugin's clone_image returns it: of a base volume, file
   * storages `<base volname>/<newid>/vm-<newid>-disk-N.<fmt>` (with a backing-file `parent`), zfspool and
   * rbd `<base volname>/vm-<newid>-disk-N`, lvmthin a plain `vm-<newid>-disk-N` that records no base; of a
   * snapshot (`snap`, lvmthin and rbd only) a plain `vm-<newid>-disk-N` of the size the volume had then.
   */
  cloneBase(base: Volume, newid: number, opts: { ct?: boolean; ctime: number; snap?: string; size?: number }): Volume {
    const [id, baseName] = splitVolid(base.volid) ?? ['', '']
    const d = this.activate(id)
    this.lockStorage(id)
    const n = this.freeDiskNumber(id, newid)
    const leaf = d.type === 'zfspool' && opts.ct ? `subvol-${newid}-disk-${n}` : `vm-${newid}-disk-${n}`
    const v: Volume = {
      volid: `${id}:${leaf}`,
      content: base.content,
      format: base.format,
      size: opts.size ?? base.size,
      ctime: opts.ctime,
      vmid: newid,
    }
    if (opts.snap !== undefined) {
      // RBDPlugin names a snapshot's clone without its base; LvmThinPlugin never names the base
    } else if (isFileStorage(d.type)) {
      v.volid = `${id}:${baseName}/${newid}/${leaf}.${base.format}`
      v.parent = baseName
    } else if (d.type !== 'lvmthin' && d.type !== 'lvm') {
      v.volid = `${id}:${baseName}/${leaf}`
    }
    this.add(id, v)
    return v
  }

  /**
   * volume_is_base_and_used: a base volume some other volume names as its base. lvmthin clones do not
   * name their base, so PVE (and this) cannot see them there.
   */
  isBaseAndUsed(volid: string): boolean {
    const s = splitVolid(volid)
    const d = s && this.def(s[0])
    if (!s || !d || d.type === 'lvmthin' || !/(^|\/)base(vol)?-\d+-/.test(s[1])) return false
    return this.list(s[0]).some((v) => v.volid.startsWith(`${volid}/`))
  }

  /** vdisk_free: activate, lock, refuse a base volume linked clones use, then remove */
  free(volid: string): void {
    const [id, volname] = splitVolid(volid) ?? ['', '']
    this.activate(id)
    this.lockStorage(id)
    if (this.isBaseAndUsed(volid)) throw fail500(`base volume '${volname}' is still in use by linked clones`)
    this.remove(volid)
  }

  /** the cloud-init volume: `vm-100-cloudinit` on block storages, `100/vm-100-cloudinit.qcow2` on file storages */
  allocCloudinit(id: string, vmid: number, ctime: number): Volume {
    const d = this.activate(id)
    this.lockStorage(id)
    const file = isFileStorage(d.type)
    const volid = file ? `${id}:${vmid}/vm-${vmid}-cloudinit.qcow2` : `${id}:vm-${vmid}-cloudinit`
    const v: Volume = { volid, content: 'images', format: file ? 'qcow2' : 'raw', size: 4 * 1024 * 1024, ctime, vmid }
    this.add(id, v)
    return v
  }

  /**
   * rename_volume (reassigning a disk to another guest): the volume becomes the target guest's, under the
   * storage's next free disk name for it, named as the plugin names it (`local:101/vm-101-disk-0.raw`,
   * `local-lvm:vm-101-disk-0`, a ZFS container volume `subvol-101-disk-0`)
   */
  rename(volid: string, target: number): Volume {
    const v = this.get(volid)
    const [id, volname] = splitVolid(volid) ?? ['', '']
    const d = this.activate(id)
    if (!v) throw fail500(`volume '${volid}' does not exist`)
    const n = this.freeDiskNumber(id, target)
    const prefix = /(^|\/)subvol-/.test(volname) ? 'subvol' : 'vm'
    const name = isFileStorage(d.type)
      ? `${target}/${prefix}-${target}-disk-${n}.${v.format}`
      : `${prefix}-${target}-disk-${n}`
    this.remove(volid)
    const renamed: Volume = { ...v, volid: `${id}:${name}`, vmid: target }
    this.add(id, renamed)
    return renamed
  }

  /** template conversion: `vm-100-disk-0` -> `base-100-disk-0` (zfs CT `subvol-` -> `basevol-`) */
  renameToBase(volid: string): string {
    const v = this.get(volid)
    const s = splitVolid(volid)
    if (!v || !s) return volid
    const renamed = `${s[0]}:${s[1].replace(/(^|\/)vm-(\d+-disk-\d+)/, '$1base-$2').replace(/(^|\/)subvol-(\d+-disk-\d+)/, '$1basevol-$2')}`
    this.remove(volid)
    this.add(s[0], { ...v, volid: renamed })
    return renamed
  }

  /**
   * GET /nodes/{node}/storage item (pve-storage `storage_info`): `enabled` 0 for a disabled storage or one
   * restricted to other nodes, `active` 0 and zero sizes when it cannot be activated.
   */
  statusItem(d: StorageDef): Record<string, unknown> {
    const enabled = !d.disable && this.config.onNode(d, this.node)
    const active = enabled && !this.config.offline.has(d.id)
    const used = active ? this.used(d.id) : 0
    const item: Record<string, unknown> = {
      storage: d.id,
      type: d.type,
      content: [...d.content].sort().join(','),
      active: active ? 1 : 0,
      enabled: enabled ? 1 : 0,
      shared: d.shared ? 1 : 0,
      total: active ? d.total : 0,
      used,
      avail: active ? Math.max(0, d.total - used) : 0,
    }
    if (active && d.total > 0) item.used_fraction = used / d.total
    return item
  }
}

/**
 * A content listing's item as each plugin builds it. Files (iso, vztmpl, import, backup, snippets) carry volid,
 * format, size and ctime (get_subdir_files). Images differ per plugin's list_images: a file storage adds `used`
 * and a `parent` that is the backing file or null (file_size_info), lvmthin and lvm only `ctime`, zfspool and rbd
 * the image's `name` and a `parent` (`<base>@__base__` or null) and no `ctime`.
 */
export function volumeListItem(v: Volume, type?: StorageType): Record<string, unknown> {
  const image = v.content === 'images' || v.content === 'rootdir'
  if (!image || type === undefined) {
    const item: Record<string, unknown> = { volid: v.volid, content: v.content, format: v.format, size: v.size }
    item.ctime = v.ctime
    if (v.vmid !== undefined) item.vmid = v.vmid
    if (v.parent !== undefined) item.parent = v.parent
    if (image) item.used = v.size
    return item
  }
  const volname = splitVolid(v.volid)?.[1] ?? ''
  const leaf = volname.split('/').slice(-1)[0] ?? volname
  const base = /^((?:base|basevol)-\d+-[^/]+)\//.exec(volname)?.[1]
  const owner = v.vmid
  switch (type) {
    case 'lvmthin':
    case 'lvm':
      return { volid: v.volid, content: v.content, format: v.format, size: v.size, vmid: owner, ctime: v.ctime }
    case 'zfspool':
    case 'rbd':
      return {
        volid: v.volid,
        content: v.content,
        name: leaf,
        size: v.size,
        parent: base === undefined ? null : `${base}@__base__`,
        format: v.format,
        vmid: owner,
      }
    default:
      return {
        volid: v.volid,
        content: v.content,
        format: v.format,
        size: v.size,
        vmid: owner,
        used: v.size,
        // qemu-img's backing file name, relative to the image's directory
        parent: v.parent === undefined ? null : `../${v.parent}`,
        ctime: v.ctime,
      }
  }
}
