import { createHash } from 'node:crypto'
import { fail500, PveHttpError } from './errors.js'
import { flag } from './guestconf.js'

/**
 * What the HA section configs (resources.cfg, groups.cfg, rules.cfg) share: PVE::SectionConfig's check_config /
 * delete_from_config / assert_if_modified as the HA API handlers call them, the SHA-1 `digest` of the file, and
 * PVE::HA::Config::lock_ha_domain's error prefix.
 */

export type Section = Record<string, string | number>

/** PVE::SectionConfig::assert_if_modified */
/** PVE::Tools::assert_if_modified: a `digest` given that is not the config's current one refuses the change */
export function assertDigest(digest: unknown, current: string): void {
  if (digest !== undefined && String(digest) !== current) throw fail500(HA_DIGEST_MISMATCH)
}

export const HA_DIGEST_MISMATCH = 'detected modified configuration - file changed by other user? Try again.'

/** PVE::HA::Config::lock_ha_domain: the locked code's error, prefixed with the handler's message */
export function underHaLock<T>(errmsg: string, code: () => T): T {
  try {
    return code()
  } catch (e) {
    if (!(e instanceof PveHttpError)) throw e
    // a PVE::Exception (the 400 of a rule check) is stringified: code, message and one line per error
    const text =
      e.status === 400 && e.errors
        ? [`400 ${e.message}`, ...Object.entries(e.errors).map(([k, v]) => `${k}: ${v}`)].join('\n')
        : e.message
    throw fail500(`${errmsg}: ${text}`)
  }
}

/** the SHA-1 of a section config as written: `type: id`, then one `\t<key> <value>` line per option */
export function sectionDigest<S extends Readonly<Record<string, unknown>>>(
  kind: (id: string, s: S) => string,
  ids: Iterable<[string, S]>,
): string {
  let text = ''
  for (const [id, s] of ids) {
    text += `${kind(id, s)}: ${id}\n`
    for (const k of Object.keys(s).sort()) if (k !== 'type') text += `\t${k} ${String(s[k])}\n`
    text += '\n'
  }
  return createHash('sha1').update(text).digest('hex')
}

/** PVE::Tools::split_list */
export const splitList = (v: unknown): string[] =>
  String(v ?? '')
    .split(/[,;\s]+/)
    .filter(Boolean)

/** a boolean parameter as check_value stores it (`$value + 0`) */
export const bit = (v: unknown): number => (flag(v) ? 1 : 0)

/** option -> whether it is optional, as a plugin's options() lists them */
export type SectionOptions = Readonly<Record<string, boolean>>

/**
 * PVE::SectionConfig::check_config with skipSchemaCheck (the HTTP layer checked the schema): every parameter must
 * be an option of the section type (`type` itself only with the section's own type), no value may hold a line
 * feed, and a create must give every required option. Perl walks the parameters in hash order and dies on the
 * first bad one; the simulator walks them sorted.
 */
export function checkConfig(
  type: string,
  options: SectionOptions,
  params: Record<string, unknown>,
  create: boolean,
): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(params).sort()) {
    const v = params[k]
    if (v === undefined) continue
    if (k === 'type' && v === type) continue
    if (!Object.hasOwn(options, k)) throw fail500(`unexpected property '${k}'`)
    if (/[\n\r]/.test(String(v))) throw fail500('property contains a line feed')
    out[k] = v
  }
  if (create)
    for (const k of Object.keys(options).sort())
      if (!options[k] && params[k] === undefined) throw fail500(`missing value for required option '${k}'`)
  return out
}

/**
 * PVE::SectionConfig::delete_from_config (rules) and the same loop written out in the resources and groups
 * handlers, which lack the set-and-delete check (`setAndDelete`)
 */
export function deleteOptions(
  section: Record<string, unknown>,
  options: SectionOptions,
  set: Record<string, unknown>,
  del: unknown,
  setAndDelete: boolean,
): void {
  for (const k of splitList(del)) {
    if (!Object.hasOwn(options, k)) throw fail500(`no such option '${k}'`)
    if (!options[k]) throw fail500(`unable to delete required option '${k}'`)
    if (setAndDelete && set[k] !== undefined) throw fail500(`cannot set and delete property '${k}' at the same time!`)
    delete section[k]
  }
}
