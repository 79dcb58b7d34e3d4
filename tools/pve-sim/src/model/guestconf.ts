import { createHash } from 'node:crypto'
import type { Cluster, Guest } from './cluster.js'
import { readBackDescription } from './config.js'
import { fail400 } from './errors.js'
import { optionType, typedValue, type GuestType, isKnownOption } from './options.js'
import { normaliseTags } from './tags.js'

/** Shared config read/write helpers for qemu and lxc. */

export const MASK = '**********'

/** GET .../config: typed values, pending merged unless `current`, cipassword masked, digest */
export function readConfig(g: Guest, current: boolean): Record<string, unknown> {
  const values = current ? g.conf.main() : g.conf.merged()
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(values).sort()) {
    const v = values[k] as string
    out[k] = k === 'cipassword' ? MASK : typedValue(g.type, k, v)
  }
  // pve-container returns raw `lxc.*` lines as an array of [key, value] pairs under `lxc` (not in /pending)
  const pairs = g.conf.lxcPairs()
  if (g.type === 'lxc' && pairs.length > 0) out.lxc = pairs
  out.digest = g.conf.digest()
  return out
}

/**
 * GET .../pending, as PVE::GuestHelpers config_with_pending_array builds it from the loaded config: one row per
 * key of the main section (`value`, plus `pending` and `delete` when set), then one per key only pending, then one
 * per pending deletion of a key the main section lacks. load_config puts the file's digest among the keys, so it
 * arrives as a row of its own. The last loop reads each deletion's parsed hash (`{force => 0|1}`), which is always
 * true, so such a row says `delete: 2` whether or not the deletion was forced.
 */
export function readPending(g: Guest): Record<string, unknown>[] {
  const main = g.conf.main()
  const pending = g.conf.pending()
  const deletes = g.conf.pendingDeletes()
  const typed = (k: string, v: string, masked: string) => (k === 'cipassword' ? masked : typedValue(g.type, k, v))
  const out: Record<string, unknown>[] = [{ key: 'digest', value: g.conf.digest() }]
  for (const [k, cur] of Object.entries(main)) {
    const row: Record<string, unknown> = { key: k, value: typed(k, cur, MASK) }
    const pen = pending[k]
    if (pen !== undefined) row.pending = typed(k, pen, `${MASK} `)
    if (deletes.has(k)) row.delete = deletes.get(k) ? 2 : 1
    out.push(row)
  }
  for (const [k, pen] of Object.entries(pending))
    if (main[k] === undefined) out.push({ key: k, pending: typed(k, pen, `${MASK} `) })
  for (const k of deletes.keys()) if (main[k] === undefined) out.push({ key: k, delete: 2 })
  // Perl hash order is unspecified; the simulator sorts by key (stable, so the loops' order breaks ties)
  return out.sort((a, b) => (String(a.key) < String(b.key) ? -1 : String(a.key) > String(b.key) ? 1 : 0))
}

/** split a `pve-configid-list` (`delete`, `revert`) */
export function splitList(text: string | undefined): string[] {
  if (!text) return []
  return text.split(/[,;\s]+/).filter((s) => s !== '')
}

/** the create_vm parameters of both guest types that are not config options (each type adds its own) */
export const CREATE_API_ONLY = ['node', 'vmid', 'storage', 'pool', 'start', 'ha-managed', 'unique', 'force', 'bwlimit']

/** the option keys of a request (everything but the API-only parameters) */
export function optionParams(params: Record<string, unknown>, apiOnly: string[]): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(params)) {
    if (apiOnly.includes(k) || v === undefined || v === null) continue
    out[k] = typeof v === 'boolean' ? (v ? '1' : '0') : String(v)
  }
  return out
}

/** values PVE stores as a canonical form: booleans as 1/0, tags, description */
export function canonicalScalar(type: GuestType, key: string, value: string): string {
  if (key === 'tags') return normaliseTags(value)
  if (key === 'description') return readBackDescription(value)
  const t = optionType(type, key)
  if (t === 'boolean') return value === 'true' || value === '1' ? '1' : value === 'false' || value === '0' ? '0' : value
  return value
}

/** cipassword is stored crypt()-hashed unless it already is one (`$1$ $5$ $6$ $2a$ $2y$`) */
export function hashPassword(c: Cluster, pw: string): string {
  if (/^\$(1|5|6|2a|2y)\$/.test(pw)) return pw
  const salt = c.rng.uuid().replace(/-/g, '').slice(0, 16)
  const h = createHash('sha256')
    .update(salt + pw)
    .digest('base64')
    .replace(/[+=]/g, '')
    .replace(/\//g, '.')
  return `$5$${salt}$${h}`
}

/** `delete`/`revert` names must be real options; an option may not be both set and deleted/reverted */
export function checkDeleteRevert(
  type: GuestType,
  options: Record<string, string>,
  del: string[],
  revert: string[],
): void {
  // the texts and error keys are PVE's own, stray quote and all (qemu-server update_vm_api)
  for (const opt of revert) {
    if (!isKnownOption(type, opt)) throw fail400({ revert: `unknown option '${opt}'` })
    if (options[opt] !== undefined)
      throw fail400({ delete: `you can't use '-${opt}' and -revert ${opt}' at the same time` })
  }
  for (const opt of del) {
    if (options[opt] !== undefined)
      throw fail400({ delete: `you can't use '-${opt}' and -delete ${opt}' at the same time` })
    if (revert.includes(opt))
      throw fail400({ revert: `you can't use '-delete ${opt}' and -revert ${opt}' at the same time` })
    if (!isKnownOption(type, opt)) throw fail400({ delete: `unknown option '${opt}'` })
  }
}

/** a boolean API parameter as the HTTP layer hands it over (JS boolean; 1/'1' when schema checks are off) */
export function flag(v: unknown): boolean {
  return v === true || v === 1 || v === '1'
}
