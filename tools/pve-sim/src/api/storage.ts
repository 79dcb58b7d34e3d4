import type { Cluster } from '../model/cluster.js'
import { downloadUrl } from '../model/artifacts.js'
import { fail400, fail500 } from '../model/errors.js'
import { contentDir, isFileStorage, splitVolid, volumeListItem, type Volume } from '../model/storage.js'
import { formatSize } from '../model/sizes.js'
import { bool, int, str, type RouteTable } from './params.js'

/** /nodes/{node}/storage... */
export function storageRoutes(c: Cluster): RouteTable {
  const storageOf = (node: string, id: string) => {
    const n = c.requireNode(node)
    const d = n.storage.def(id)
    if (!d) throw fail500(`storage '${id}' does not exist`)
    return { n, d }
  }
  /** the storage, activated as the content handlers do before touching volumes (activate_storage) */
  const activeStorage = (node: string, id: string) => {
    const { n } = storageOf(node, id)
    return { n, d: n.storage.activate(id) }
  }
  const volumeOf = (node: string, id: string, volume: string): Volume => {
    const { n } = activeStorage(node, id)
    const volid = splitVolid(volume) ? volume : `${id}:${volume}`
    const v = n.storage.get(volid)
    if (!v) throw fail500(`can't find volume '${volid}'`)
    return v
  }
  return [
    [
      'GET',
      '/nodes/{node}/storage',
      (ctx) => {
        const n = c.requireNode(str(ctx, 'node') ?? '')
        const content = str(ctx, 'content')?.split(',')
        const only = str(ctx, 'storage')
        const enabledOnly = bool(ctx, 'enabled') === true
        // storage_info: every configured storage; with `content`, only enabled ones offering one of the types
        const items = c.storage
          .all()
          .filter(
            (d) =>
              !content ||
              (!d.disable && c.storage.onNode(d, n.name) && content.some((ct) => (d.content as string[]).includes(ct))),
          )
          .map((d) => n.storage.statusItem(d))
        if (only !== undefined && !items.some((i) => i.storage === only)) throw fail400({ storage: 'No such storage.' })
        return items.filter((i) => (only === undefined || i.storage === only) && (!enabledOnly || i.enabled === 1))
      },
    ],
    [
      'GET',
      '/nodes/{node}/storage/{storage}',
      (ctx) => {
        storageOf(str(ctx, 'node') ?? '', str(ctx, 'storage') ?? '')
        return [
          'content',
          'download-url',
          'file-restore',
          'import-metadata',
          'prunebackups',
          'rrd',
          'rrddata',
          'status',
          'upload',
        ].map((subdir) => ({ subdir }))
      },
    ],
    [
      'GET',
      '/nodes/{node}/storage/{storage}/status',
      (ctx) => {
        const { n, d } = storageOf(str(ctx, 'node') ?? '', str(ctx, 'storage') ?? '')
        // storage_check_enabled, then storage_info of that storage
        if (d.disable) throw fail500(`storage '${d.id}' is disabled`)
        if (!c.storage.onNode(d, n.name)) throw fail500(`storage '${d.id}' is not available on node '${n.name}'`)
        const s = n.storage.statusItem(d)
        delete s.storage
        delete s.used_fraction
        return s
      },
    ],
    [
      'GET',
      '/nodes/{node}/storage/{storage}/content',
      (ctx) => {
        const { n, d } = activeStorage(str(ctx, 'node') ?? '', str(ctx, 'storage') ?? '')
        const content = str(ctx, 'content')
        const vmid = int(ctx, 'vmid')
        return n.storage
          .volumeList(d.id, { ...(content !== undefined ? { content } : {}), ...(vmid !== undefined ? { vmid } : {}) })
          .map((v) => volumeListItem(v, d.type))
      },
    ],
    [
      'POST',
      '/nodes/{node}/storage/{storage}/content',
      (ctx) => {
        const { n, d } = activeStorage(str(ctx, 'node') ?? '', str(ctx, 'storage') ?? '')
        const vmid = int(ctx, 'vmid') ?? 0
        const filename = str(ctx, 'filename') ?? ''
        const m = /^(\d+)([MG])?$/.exec(str(ctx, 'size') ?? '')
        if (!m) throw fail500(`unable to parse size '${str(ctx, 'size')}'`)
        const kib = Number(m[1]) * (m[2] === 'G' ? 1024 * 1024 : m[2] === 'M' ? 1024 : 1)
        // vdisk_alloc: the name must belong to the owner, file storages keep an extension
        if (!new RegExp(`^(vm|base|subvol)-${vmid}-\\S+$`).test(filename))
          throw fail500(`illegal name '${filename}' - should be 'vm-${vmid}-*'`)
        const format = str(ctx, 'format') ?? /\.(qcow2|vmdk|raw)$/.exec(filename)?.[1] ?? 'raw'
        const volname = isFileStorage(d.type) ? `${vmid}/${filename}` : filename
        const volid = `${d.id}:${volname}`
        // vdisk_alloc runs under the storage lock
        n.storage.lockStorage(d.id)
        if (n.storage.get(volid)) throw fail500(`volume '${volid}' already exists`)
        n.storage.add(d.id, {
          volid,
          content: 'images',
          format,
          size: kib * 1024,
          ctime: Math.floor(c.now() / 1000),
          vmid,
        })
        return volid
      },
    ],
    [
      'GET',
      '/nodes/{node}/storage/{storage}/content/{volume}',
      (ctx) => {
        const node = str(ctx, 'node') ?? ''
        const id = str(ctx, 'storage') ?? ''
        const v = volumeOf(node, id, str(ctx, 'volume') ?? '')
        const { d } = storageOf(node, id)
        const volname = v.volid.split(':').slice(1).join(':')
        const path = isFileStorage(d.type)
          ? `${d.path ?? '/var/lib/vz'}/${contentDir(v.content)}/${volname.replace(/^(iso|vztmpl|import|snippets|backup)\//, '')}`
          : d.type === 'lvmthin' || d.type === 'lvm'
            ? `/dev/${d.extra.vgname ?? 'pve'}/${volname.split('/').slice(-1)[0]}`
            : d.type === 'rbd'
              ? `/dev/rbd-pve/${d.extra.pool ?? 'rbd'}/${volname.split('/').slice(-1)[0]}`
              : `/dev/zvol/${d.extra.pool ?? 'rpool/data'}/${volname.split('/').slice(-1)[0]}`
        return { path, size: v.size, used: v.size, format: v.format }
      },
    ],
    [
      'DELETE',
      '/nodes/{node}/storage/{storage}/content/{volume}',
      (ctx) => {
        const node = str(ctx, 'node') ?? ''
        const v = volumeOf(node, str(ctx, 'storage') ?? '', str(ctx, 'volume') ?? '')
        const n = c.requireNode(node)
        // vdisk_free checks (lock, base in use) before it forks the imgdel worker
        n.storage.lockStorage(v.volid.split(':')[0] ?? '')
        if (n.storage.isBaseAndUsed(v.volid))
          throw fail500(`base volume '${v.volid.split(':').slice(1).join(':')}' is still in use by linked clones`)
        const upid = c.dispatch(node, 'imgdel', v.volid.replace(/[:/]/g, '_'), ctx.caller.actor, {
          run: (tctx) => {
            n.storage.remove(v.volid)
            tctx.log(`Removed volume '${v.volid}' (${formatSize(v.size)})`)
          },
        })
        const delay = int(ctx, 'delay')
        if (delay !== undefined) {
          const t = c.tasks.get(upid)
          if (t && t.endMs - t.startMs <= delay * 1000) {
            c.tasks.finishNow(t)
            return null
          }
        }
        return upid
      },
    ],
    [
      'POST',
      '/nodes/{node}/storage/{storage}/download-url',
      (ctx) => downloadUrl(c, str(ctx, 'node') ?? '', str(ctx, 'storage') ?? '', ctx.params, ctx.caller),
    ],
  ]
}
