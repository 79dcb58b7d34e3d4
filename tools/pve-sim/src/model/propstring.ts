/**
 * Property strings (`key=value,key=value`, PVE::JSONSchema parse_property_string): parsing and PVE's printing order
 * (default key bare first, then required keys sorted, then the rest alphabetically; booleans as 1/0).
 */
import { fail400 } from './errors.js'

export interface PropFormat {
  /** the key a bare value is assigned to (`file`, `model`, `volume`, ...) */
  defaultKey?: string
  /** keys printed right after the default key, sorted */
  required?: string[]
  /** boolean keys: accept 1/0/on/off/yes/no/true/false, print 1/0 */
  booleans?: string[]
  /** alias -> canonical key (`volume` -> `file` for drives) */
  aliases?: Record<string, string>
  /** keys whose presence as `key=value` means `<aliasOf>=key,<valueKey>=value` (net `virtio=<mac>`) */
  keyAlias?: { keys: string[]; aliasOf: string; valueKey: string }
}

export class PropStringError extends Error {}

export type Props = Record<string, string>

const TRUE = new Set(['1', 'on', 'yes', 'true'])
const FALSE = new Set(['0', 'off', 'no', 'false'])

/** a request parameter's property string, or the 400 that names the parameter (`invalid format - ...`) */
export function parsePropParam(key: string, text: string, fmt: PropFormat): Props {
  try {
    return parsePropString(text, fmt)
  } catch (e) {
    throw fail400({ [key]: `invalid format - ${(e as Error).message}` })
  }
}

export function parsePropString(text: string, fmt: PropFormat): Props {
  const out: Props = {}
  for (const part of text.split(',')) {
    if (part === '') continue
    const eq = part.indexOf('=')
    let key: string
    let value: string
    if (eq < 0) {
      if (!fmt.defaultKey) throw new PropStringError(`value without key, but schema does not define a default key`)
      if (out[fmt.defaultKey] !== undefined)
        throw new PropStringError(`duplicate key in comma-separated list property: ${fmt.defaultKey}`)
      key = fmt.defaultKey
      value = part
    } else {
      key = part.slice(0, eq)
      value = part.slice(eq + 1)
      if (fmt.keyAlias?.keys.includes(key)) {
        out[fmt.keyAlias.aliasOf] = key
        key = fmt.keyAlias.valueKey
      }
      key = fmt.aliases?.[key] ?? key
    }
    if (out[key] !== undefined) throw new PropStringError(`duplicate key in comma-separated list property: ${key}`)
    if (fmt.booleans?.includes(key)) {
      const v = value.toLowerCase()
      if (TRUE.has(v)) value = '1'
      else if (FALSE.has(v)) value = '0'
      else throw new PropStringError(`invalid boolean value for ${key}: ${value}`)
    }
    out[key] = value
  }
  return out
}

export function printPropString(props: Props, fmt: PropFormat): string {
  const parts: string[] = []
  const done = new Set<string>()
  const d = fmt.defaultKey
  if (fmt.keyAlias && props[fmt.keyAlias.aliasOf] !== undefined && props[fmt.keyAlias.valueKey] !== undefined) {
    // net: `virtio=BC:24:11:..` stands for model + macaddr
    parts.push(`${props[fmt.keyAlias.aliasOf]}=${props[fmt.keyAlias.valueKey]}`)
    done.add(fmt.keyAlias.aliasOf)
    done.add(fmt.keyAlias.valueKey)
  } else if (d !== undefined && props[d] !== undefined) {
    parts.push(props[d])
    done.add(d)
  }
  for (const k of [...(fmt.required ?? [])].sort()) {
    if (done.has(k) || props[k] === undefined) continue
    parts.push(`${k}=${props[k]}`)
    done.add(k)
  }
  for (const k of Object.keys(props).sort()) {
    if (done.has(k)) continue
    parts.push(`${k}=${props[k]}`)
  }
  return parts.join(',')
}

const DRIVE_BOOLS = ['backup', 'iothread', 'replicate', 'ro', 'shared', 'snapshot', 'ssd', 'detect_zeroes']

export const FORMATS = {
  drive: { defaultKey: 'file', aliases: { volume: 'file' }, booleans: DRIVE_BOOLS },
  efidisk: { defaultKey: 'file', aliases: { volume: 'file' }, booleans: ['pre-enrolled-keys'] },
  tpmstate: { defaultKey: 'file', aliases: { volume: 'file' } },
  qemuNet: {
    defaultKey: 'model',
    booleans: ['firewall', 'link_down'],
    keyAlias: {
      keys: [
        'e1000',
        'e1000-82540em',
        'e1000-82544gc',
        'e1000-82545em',
        'e1000e',
        'i82551',
        'i82557b',
        'i82559er',
        'ne2k_isa',
        'ne2k_pci',
        'pcnet',
        'rtl8139',
        'virtio',
        'vmxnet3',
      ],
      aliasOf: 'model',
      valueKey: 'macaddr',
    },
  },
  lxcMount: {
    defaultKey: 'volume',
    required: ['mp'],
    booleans: ['acl', 'backup', 'quota', 'replicate', 'ro', 'shared'],
  },
  lxcNet: { required: ['name'], booleans: ['firewall', 'link_down', 'host-managed'] },
} satisfies Record<string, PropFormat>
