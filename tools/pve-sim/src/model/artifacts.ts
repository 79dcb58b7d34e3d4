import { createHash } from 'node:crypto'
import type { Caller } from '../http/types.js'
import type { Cluster } from './cluster.js'
import { remoteBytes } from './control.js'
import { fail400, fail500 } from './errors.js'
import { GiB } from './sizes.js'
import { contentDir, fileFormat, isFileStorage, type ContentType } from './storage.js'

/** POST /nodes/{node}/storage/{storage}/download-url (PVE::API2::Storage::Status download_url) */

/** the filename PVE keeps: path stripped, characters outside [a-zA-Z0-9_.-] replaced by `_` */
export function normaliseFilename(name: string): string {
  const base =
    name
      .split('/')
      .filter((p) => p !== '')
      .slice(-1)[0] ?? ''
  return base.replace(/[^a-zA-Z0-9_.-]/g, '_')
}

export function downloadUrl(
  c: Cluster,
  nodeName: string,
  storage: string,
  params: Record<string, unknown>,
  caller: Caller,
): string {
  const node = c.requireNode(nodeName)
  const d = node.storage.activate(storage)
  if (!isFileStorage(d.type)) throw fail500(`can't upload to storage type '${d.type}', not a file based storage!`)
  const content = String(params.content) as ContentType
  if (!d.content.includes(content))
    throw fail500(`storage '${storage}' is not configured for content-type '${content}'`)
  const filename = normaliseFilename(String(params.filename))
  const format = fileFormat(content, filename)
  if (format === undefined) throw fail400({ filename: 'wrong file extension' })
  const url = String(params.url)
  const checksum = params.checksum === undefined ? undefined : String(params.checksum).toLowerCase()
  const algorithm = params['checksum-algorithm'] === undefined ? undefined : String(params['checksum-algorithm'])
  const compression = params.compression === undefined ? undefined : String(params.compression)
  const volid = `${storage}:${content}/${filename}`
  const path = `${d.path ?? '/var/lib/vz'}/${contentDir(content)}/${filename}`
  return c.dispatch(nodeName, 'download', filename, caller.actor, {
    run: (ctx) => {
      if (compression !== undefined && content !== 'iso') throw new Error(`decompression not supported for ${content}`)
      const existing = node.storage.get(volid)
      if (existing) {
        if (checksum === undefined || algorithm === undefined)
          throw new Error(`refusing to override existing file '${path}'`)
        const got = existing.checksums?.[algorithm]
        if (got === checksum) {
          ctx.log('OK, got correct file already, no need to download')
          return
        }
        throw new Error(`checksum mismatch: got '${got ?? 'unknown'}' != expect '${checksum}', aborting`)
      }
      ctx.log(`downloading ${url} to ${path}`)
      const bytes = remoteBytes(c, url)
      if (!Buffer.isBuffer(bytes)) throw new Error(`download failed: ${bytes.error}`)
      const checksums: Record<string, string> = {}
      for (const a of ['md5', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512'])
        checksums[a] = createHash(a).update(bytes).digest('hex')
      if (checksum !== undefined && algorithm !== undefined) {
        ctx.log(`calculating checksum...`)
        if (checksums[algorithm] !== checksum)
          throw new Error(`checksum mismatch: got '${checksums[algorithm]}' != expect '${checksum}'`)
        ctx.log('checksum verified')
      }
      const size = c.remoteSizes.get(url) ?? (content === 'import' ? 2 * GiB : bytes.length)
      node.storage.add(storage, { volid, content, format, size, ctime: Math.floor(c.now() / 1000), checksums })
      ctx.log(`download of '${url}' to '${path}' finished`)
    },
  })
}
