import type { Cluster, Guest, NodeState } from './cluster.js'
import { fail400, fail500 } from './errors.js'
import { FORMATS, parsePropString, printPropString, PropStringError, type Props } from './propstring.js'
import { formatSize, gibToBytes, MiB, KiB } from './sizes.js'
import { contentDir, parseVolname, splitVolid, volumeOwner, type ContentType, type StorageDef } from './storage.js'

/**
 * Volume-backed config values (qemu drives, efidisk0, tpmstate0, lxc rootfs/mpN): what a request asks
 * for, and how PVE realises it (allocation, naming, `size=`) (PVE::QemuServer create_disks, PVE::LXC::create_disks).
 */

export type DriveRequest =
  | { kind: 'alloc'; storage: string; bytes: number; props: Props }
  /** `import-from`: the source is looked up when the disk is created (create_disks), not before */
  | { kind: 'import'; storage: string; source: string; sourceType: ContentType; props: Props }
  | { kind: 'cloudinit'; storage: string; props: Props }
  /** an existing volume (an image, or an ISO on a cdrom): looked up when the drive is written (create_disks) */
  | { kind: 'existing'; volid: string; props: Props }
  /** a value kept as sent (cdrom `none`/`cdrom`/iso, or a volume we re-print) */
  | { kind: 'verbatim'; props: Props }

export type VolumeKind = 'drive' | 'efidisk' | 'tpmstate' | 'lxcMount'

export function formatOf(kind: VolumeKind) {
  return kind === 'drive'
    ? FORMATS.drive
    : kind === 'efidisk'
      ? FORMATS.efidisk
      : kind === 'tpmstate'
        ? FORMATS.tpmstate
        : FORMATS.lxcMount
}

export function volumeKindOf(key: string, lxc: boolean): VolumeKind {
  if (lxc) return 'lxcMount'
  return key === 'efidisk0' ? 'efidisk' : key === 'tpmstate0' ? 'tpmstate' : 'drive'
}

export function parseVolumeProps(key: string, value: string, kind: VolumeKind): Props {
  try {
    return parsePropString(value, formatOf(kind))
  } catch (e) {
    if (e instanceof PropStringError) throw fail400({ [key]: `invalid format - ${e.message}` })
    throw e
  }
}

function fileKey(kind: VolumeKind): 'file' | 'volume' {
  return kind === 'lxcMount' ? 'volume' : 'file'
}

export function isCdrom(props: Props): boolean {
  return props.media === 'cdrom'
}

export function isCloudinitVolid(volid: string): boolean {
  return /(^|[:/])vm-\d+-cloudinit(\.(qcow2|raw))?$/.test(volid)
}

/**
 * Reads what a drive value asks for. Errors PVE raises before forking are thrown here:
 * 400 for parameter problems (import-from syntax, iso without media=cdrom), 500 otherwise.
 */
export function parseDriveRequest(
  node: NodeState,
  key: string,
  value: string,
  kind: VolumeKind,
  defaultStorage: string | undefined,
): DriveRequest {
  const props = parseVolumeProps(key, value, kind)
  const fk = fileKey(kind)
  let file = props[fk] ?? ''
  delete props.size // a sent size= is informational and ignored
  if (/^\d+(\.\d+)?$/.test(file)) {
    if (!defaultStorage && kind === 'lxcMount') throw fail400({ [key]: 'missing storage' })
    file = `${defaultStorage ?? 'local'}:${file}`
  }
  const importFrom = props['import-from']
  const alloc = /^([a-z][a-z0-9\-_.]*[a-z0-9]):(\d+(?:\.\d+)?)$/i.exec(file)
  if (importFrom !== undefined) {
    if (!alloc || Number(alloc[2]) !== 0) {
      throw fail400({ [key]: `'import-from' requires special syntax - use <storage ID>:0,import-from=<source>` })
    }
    const storage = alloc[1] as string
    requireImageStorage(node, storage, kind)
    // check_storage_access: the source's type comes from its name (parse_volname); it is read in the worker
    const [sourceStorage, sourceName] = splitVolid(importFrom) ?? ['', importFrom]
    const sourceType = parseVolname(storageDef(node, sourceStorage), sourceName)
    if (sourceType !== 'images' && sourceType !== 'import')
      throw fail400({ [key]: `${importFrom} has wrong type '${sourceType}' - needs to be 'images' or 'import'` })
    delete props['import-from']
    return { kind: 'import', storage, source: importFrom, sourceType, props }
  }
  if (alloc) {
    const storage = alloc[1] as string
    requireImageStorage(node, storage, kind)
    return { kind: 'alloc', storage, bytes: gibToBytes(Number(alloc[2])), props }
  }
  const ci = /^([a-z][a-z0-9\-_.]*[a-z0-9]):cloudinit$/i.exec(file)
  if (ci && kind === 'drive') {
    // check_storage_access leaves cloud-init drives alone, and vdisk_alloc checks no content type: only
    // storage_config's `does not exist` applies
    storageDef(node, ci[1] as string)
    return { kind: 'cloudinit', storage: ci[1] as string, props }
  }
  if (file === 'none' || file === 'cdrom' || !file.includes(':')) {
    if (kind === 'drive' && file !== 'none' && file !== 'cdrom')
      throw fail400({ [key]: `invalid format - invalid volume ID '${file}'` })
    return { kind: 'verbatim', props }
  }
  if (kind === 'lxcMount') {
    // a container's existing volume is looked up at once (its checks differ; see docs/gaps/simulator-model.md)
    if (!node.storage.get(file)) {
      const s = splitVolid(file)
      if (s && !node.storage.def(s[0])) throw fail500(`storage '${s[0]}' does not exist`)
      throw fail500(`volume '${file}' does not exist`)
    }
    return { kind: 'existing', volid: file, props }
  }
  // qemu-server check_storage_access, then check_drive_param: both read the type from the name
  const [storage, volname] = splitVolid(file) ?? ['', file]
  const vtype = parseVolname(storageDef(node, storage), volname)
  if (vtype !== 'images' && vtype !== 'iso') throw fail400({ [key]: `content type needs to be 'images' or 'iso'` })
  if (vtype === 'iso' && kind === 'drive' && !isCdrom(props))
    throw fail400({ [key]: `explicit 'media=cdrom' is required for iso images` })
  return { kind: 'existing', volid: file, props }
}

/** storage_config: the storage's section, or `storage 'x' does not exist` */
function storageDef(node: NodeState, storage: string): StorageDef {
  const d = node.storage.def(storage)
  if (!d) throw fail500(`storage '${storage}' does not exist`)
  return d
}

/**
 * A new volume's storage. qemu (check_storage_access): `images` content, else a 400 on `storage`. A container's
 * (PVE::LXC alloc_disk): `rootdir` content, except on a zfspool, which always takes a subvolume.
 */
function requireImageStorage(node: NodeState, storage: string, kind: VolumeKind): void {
  const d = storageDef(node, storage)
  if (kind === 'lxcMount') {
    if (!d.content.includes('rootdir') && d.type !== 'zfspool')
      throw fail500(`content type 'rootdir' is not available or configured on storage '${storage}'`)
    return
  }
  if (!d.content.includes('images')) throw fail400({ storage: `storage '${storage}' does not support vm images` })
}

/** EFI vars sizes per storage type: 4M on LVM, 528K (4m) / 128K (2m) on file/zfs */
function efiBytes(node: NodeState, storage: string, props: Props): number {
  const t = node.storage.def(storage)?.type
  if (t === 'lvmthin') return 4 * MiB
  return props.efitype === '4m' ? 528 * KiB : 128 * KiB
}

export interface Realised {
  value: string
  allocated: string[]
}

/** performs the allocation a request asks for and prints the drive as PVE stores it */
export function realiseDrive(
  c: Cluster,
  node: NodeState,
  vmid: number,
  kind: VolumeKind,
  req: DriveRequest,
  opts: { ct: boolean; format?: string },
): Realised {
  const fmt = formatOf(kind)
  const fk = fileKey(kind)
  const ctime = Math.floor(c.now() / 1000)
  const props: Props = { ...req.props }
  delete props.format
  let allocated: string[] = []
  switch (req.kind) {
    case 'alloc':
    case 'import': {
      let bytes = req.kind === 'alloc' ? req.bytes : importSourceSize(node, req.source, req.sourceType)
      if (kind === 'efidisk') bytes = efiBytes(node, req.storage, props)
      if (kind === 'tpmstate') bytes = 4 * MiB
      const format = opts.format ?? req.props.format
      const v = node.storage.allocDisk(req.storage, vmid, bytes, { ct: opts.ct, ctime, ...(format ? { format } : {}) })
      props[fk] = v.volid
      props.size = formatSize(bytes)
      allocated = [v.volid]
      break
    }
    case 'cloudinit': {
      const v = node.storage.allocCloudinit(req.storage, vmid, ctime)
      props.file = v.volid
      props.media = 'cdrom'
      allocated = [v.volid]
      break
    }
    case 'existing': {
      // create_disks: volume_size_info of the volume, which also gives an ISO on a cdrom its `size=`
      const volume = node.storage.get(req.volid)
      if (!volume) throw fail500(`volume ${req.volid} does not exist`)
      props[fk] = volume.volid
      if (!isCloudinitVolid(volume.volid)) props.size = formatSize(volume.size)
      break
    }
    case 'verbatim':
      break
  }
  return { value: printPropString(props, fmt), allocated }
}

/**
 * The size of an `import-from` source as create_disks reads it: an import file through file_size_info of its
 * path (`failed to stat`), an image through $import_from_volid's volume_size_info.
 */
function importSourceSize(node: NodeState, source: string, sourceType: ContentType): number {
  const volume = node.storage.get(source)
  if (volume) return volume.size
  const [storage, volname] = splitVolid(source) ?? ['', source]
  if (sourceType === 'import') {
    const base = node.storage.def(storage)?.path ?? '/var/lib/vz'
    throw fail500(`failed to stat '${base}/${contentDir('import')}/${volname.replace(/^import\//, '')}'`)
  }
  throw fail500(`cannot import from '${source}' - could not get size of ${source}`)
}

/** the volume id of a stored drive value, when it is a volume on a storage (not `none`, `cdrom`, iso kept) */
export function driveVolid(value: string, kind: VolumeKind): string | undefined {
  try {
    const p = parsePropString(value, formatOf(kind))
    const f = p[fileKey(kind)]
    return f && f.includes(':') ? f : undefined
  } catch {
    return undefined
  }
}

/** volumes a guest owns (named after its vmid) referenced anywhere in its config */
export function ownedVolumes(g: Guest, keys: string[], values: (k: string) => string | undefined): string[] {
  const out: string[] = []
  for (const k of keys) {
    const v = values(k)
    if (v === undefined) continue
    const lxc = g.type === 'lxc'
    const volid = driveVolid(v, volumeKindOf(k, lxc))
    if (!volid) continue
    const owner = volumeOwner(splitVolid(volid)?.[1] ?? '')
    if (owner === g.vmid) out.push(volid)
  }
  return out
}

/**
 * activate_volumes at a guest's start: the first of its own volumes (drives and mount points in use, CD drives
 * aside) that the node's local storage does not hold, as after an HA recovery to a node without the guest's local
 * disks (`volume '...' does not exist`); shared storages hold their volumes for every node
 */
export function missingVolume(g: Guest, node: NodeState): string | undefined {
  const lxc = g.type === 'lxc'
  for (const [k, v] of Object.entries(g.conf.main())) {
    if (lxc ? !(k === 'rootfs' || /^mp\d+$/.test(k)) : !/^(?:(?:ide|sata|scsi|virtio)\d+|efidisk0|tpmstate0)$/.test(k))
      continue
    if (!lxc && v.split(',').includes('media=cdrom')) continue
    const volid = driveVolid(v, volumeKindOf(k, lxc))
    const s = volid ? splitVolid(volid) : undefined
    if (!volid || !s || volumeOwner(s[1]) !== g.vmid) continue
    const d = node.storage.def(s[0])
    if (!d || d.shared) continue
    if (!node.storage.get(volid)) return volid
  }
  return undefined
}

/** first free unusedN key */
export function nextUnused(keys: Iterable<string>): string {
  const used = new Set(keys)
  let n = 0
  while (used.has(`unused${n}`)) n++
  return `unused${n}`
}
