import { createHash } from 'node:crypto'
import type { Caller } from './caller.js'
import type { Cluster } from './cluster.js'
import { remoteBytes } from './control.js'
import { fail400, fail500 } from './errors.js'
import { GiB } from './sizes.js'
import { contentDir, fileFormat, isFileStorage, type ContentType } from './storage.js'

/** POST /nodes/{node}/storage/{storage}/download-url (pve-storage PVE::API2::Storage::Status download_url) */

/**
 * PVE::Storage::normalize_content_filename: a trailing newline is chomped, everything up to the last `/` or `\`
 * goes (so `dir/` leaves an empty name), and characters outside [a-zA-Z0-9_.-] become `_`.
 */
export function normaliseFilename(name: string): string {
  return name
    .replace(/\n$/, '')
    .replace(/^[^]*[/\\]/, '')
    .replace(/[^a-zA-Z0-9_.-]/g, '_')
}

/** the checksum algorithms download_file_from_url knows (PVE::Tools::get_file_hash) */
const ALGORITHMS = ['md5', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512'] as const
/** decompressor_info('iso', ...): the compressions a download can be unpacked from */
const ISO_DECOMPRESSORS = new Set(['gz', 'lzo', 'zst', 'bz2'])

/**
 * download_url's filename check per content type: ISO images need `.iso`/`.img` (any case), templates
 * `$VZTMPL_EXT_RE_1` (plain `.tar` since pve-storage 9.0.15), import files `$UPLOAD_IMPORT_EXT_RE_1` (case-sensitive,
 * no `.ovf`) with PVE's own error text.
 */
function checkExtension(c: Cluster, content: ContentType, filename: string): string {
  const format = fileFormat(content, filename, { plainTar: c.pveVersion !== '8.4' })
  if (content === 'import') {
    if (format === undefined || format === 'ovf') throw fail400({ filename: 'invalid filename or wrong extension' })
    return format
  }
  if (format === undefined) throw fail400({ filename: 'wrong file extension' })
  return format
}

export function downloadUrl(
  c: Cluster,
  nodeName: string,
  storage: string,
  params: Record<string, unknown>,
  caller: Caller,
): string {
  const node = c.requireNode(nodeName)
  // the checks before the fork, in download_url's order: storage_check_enabled, a file-based storage, the
  // configured content, the filename; activate_storage (an offline storage) comes last
  const d = node.storage.checkEnabled(storage)
  if (!isFileStorage(d.type)) throw fail500(`can't upload to storage type '${d.type}', not a file based storage!`)
  const content = String(params.content) as ContentType
  if (!d.content.includes(content))
    throw fail500(`storage '${storage}' is not configured for content-type '${content}'`)
  const filename = normaliseFilename(String(params.filename))
  const format = checkExtension(c, content, filename)
  node.storage.activate(storage)
  const url = String(params.url)
  // `if ($checksum)`: an empty checksum (or `0`) checks nothing
  const checksum =
    params.checksum === undefined || ['', '0'].includes(String(params.checksum)) ? undefined : String(params.checksum)
  const algorithm = checksum === undefined ? undefined : String(params['checksum-algorithm'])
  const compression =
    params.compression === undefined || params.compression === '' ? undefined : String(params.compression)
  const verifyCertificates = params['verify-certificates'] === undefined ? true : flagOf(params['verify-certificates'])
  const volid = `${storage}:${content}/${filename}`
  const dest = `${d.path ?? '/var/lib/vz'}/${contentDir(content)}/${filename}`
  let pid = 0
  const upid = c.dispatch(nodeName, 'download', filename, caller.actor, {
    run: (ctx) => {
      // the worker: the decompressor first, then PVE::Tools::download_file_from_url
      if (compression !== undefined) {
        if (content !== 'iso') throw new Error(`decompression not supported for ${content}`)
        if (!ISO_DECOMPRESSORS.has(compression)) throw new Error('no decompression method found')
      }
      ctx.log(`downloading ${url} to ${dest}`)
      const existing = node.storage.get(volid)
      if (existing) {
        if (checksum === undefined || algorithm === undefined)
          throw new Error(`refusing to override existing file '${dest}'`)
        const got = existing.checksums?.[algorithm] ?? standInChecksum(algorithm, volid)
        if (got === checksum.toLowerCase()) {
          ctx.log('calculating checksum of existing file...OK, got correct file already, no need to download')
          return
        }
        ctx.log('calculating checksum of existing file...')
        throw new Error(`checksum mismatch: got '${got}' != expect '${checksum}', aborting`)
      }
      const tmpDownload = `${dest}.tmp_dwnl.${pid}`
      const bytes = fetchRemote(c, url, verifyCertificates, (line) => ctx.log(line))
      const checksums: Record<string, string> = {}
      for (const a of ALGORITHMS) checksums[a] = createHash(a).update(bytes).digest('hex')
      if (checksum !== undefined && algorithm !== undefined) {
        const got = checksums[algorithm] ?? ''
        if (got !== checksum.toLowerCase()) {
          ctx.log('calculating checksum...')
          throw new Error(`checksum mismatch: got '${got}' != expect '${checksum}'`)
        }
        ctx.log('calculating checksum...OK, checksum verified')
      }
      // the decompressor's output is not modelled: the stored file is what was downloaded
      if (compression !== undefined) ctx.log(`decompressing ${tmpDownload} to ${dest}.tmp_dcom.${pid}`)
      const size = c.remoteSizes.get(url) ?? (content === 'import' ? 2 * GiB : bytes.length)
      node.storage.add(storage, { volid, content, format, size, ctime: Math.floor(c.now() / 1000), checksums })
      ctx.log(`download of '${url}' to '${dest}' finished`)
    },
  })
  pid = parseInt(upid.split(':')[2] ?? '0', 16)
  return upid
}

function flagOf(v: unknown): boolean {
  return v === true || v === 1 || v === '1'
}

/** a file the simulator holds no bytes for (a preloaded ISO, a template added by a test) still has a checksum */
function standInChecksum(algorithm: string, volid: string): string {
  return createHash(algorithm).update(`pve-sim volume ${volid}\n`).digest('hex')
}

/**
 * What wget fetches. run_command(errmsg => 'download failed') dies with wget's last stderr line; a server whose
 * certificate does not verify fails unless `verify-certificates` is 0 (`--no-check-certificate`).
 */
function fetchRemote(c: Cluster, url: string, verifyCertificates: boolean, log: (line: string) => void): Buffer {
  const bytes = remoteBytes(c, url)
  if (!Buffer.isBuffer(bytes)) throw new Error(`download failed: ${bytes.error}`)
  if (verifyCertificates && url.startsWith('https://') && c.untrustedCertificates.has(url)) {
    const host = new URL(url).hostname
    log(`ERROR: cannot verify ${host}'s certificate, issued by 'CN=${host}':`)
    log('  Self-signed certificate encountered.')
    throw new Error(`download failed: To connect to ${host} insecurely, use \`--no-check-certificate'.`)
  }
  return bytes
}
