import type { Cluster } from '../model/cluster.js'
import { fail400, fail500, LXC_DIGEST_MISMATCH } from '../model/errors.js'
import { GiB } from '../model/sizes.js'
import { isStorageType, STORAGE_TYPES, type ContentType, type StorageDef, type StorageType } from '../model/storage.js'
import { bool, str, type RouteTable } from './params.js'

/** options each modelled plugin requires on create (its `options` entries without `optional`) */
const REQUIRED: Record<StorageType, string[]> = {
  dir: ['path'],
  nfs: ['server', 'export'],
  cifs: ['server', 'share'],
  cephfs: [],
  lvmthin: ['vgname', 'thinpool'],
  lvm: ['vgname'],
  zfspool: ['pool'],
  rbd: [],
  btrfs: ['path'],
  pbs: ['server', 'datastore'],
}

/**
 * each plugin's `fixed` options: SectionConfig check_config dies `can't change value of fixed parameter` when an
 * update names one, even with its current value, and the update handler refuses to delete one
 */
const FIXED: Record<StorageType, readonly string[]> = {
  dir: ['path', 'snapshot-as-volume-chain'],
  nfs: ['path', 'server', 'export', 'snapshot-as-volume-chain'],
  cifs: ['path', 'server', 'share', 'snapshot-as-volume-chain'],
  cephfs: [],
  lvmthin: ['thinpool', 'vgname'],
  lvm: ['vgname', 'base'],
  zfspool: ['pool'],
  rbd: [],
  btrfs: ['path'],
  pbs: ['server', 'datastore'],
}

/**
 * Plugin::sensitive_properties (each plugin's `sensitive-properties`): extract_sensitive_params takes them out of
 * the request before check_config, the on_add/on_update hooks keep them under /etc/pve/priv, and storage.cfg (so
 * every listing) never holds them
 */
const SENSITIVE: Record<StorageType, readonly string[]> = {
  dir: [],
  nfs: [],
  cifs: ['password'],
  cephfs: ['keyring'],
  lvmthin: [],
  lvm: [],
  zfspool: [],
  rbd: ['keyring'],
  btrfs: [],
  pbs: ['encryption-key', 'master-pubkey', 'password'],
}
/**
 * each modelled plugin's `options` (pve-storage's Plugin subclasses): SectionConfig check_config refuses any other
 * property of a create or update with `unexpected property 'x'` (`shared` exists for dir and lvm only: nfs, cifs,
 * cephfs and rbd are shared by type)
 */
const OPTIONS: Record<StorageType, ReadonlySet<string>> = {
  dir: new Set([
    'path',
    'content-dirs',
    'nodes',
    'shared',
    'disable',
    'prune-backups',
    'max-protected-backups',
    'content',
    'format',
    'mkdir',
    'create-base-path',
    'create-subdirs',
    'is_mountpoint',
    'bwlimit',
    'preallocation',
    'snapshot-as-volume-chain',
  ]),
  nfs: new Set([
    'path',
    'content-dirs',
    'server',
    'export',
    'nodes',
    'disable',
    'prune-backups',
    'max-protected-backups',
    'options',
    'content',
    'format',
    'mkdir',
    'create-base-path',
    'create-subdirs',
    'bwlimit',
    'preallocation',
    'snapshot-as-volume-chain',
  ]),
  cifs: new Set([
    'path',
    'content-dirs',
    'server',
    'share',
    'subdir',
    'nodes',
    'disable',
    'prune-backups',
    'max-protected-backups',
    'content',
    'format',
    'username',
    'password',
    'domain',
    'smbversion',
    'mkdir',
    'create-base-path',
    'create-subdirs',
    'bwlimit',
    'preallocation',
    'options',
    'snapshot-as-volume-chain',
  ]),
  cephfs: new Set([
    'path',
    'content-dirs',
    'monhost',
    'nodes',
    'subdir',
    'disable',
    'options',
    'username',
    'content',
    'format',
    'mkdir',
    'create-base-path',
    'create-subdirs',
    'fuse',
    'bwlimit',
    'keyring',
    'prune-backups',
    'max-protected-backups',
    'fs-name',
  ]),
  lvmthin: new Set(['thinpool', 'vgname', 'nodes', 'disable', 'content', 'bwlimit']),
  lvm: new Set([
    'vgname',
    'nodes',
    'shared',
    'disable',
    'saferemove',
    'saferemove-stepsize',
    'saferemove_throughput',
    'content',
    'base',
    'tagged_only',
    'bwlimit',
    'snapshot-as-volume-chain',
  ]),
  zfspool: new Set(['pool', 'blocksize', 'sparse', 'nodes', 'disable', 'content', 'bwlimit', 'mountpoint']),
  rbd: new Set([
    'nodes',
    'disable',
    'monhost',
    'pool',
    'data-pool',
    'namespace',
    'username',
    'content',
    'krbd',
    'keyring',
    'bwlimit',
  ]),
  btrfs: new Set([
    'path',
    'nodes',
    'shared',
    'disable',
    'prune-backups',
    'max-protected-backups',
    'content',
    'format',
    'is_mountpoint',
    'nocow',
    'mkdir',
    'create-base-path',
    'create-subdirs',
    'preallocation',
  ]),
  pbs: new Set([
    'server',
    'datastore',
    'namespace',
    'port',
    'nodes',
    'disable',
    'content',
    'username',
    'password',
    'encryption-key',
    'master-pubkey',
    'prune-backups',
    'max-protected-backups',
    'fingerprint',
  ]),
}

/**
 * PBSPlugin on_add_hook / on_update_hook: the key file is kept in priv, storage.cfg gets the key's fingerprint
 * (or 1) as `encryption-key`, and `master-pubkey 1`; the create/update answer returns the key in `config`
 */
function pbsKeys(
  sensitive: Record<string, string>,
  extra: Record<string, string>,
  priv: Record<string, string>,
): Record<string, string> | undefined {
  const key = sensitive['encryption-key']
  let config: Record<string, string> | undefined
  if (key !== undefined) {
    let decoded: unknown
    try {
      decoded = JSON.parse(key)
    } catch {
      decoded = undefined
    }
    if (typeof decoded !== 'object' || decoded === null || !('data' in decoded))
      throw fail500('Value does not seems like a valid, JSON formatted encryption key!')
    const fp = (decoded as { fingerprint?: unknown }).fingerprint
    extra['encryption-key'] = typeof fp === 'string' && fp !== '' ? fp : '1'
    priv['encryption-key'] = key
    config = { 'encryption-key': key }
  }
  const master = sensitive['master-pubkey']
  if (master !== undefined) {
    if (extra['encryption-key'] === undefined)
      throw fail500(`'master-pubkey' can only be used together with 'encryption-key'`)
    priv['master-pubkey'] = master
    extra['master-pubkey'] = '1'
  }
  return config
}

/** SectionConfig check_config's `unexpected property` for a parameter the type's plugin has no option for */
function checkOptions(type: StorageType, params: Record<string, unknown>, skip: readonly string[]): void {
  for (const k of Object.keys(params).sort())
    if (params[k] !== undefined && !skip.includes(k) && !OPTIONS[type].has(k))
      throw fail500(`unexpected property '${k}'`)
}

/** a parameter as storage.cfg stores it: booleans (the handlers get them decoded) as 1 / 0 */
const cfgValue = (v: unknown): string => (v === true ? '1' : v === false ? '0' : String(v))

/** keys the model keeps in StorageDef fields; everything else is stored verbatim in `extra` */
const MODELLED = new Set(['storage', 'type', 'content', 'nodes', 'disable', 'shared', 'path', 'digest', 'delete'])

/** GET /storage item (api_storage_config): the section, `storage`, `digest`, content and nodes as lists */
function apiConfig(c: Cluster, d: StorageDef): Record<string, unknown> {
  const item: Record<string, unknown> = {
    storage: d.id,
    type: d.type,
    content: [...d.content].sort().join(',') || 'none',
    digest: c.storage.digest(),
  }
  if (d.path !== undefined) item.path = d.path
  if (d.nodes !== undefined) item.nodes = d.nodes.join(',')
  if (d.disable) item.disable = 1
  if (d.shared) item.shared = 1
  for (const [k, v] of Object.entries(d.extra)) item[k] = /^\d+$/.test(v) ? Number(v) : v
  return item
}

/** decode_value for `content`: unsupported types are dropped (PVE warns), none left is an error */
function decodeContent(type: StorageType, value: string): ContentType[] {
  const allowed = STORAGE_TYPES[type].content as string[]
  const out = [...new Set(value.split(/[,;\s]+/).filter((c) => c !== '' && allowed.includes(c)))] as ContentType[]
  if (out.length === 0 && value.split(/[,;\s]+/).some((c) => c !== '' && c !== 'none'))
    throw fail500(`storage does not support content type 'none'`)
  return out.sort()
}

function decodeNodes(value: string): string[] | undefined {
  const nodes = [...new Set(value.split(/[,;\s]+/).filter((n) => n !== ''))].sort()
  return nodes.length > 0 ? nodes : undefined
}

/** /storage (pve-storage PVE::API2::Storage::Config: index, read, create, update, delete) */
export function storageConfigRoutes(c: Cluster): RouteTable {
  const need = (id: string): StorageDef => {
    const d = c.storage.get(id)
    if (!d) throw fail500(`storage '${id}' does not exist`)
    return d
  }
  return [
    [
      'GET',
      '/storage',
      (ctx) => {
        const type = str(ctx, 'type')
        return c.storage
          .all()
          .filter((d) => type === undefined || d.type === type)
          .map((d) => apiConfig(c, d))
      },
    ],
    ['GET', '/storage/{storage}', (ctx) => apiConfig(c, need(str(ctx, 'storage') ?? ''))],
    [
      'POST',
      '/storage',
      (ctx) => {
        const id = str(ctx, 'storage') ?? ''
        const typeName = str(ctx, 'type') ?? ''
        if (!isStorageType(typeName)) throw fail500(`storage type '${typeName}' is not modelled by pve-sim`)
        const type: StorageType = typeName
        const missing = REQUIRED[type].filter((k) => str(ctx, k) === undefined)
        if (missing.length > 0)
          throw fail400(Object.fromEntries(missing.map((k) => [k, 'property is missing and it is not optional'])))
        checkOptions(type, ctx.params, ['storage', 'type'])
        const sensitive: Record<string, string> = {}
        for (const k of SENSITIVE[type]) if (ctx.params[k] !== undefined) sensitive[k] = cfgValue(ctx.params[k])
        const extra: Record<string, string> = {}
        for (const [k, v] of Object.entries(ctx.params))
          if (!MODELLED.has(k) && v !== undefined && !(k in sensitive)) extra[k] = cfgValue(v)
        const priv: Record<string, string> = {}
        if (c.storage.get(id)) throw fail500(`create storage failed: storage ID '${id}' already defined`)
        let config: Record<string, string> | undefined
        if (type === 'pbs') {
          if (sensitive.password !== undefined) priv.password = sensitive.password
          config = pbsKeys(sensitive, extra, priv)
        } else Object.assign(priv, sensitive)
        const info = STORAGE_TYPES[type]
        const contentParam = str(ctx, 'content')
        const d: StorageDef = {
          id,
          type,
          content: contentParam === undefined ? [...info.defaultContent].sort() : decodeContent(type, contentParam),
          total: type === 'nfs' || type === 'cifs' || type === 'cephfs' || type === 'rbd' ? 2000 * GiB : 500 * GiB,
          // parse_config: these types are shared whatever the flag says
          shared: info.shared || bool(ctx, 'shared') === true,
          extra,
        }
        if (info.file) d.path = str(ctx, 'path') ?? `/mnt/pve/${id}`
        const nodes = decodeNodes(str(ctx, 'nodes') ?? '')
        if (nodes) d.nodes = nodes
        if (bool(ctx, 'disable') === true) d.disable = true
        c.storage.set(d)
        if (Object.keys(priv).length > 0) c.storage.priv.set(id, priv)
        return { storage: id, type, ...(config ? { config } : {}) }
      },
    ],
    [
      'PUT',
      '/storage/{storage}',
      (ctx) => {
        const id = str(ctx, 'storage') ?? ''
        const digest = str(ctx, 'digest')
        if (digest !== undefined && digest !== c.storage.digest())
          throw fail500(`update storage failed: ${LXC_DIGEST_MISMATCH}`)
        const cur = need(id)
        const d: StorageDef = { ...cur, extra: { ...cur.extra } }
        try {
          checkOptions(cur.type, ctx.params, ['storage', 'digest', 'delete'])
        } catch (e) {
          throw fail500(`update storage failed: ${(e as Error).message}`)
        }
        const deletes = (str(ctx, 'delete') ?? '').split(/[,;\s]+/).filter((k) => k !== '')
        const sensitive: Record<string, string> = {}
        for (const k of SENSITIVE[cur.type]) if (ctx.params[k] !== undefined) sensitive[k] = cfgValue(ctx.params[k])
        for (const k of Object.keys(ctx.params).sort())
          if (FIXED[cur.type].includes(k) && ctx.params[k] !== undefined)
            throw fail500(`update storage failed: can't change value of fixed parameter '${k}'`)
        for (const k of deletes) {
          if (!OPTIONS[cur.type].has(k)) throw fail500(`update storage failed: no such option '${k}'`)
          if (REQUIRED[cur.type].includes(k))
            throw fail500(`update storage failed: unable to delete required option '${k}'`)
          if (FIXED[cur.type].includes(k)) throw fail500(`update storage failed: unable to delete fixed option '${k}'`)
          if (ctx.params[k] !== undefined)
            throw fail500(`update storage failed: cannot set and delete property '${k}' at the same time!`)
          if (k === 'nodes') delete d.nodes
          else if (k === 'disable') delete d.disable
          else if (k === 'content') d.content = []
          else if (k === 'shared' && !STORAGE_TYPES[d.type].shared) d.shared = false
          else delete d.extra[k]
        }
        // the on_update hooks: a sensitive value sent replaces the priv file, a deleted one removes it
        const priv: Record<string, string> = { ...(c.storage.priv.get(id) ?? {}) }
        for (const k of deletes) if (SENSITIVE[cur.type].includes(k)) delete priv[k]
        let config: Record<string, string> | undefined
        if (cur.type === 'pbs') {
          if (sensitive.password !== undefined) priv.password = sensitive.password
          config = pbsKeys(sensitive, d.extra, priv)
        } else Object.assign(priv, sensitive)
        for (const [k, v] of Object.entries(ctx.params)) {
          if (v === undefined || k === 'storage' || k === 'digest' || k === 'delete' || k in sensitive) continue
          const value = cfgValue(v)
          if (k === 'content') d.content = decodeContent(d.type, value)
          else if (k === 'nodes') {
            const nodes = decodeNodes(value)
            if (nodes) d.nodes = nodes
            else delete d.nodes
          } else if (k === 'disable') {
            if (value === '1') d.disable = true
            else delete d.disable
          } else if (k === 'shared') d.shared = STORAGE_TYPES[d.type].shared || value === '1'
          else d.extra[k] = value
        }
        c.storage.set(d)
        if (Object.keys(priv).length > 0) c.storage.priv.set(id, priv)
        else c.storage.priv.delete(id)
        return { storage: id, type: d.type, ...(config ? { config } : {}) }
      },
    ],
    [
      'DELETE',
      '/storage/{storage}',
      (ctx) => {
        const id = str(ctx, 'storage') ?? ''
        need(id)
        c.storage.delete(id)
        // AccessControl remove_storage_access, once storage.cfg is written: the ACLs on /storage/<id> go and the
        // storage leaves every pool
        c.aclCleanup.storage(id)
        for (const e of c.pools.pools.values()) e.storage.delete(id)
        return null
      },
    ],
  ]
}
