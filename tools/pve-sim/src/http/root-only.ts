/**
 * The root@pam-only rules (qemu-server check_vm_modify_config_perm, pve-container check_ct_modify_config_perm, qemu-server
 * migrate_vm's `force`, `migration_type` and `migration_network`), for the options ProxOps can send. API tokens act as
 * `user@realm!name`, which is never `root@pam`, so these apply to every token (also `root@pam!x`).
 * Texts and status codes follow qemu-server (`$check_vm_modify_config_perm`, `raise_param_exc` for
 * skiplock/keepActive), pve-container (`check_ct_modify_config_perm`, `raise_perm_exc` -> 403) and pve-storage
 * (`check_volume_access` for absolute paths).
 */
import type { Caller } from '../model/caller.js'
import { PveHttpError } from '../model/errors.js'
import { QEMU_DRIVE_RE, QEMU_GROUPED, QEMU_GROUPED_RE, QEMU_META } from '../access/qemu-options.js'

const ABS_PATH_DIE = 'Only root can pass arbitrary filesystem paths. at /usr/share/perl5/PVE/Storage.pm line 651.'

const perm = (what: string): PveHttpError => new PveHttpError(403, `Permission check failed (${what})`)

function propValue(prop: string, key: string): string | undefined {
  for (const part of prop.split(',')) {
    const i = part.indexOf('=')
    if (i > 0 && part.slice(0, i) === key) return part.slice(i + 1)
  }
  return undefined
}

/** the default-key value (`file`/`volume`) of a drive or mount point property string */
function volumeOf(prop: string, key: 'file' | 'volume'): string {
  const first = prop.split(',')[0] ?? ''
  return first.includes('=')
    ? (propValue(prop, key) ?? propValue(prop, key === 'file' ? 'volume' : 'file') ?? '')
    : first
}

function qemuCheck(params: Record<string, unknown>, update: boolean): PveHttpError | undefined {
  const keys = Object.keys(params)
    .filter((k) => !QEMU_META.has(k))
    .sort()
  // check_storage_access runs first: absolute paths as drive files or import sources
  for (const k of keys) {
    if (!QEMU_DRIVE_RE.test(k)) continue
    const v = String(params[k])
    const src = propValue(v, 'import-from')
    const file = volumeOf(v, 'file')
    if ((src?.startsWith('/') ?? false) || file.startsWith('/')) return new PveHttpError(500, ABS_PATH_DIE)
  }
  const deletes = typeof params.delete === 'string' ? params.delete.split(/[,;\s]+/).filter(Boolean) : []
  for (const k of [...deletes.map((d) => (d === 'cdrom' ? 'ide2' : d)), ...keys]) {
    if (!QEMU_GROUPED.has(k) && !QEMU_GROUPED_RE.test(k))
      return new PveHttpError(500, `only root can set '${k}' config`)
  }
  for (const k of keys) {
    const v = String(params[k])
    if (/^serial\d+$/.test(k) && v !== 'socket') {
      return new PveHttpError(500, `only root can ${update ? 'modify' : 'set'} '${k}' config for real devices`)
    }
    if (/^usb\d+$/.test(k)) {
      const host = propValue(v, 'host') ?? (v.split(',')[0]?.includes('=') ? undefined : v.split(',')[0])
      if (host !== undefined && !/^spice$/i.test(host))
        return new PveHttpError(500, `only root can set '${k}' config for real devices`)
    }
    if (/^hostpci\d+$/.test(k)) {
      const first = v.split(',')[0] ?? ''
      if (propValue(v, 'host') !== undefined || (first !== '' && !first.includes('='))) {
        return new PveHttpError(500, `only root can set '${k}' config for non-mapped devices`)
      }
    }
  }
  return undefined
}

function parseFeatures(v: string | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  for (const part of (v ?? '').split(',')) {
    const i = part.indexOf('=')
    if (i > 0) out[part.slice(0, i)] = part.slice(i + 1)
  }
  return out
}

function lxcCheck(
  params: Record<string, unknown>,
  old: Record<string, string> | undefined,
  create: boolean,
): PveHttpError | undefined {
  const deletes = typeof params.delete === 'string' ? params.delete.split(/[,;\s]+/).filter(Boolean) : []
  const unprivileged = create ? params.unprivileged !== false : (old?.unprivileged ?? '0') === '1'
  const check = (opt: string, del: boolean): PveHttpError | undefined => {
    if ((opt === 'rootfs' || /^mp\d+$/.test(opt)) && !del) {
      const vol = volumeOf(String(params[opt]), 'volume')
      if (vol.startsWith('/'))
        return perm(`mount point type ${vol.startsWith('/dev/') ? 'device' : 'bind'} is only allowed for root@pam`)
    } else if (/^dev\d+$/.test(opt)) {
      return perm('configuring device passthrough is only allowed for root@pam')
    } else if (opt === 'hookscript') {
      return perm('changing the hookscript is only allowed for root@pam')
    } else if (opt === 'features') {
      if (!unprivileged) return perm('changing feature flags for privileged container is only allowed for root@pam')
      const oldF = parseFeatures(old?.features)
      const newF = del ? {} : parseFeatures(String(params.features))
      const changed = new Set(
        [...Object.keys(oldF), ...Object.keys(newF)].filter((f) => (oldF[f] ?? '') !== (newF[f] ?? '')),
      )
      if (old?.features && !del) {
        if ([...changed].some((f) => f !== 'nesting'))
          return perm('changing feature flags (except nesting) is only allowed for root@pam')
      } else {
        const f = del ? oldF : newF
        const names = Object.keys(f)
        if (names.length > 0 && !(names.length === 1 && names[0] === 'nesting')) {
          return perm('changing feature flags (except nesting) is only allowed for root@pam')
        }
      }
    }
    return undefined
  }
  for (const k of Object.keys(params)) {
    const e = check(k, false)
    if (e) return e
  }
  for (const d of deletes) {
    const e = check(d, true)
    if (e) return e
  }
  return undefined
}

export interface RootOnlyInput {
  method: string
  template: string
  params: Record<string, unknown>
  caller: Caller
  /** the current config of a guest (for lxc feature changes) */
  currentConfig?: (vmid: number) => Record<string, string> | undefined
}

/** The error PVE answers when a non-root@pam caller uses a root-only option, or undefined. */
export function rootOnlyViolation(input: RootOnlyInput): PveHttpError | undefined {
  if (input.caller.actor === 'root@pam') return undefined
  const { template, method, params } = input
  if (!template.startsWith('/nodes/{node}/qemu') && !template.startsWith('/nodes/{node}/lxc')) return undefined
  if (params.skiplock === true)
    return new PveHttpError(400, 'Parameter verification failed.', { skiplock: 'Only root may use this option.' })
  if (params.keepActive === true)
    return new PveHttpError(400, 'Parameter verification failed.', { keepActive: 'Only root may use this option.' })
  if (template === '/nodes/{node}/qemu' && method === 'POST') return qemuCheck(params, false)
  if (template === '/nodes/{node}/qemu/{vmid}/config' && (method === 'PUT' || method === 'POST'))
    return qemuCheck(params, true)
  if (template === '/nodes/{node}/qemu/{vmid}/migrate' && method === 'POST') {
    // migrate_vm: `force` (local devices), the migration network and type
    for (const p of ['force', 'migration_type', 'migration_network'])
      if (params[p] !== undefined && params[p] !== false && params[p] !== '' && params[p] !== 0)
        return new PveHttpError(400, 'Parameter verification failed.', { [p]: 'Only root may use this option.' })
  }
  if (template === '/nodes/{node}/lxc' && method === 'POST') return lxcCheck(params, undefined, true)
  if (template === '/nodes/{node}/lxc/{vmid}/config' && method === 'PUT') {
    return lxcCheck(params, input.currentConfig?.(Number(params.vmid)), false)
  }
  return undefined
}
