import { GiB } from './sizes.js'

/** Per-node storages and their volumes (pve-api.md section 5.4). */

export type StorageType = 'dir' | 'lvmthin' | 'zfspool'
export type ContentType = 'images' | 'rootdir' | 'iso' | 'vztmpl' | 'import' | 'snippets' | 'backup'

export interface StorageDef {
  id: string
  type: StorageType
  content: ContentType[]
  total: number
  /** dir storages: the directory volumes live in */
  path?: string
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
}

export const DEFAULT_STORAGES: StorageDef[] = [
  {
    id: 'local',
    type: 'dir',
    content: ['backup', 'images', 'import', 'iso', 'rootdir', 'snippets', 'vztmpl'],
    total: 100 * GiB,
    path: '/var/lib/vz',
  },
  { id: 'local-lvm', type: 'lvmthin', content: ['images', 'rootdir'], total: 500 * GiB },
  { id: 'local-zfs', type: 'zfspool', content: ['images', 'rootdir'], total: 1000 * GiB },
]

export function isFileStorage(t: StorageType): boolean {
  return t === 'dir'
}

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

const VZTMPL_FORMATS: [RegExp, string][] = [
  [/\.tar\.gz$/, 'tgz'],
  [/\.tar\.xz$/, 'txz'],
  [/\.tar\.zst$/, 'tzst'],
  [/\.tar\.bz2$/, 'tbz2'],
  [/\.tar$/, 'tar'],
]

/** The `format` PVE reports for a file of a content type, or undefined when the extension is not allowed. */
export function fileFormat(content: ContentType, filename: string): string | undefined {
  switch (content) {
    case 'iso':
      return /\.(iso|img)$/i.test(filename) ? 'iso' : undefined
    case 'vztmpl':
      return VZTMPL_FORMATS.find(([re]) => re.test(filename))?.[1]
    case 'import': {
      const m = /^[a-zA-Z0-9\-.+=_]+\.(ova|qcow2|raw|vmdk)$/.exec(filename)
      return m?.[1]
    }
    case 'snippets':
      return 'snippet'
    default:
      return undefined
  }
}

export class NodeStorage {
  readonly defs: StorageDef[]
  private volumes = new Map<string, Map<string, Volume>>()
  /** storage -> owner vmid -> volids, so disk numbering stays O(disks of that guest) */
  private byOwner = new Map<string, Map<number, Set<string>>>()

  constructor(defs: StorageDef[] = DEFAULT_STORAGES) {
    this.defs = defs
    for (const d of defs) this.volumes.set(d.id, new Map())
  }

  def(id: string): StorageDef | undefined {
    return this.defs.find((d) => d.id === id)
  }

  list(id: string): Volume[] {
    return [...(this.volumes.get(id)?.values() ?? [])].sort((a, b) =>
      a.volid < b.volid ? -1 : a.volid > b.volid ? 1 : 0,
    )
  }

  get(volid: string): Volume | undefined {
    const s = splitVolid(volid)
    return s ? this.volumes.get(s[0])?.get(volid) : undefined
  }

  add(storage: string, v: Volume): void {
    const vols = this.volumes.get(storage)
    if (!vols) return
    vols.set(v.volid, v)
    const owner = volumeOwner(splitVolid(v.volid)?.[1] ?? '')
    if (owner === undefined) return
    let idx = this.byOwner.get(storage)
    if (!idx) this.byOwner.set(storage, (idx = new Map()))
    let set = idx.get(owner)
    if (!set) idx.set(owner, (set = new Set()))
    set.add(v.volid)
  }

  remove(volid: string): boolean {
    const s = splitVolid(volid)
    if (!s) return false
    const owner = volumeOwner(s[1])
    if (owner !== undefined) this.byOwner.get(s[0])?.get(owner)?.delete(volid)
    return !!this.volumes.get(s[0])?.delete(volid)
  }

  used(id: string): number {
    let n = 0
    for (const v of this.volumes.get(id)?.values() ?? []) n += v.size
    return n
  }

  /** find_free_diskname: the first N with neither vm-/base-/subvol- name taken on that storage */
  private freeDiskNumber(id: string, vmid: number): number {
    const taken = new Set<number>()
    const re = new RegExp(`(?:^|/)(?:vm|base|subvol|basevol)-${vmid}-disk-(\\d+)`)
    for (const volid of this.byOwner.get(id)?.get(vmid) ?? []) {
      const m = re.exec(volid.split(':')[1] ?? '')
      if (m && m[1]) taken.add(Number(m[1]))
    }
    let n = 0
    while (taken.has(n)) n++
    return n
  }

  /**
   * Allocates an image volume the way vdisk_alloc names it on each storage type:
   * dir `local:100/vm-100-disk-0.raw`, lvmthin `local-lvm:vm-100-disk-0`,
   * zfspool `local-zfs:vm-100-disk-0` (CT rootdir: `subvol-101-disk-0`).
   */
  allocDisk(id: string, vmid: number, size: number, opts: { format?: string; ct?: boolean; ctime: number }): Volume {
    const d = this.def(id)
    if (!d) throw new Error(`storage '${id}' does not exist`)
    const n = this.freeDiskNumber(id, vmid)
    let volid: string
    let format: string
    if (d.type === 'dir') {
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

  /** the cloud-init volume: `vm-100-cloudinit` on block storages, `100/vm-100-cloudinit.qcow2` on dir */
  allocCloudinit(id: string, vmid: number, ctime: number): Volume {
    const d = this.def(id)
    if (!d) throw new Error(`storage '${id}' does not exist`)
    const file = d.type === 'dir'
    const volid = file ? `${id}:${vmid}/vm-${vmid}-cloudinit.qcow2` : `${id}:vm-${vmid}-cloudinit`
    const v: Volume = { volid, content: 'images', format: file ? 'qcow2' : 'raw', size: 4 * 1024 * 1024, ctime, vmid }
    this.add(id, v)
    return v
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

  /** storage list item for GET /nodes/{node}/storage (pve-api.md section 5.4) */
  statusItem(d: StorageDef): Record<string, unknown> {
    const used = this.used(d.id)
    return {
      storage: d.id,
      type: d.type,
      content: [...d.content].sort().join(','),
      active: 1,
      enabled: 1,
      shared: 0,
      total: d.total,
      used,
      avail: Math.max(0, d.total - used),
      used_fraction: d.total > 0 ? used / d.total : 0,
    }
  }
}

export function volumeListItem(v: Volume): Record<string, unknown> {
  const item: Record<string, unknown> = {
    volid: v.volid,
    content: v.content,
    format: v.format,
    size: v.size,
    ctime: v.ctime,
  }
  if (v.vmid !== undefined) item.vmid = v.vmid
  if (v.parent !== undefined) item.parent = v.parent
  if (v.content === 'images' || v.content === 'rootdir') item.used = v.size
  return item
}
