/**
 * The field table of each guest kind: every PVE config key whose value is one manifest value, declared once
 * with its manifest path, how it is read from PVE and written to it, how it compares, and (where it does not
 * follow the kind's rule in disruption.ts) how a write lands on a running guest. plan() builds a guest's owned
 * fields from the table (qemu.ts, lxc.ts), adopt() reads the live keys back through the same rows, and the
 * adopt→plan property test generates live values from them. Keys with a structure of their own (volumes,
 * NICs, devices, cloud-init secrets, tags) are families with their place in the table: NICs are declared in
 * nics.ts and their volume options in volumes.ts (tokens.ts), the cloud-init and CD drives in drives.ts, the rest
 * is built by hand in qemu.ts and lxc.ts.
 */
import { splitList, type GuestType } from '@proxops/pve-client/wire'
import { formatQuantity } from '@proxops/schema'
import {
  anomaly,
  withTokens,
  flag,
  integer,
  liveBool,
  NONE,
  parsePS,
  rewrite,
  scalar,
  stringSet,
  write,
  type Owned,
} from './fields.js'

/** How a value is written to PVE and read back. */
export type Codec =
  /** a whole number; `mib`: a manifest quantity the schema parses to MiB (PVE stores MiB) */
  | { t: 'int'; mib?: boolean; defaultKey?: string }
  /** a string compared as written; `trimEnd`: PVE trims trailing whitespace on read (the description) */
  | { t: 'string'; trimEnd?: boolean }
  /** one of `values`; `liveDefault`: what PVE assumes when absent */
  | { t: 'enum'; values: readonly string[]; liveDefault?: string }
  /**
   * the head of a property string (`std` of `std,memory=32`); `liveDefault`: what PVE assumes when the key is
   * absent; `tokens`: the ones beside the head that the manifest declares elsewhere; the others are PVE's, kept
   * by a rewrite
   */
  | { t: 'head'; defaultKey: string; liveDefault?: string; tokens?: readonly HeadToken[] }
  /** qemu's machine type, compared by family (a pinned `pc-q35-8.1` is q35) */
  | { t: 'machine' }
  /**
   * PVE's 0/1; `liveDefault`: what PVE assumes when absent; `truthyOnly`: owned only when true (see
   * docs/safety.md); `defaultKey`: the flag is the head of a property string (`agent: 1,fstrim_cloned_disks=1`)
   */
  | { t: 'flag'; liveDefault: boolean; truthyOnly?: boolean; defaultKey?: string }
  /**
   * a list compared as a set, written joined by `sep` (default a space; PVE splits on spaces, commas and
   * semicolons); `read`: how PVE reads the live value when it has aliases (hotplug's `1` and `0`)
   */
  | { t: 'list'; sep?: string; read?: (live: string | undefined) => ReadonlySet<string> }

/**
 * A token beside a head that the manifest declares at `path`: `flag` a truthy-only flag (written `1`), `unsent`
 * a `;` list adopt reads and plan does not send (a gap, with `note`).
 */
export interface HeadToken {
  token: string
  path: string
  kind: 'flag' | 'unsent'
  note?: string
}

export interface FieldRow {
  /** the PVE config key */
  key: string
  /** the path under `spec` in the manifest */
  path: readonly string[]
  /** the same path as diffs and messages write it (`spec.options.onboot`) */
  field: string
  codec: Codec
  /** the disruption class of a write to a running guest when it is fixed (PVE applies it at once) */
  running?: 'none'
  /** what PVE assumes when the key is absent, which adopt writes (qemu-server's and pve-container's defaults) */
  absent?: string
  /** PVE sets the key at create only: a live difference is an anomaly (recreate), never a write or a clone's write */
  createOnly?: true
  /** the schema defaults the field to `metadata.name`: adopt writes it only when it differs */
  nameDefault?: true
  /** the adopt gap when the key is absent and `absent` is written */
  absentNote?: string
}

/**
 * A family of keys with a structure of its own (volumes, NICs, devices, cloud-init secrets, tags), still
 * built by hand in qemu.ts and lxc.ts; its place in the table is its place in a guest's field order.
 */
export interface FamilyEntry {
  family: string
}

type More = Pick<FieldRow, 'running' | 'absent' | 'createOnly' | 'nameDefault' | 'absentNote'>
const row = (key: string, path: string, codec: Codec, more: More = {}): FieldRow => ({
  key,
  path: path.split('.'),
  field: `spec.${path}`,
  codec,
  ...more,
})
const family = <F extends string>(name: F): { family: F } => ({ family: name })
const AT_ONCE = { running: 'none' } as const

const INT: Codec = { t: 'int' }
const STRING: Codec = { t: 'string' }
const LIST: Codec = { t: 'list' }
const truthy = (liveDefault: boolean): Codec => ({ t: 'flag', liveDefault, truthyOnly: true })
const tri = (liveDefault: boolean): Codec => ({ t: 'flag', liveDefault })

const HOTPLUG_DEFAULT: ReadonlySet<string> = new Set(['network', 'disk', 'usb'])
const HOTPLUG_NONE: ReadonlySet<string> = new Set()

/**
 * qemu-server's `hotplug` option as a set: `1` and absent are network,disk,usb, `0` none
 * (pve-hotplug-features). Read-only: the common sets are shared.
 */
export function hotplugSet(live: string | undefined): ReadonlySet<string> {
  if (live === undefined || live === '1') return HOTPLUG_DEFAULT
  if (live === '0' || live === '') return HOTPLUG_NONE
  return new Set(splitList(live))
}

/**
 * The table of each guest kind, in a guest's field order. Defaults (`liveDefault`, `absent`) are qemu-server's
 * and pve-container's schema defaults.
 */
export const FIELD_TABLE = {
  qemu: [
    row('name', 'pve-name', STRING, { ...AT_ONCE, nameDefault: true }),
    row('description', 'pve-description', { t: 'string', trimEnd: true }, AT_ONCE),
    // PVE may return `current=2048` for memory (PVE 8.1+ property-string form)
    row('memory', 'memory', { t: 'int', mib: true, defaultKey: 'current' }, { absent: '512' }),
    row('cores', 'cpu.cores', INT, { absent: '1' }),
    row('sockets', 'hardware.sockets', INT),
    row('numa', 'hardware.numa', tri(false)),
    row('bios', 'hardware.bios', STRING),
    row('serial0', 'hardware.serial0', STRING),
    row('onboot', 'options.onboot', truthy(false), AT_ONCE),
    row('protection', 'options.protection', truthy(false), AT_ONCE),
    row('acpi', 'options.acpi', truthy(true)),
    row('tablet', 'options.tablet', truthy(true)),
    row('startup', 'options.startup', STRING, AT_ONCE),
    // cloud-init data is written at once; the guest reads it at its next boot
    row('ciuser', 'cloud-init-data.ci-user', STRING, AT_ONCE),
    row('nameserver', 'cloud-init-data.nameservers', LIST, AT_ONCE),
    row('searchdomain', 'cloud-init-data.search-domains', LIST, AT_ONCE),
    // qemu-server's default cputype is kvm64; `hidden` hides the hypervisor from the guest
    row(
      'cpu',
      'cpu.type',
      {
        t: 'head',
        defaultKey: 'cputype',
        liveDefault: 'kvm64',
        tokens: [
          { token: 'hidden', path: 'options.hidden', kind: 'flag' },
          { token: 'flags', path: 'cpu.flags', kind: 'unsent', note: 'parsed, not sent (reference behaviour)' },
        ],
      },
      {
        absent: 'kvm64',
        absentNote:
          'PVE default kvm64 written into the manifest (the planner treats an unset cpu as kvm64, so this plans no change)',
      },
    ),
    row('machine', 'hardware.machine', { t: 'machine' }),
    row('vga', 'hardware.display', { t: 'head', defaultKey: 'type' }),
    family('devices'),
    // options: only truthy values are owned (a manifest cannot turn a live 1 off)
    row('agent', 'options.agent', { t: 'flag', liveDefault: false, truthyOnly: true, defaultKey: 'enabled' }),
    row('hotplug', 'options.hotplug', { t: 'list', sep: ',', read: hotplugSet }),
    family('boot-cloud-init'),
    family('tags'),
  ],
  lxc: [
    row('hostname', 'dns.hostname', STRING, { ...AT_ONCE, nameDefault: true }),
    row('description', 'pve-description', { t: 'string', trimEnd: true }, AT_ONCE),
    row('memory', 'memory', { t: 'int', mib: true }, { absent: '512' }),
    row('swap', 'swap', { t: 'int', mib: true }),
    row('cores', 'cpu.cores', INT),
    row('nameserver', 'dns.nameservers', LIST),
    row('searchdomain', 'dns.domain', STRING),
    row('protection', 'options.protection', tri(false), AT_ONCE),
    row('onboot', 'options.onboot', tri(false), AT_ONCE),
    row('console', 'options.console', tri(true)),
    row('startup', 'options.startup', STRING, AT_ONCE),
    // pve-container sets it from the template at create (bookkeeping in keys.ts when not declared)
    row('arch', 'arch', { t: 'enum', values: ['amd64', 'i686', 'arm64'], liveDefault: 'amd64' }),
    family('volumes-nics'),
    row('unprivileged', 'options.unprivileged', tri(false), { createOnly: true }),
    family('features'),
    family('tags'),
  ],
} as const satisfies Record<GuestType, readonly (FieldRow | FamilyEntry)[]>

/** The hand-built families of a kind, by name. */
export type FamilyOf<T extends GuestType> = Extract<(typeof FIELD_TABLE)[T][number], FamilyEntry>['family']

const isRow = (e: FieldRow | FamilyEntry): e is FieldRow => 'key' in e

const ROWS: Record<GuestType, readonly FieldRow[]> = {
  qemu: (FIELD_TABLE.qemu as readonly (FieldRow | FamilyEntry)[]).filter(isRow),
  lxc: (FIELD_TABLE.lxc as readonly (FieldRow | FamilyEntry)[]).filter(isRow),
}

/** The rows of a kind (the table without its hand-built families). */
export const tableRows = (type: GuestType): readonly FieldRow[] => ROWS[type]

const MiB = 1024 * 1024

/** The row of a key, when the table declares it. */
export function fieldRow(type: GuestType, key: string): FieldRow | undefined {
  return ROWS[type].find((r) => r.key === key)
}

function at(spec: unknown, path: readonly string[]): unknown {
  let v = spec
  for (const p of path) v = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[p] : undefined
  return v
}

/** The head of a property string (`type` of `std,memory=32`), or the whole value when it is not one. */
const headOf = (live: string, defaultKey: string): string => parsePS(live, defaultKey)?.[defaultKey] ?? live

/** qemu machine families: `q35` and `pc-q35-*` are q35, `pc`, `pc-i440fx-*` and `pc-<version>` i440fx. */
function machineFamily(live: string | undefined): 'q35' | 'i440fx' | undefined {
  const type = live === undefined ? undefined : headOf(live, 'type')
  if (type === undefined) return 'i440fx'
  if (/^(pc-)?q35/.test(type)) return 'q35'
  return /^pc(-i440fx)?(-\d|$)/.test(type) ? 'i440fx' : undefined
}

/**
 * The owned fields of a manifest's spec, in table order: a row is owned when its value is declared (a string
 * or list not empty, a truthy-only flag true); a family is what its builder returns.
 */
export function tableFields<T extends GuestType>(
  type: T,
  spec: unknown,
  families: Record<FamilyOf<T>, () => readonly Owned[]>,
  gaps: { field: string; note: string }[],
): Owned[] {
  const out: Owned[] = []
  for (const e of FIELD_TABLE[type] as readonly (FieldRow | FamilyEntry)[]) {
    if (!isRow(e)) out.push(...families[e.family as FamilyOf<T>]())
    else {
      const o = rowField(type, e, at(spec, e.path), spec)
      if (o) out.push(o)
      if (e.codec.t === 'head')
        for (const t of e.codec.tokens ?? []) {
          const v = at(spec, t.path.split('.'))
          if (t.kind === 'unsent' && Array.isArray(v) && v.length > 0)
            gaps.push({ field: `spec.${t.path}`, note: t.note ?? 'not sent' })
        }
    }
  }
  return out
}

/** One row's owned field for a declared value, or undefined when the manifest does not own the key. */
function rowField(type: GuestType, r: FieldRow, v: unknown, spec: unknown): Owned | undefined {
  const field = r.field
  const c = r.codec
  switch (c.t) {
    case 'int':
      return typeof v === 'number' ? integer(r.key, field, v, c.defaultKey) : undefined
    case 'string': {
      if (typeof v !== 'string') return undefined
      const want = c.trimEnd ? v.trimEnd() : v
      if (want === '') return undefined
      return c.trimEnd ? scalar(r.key, field, want, (s) => s.trimEnd()) : scalar(r.key, field, want)
    }
    case 'enum': {
      if (typeof v !== 'string') return undefined
      return { key: r.key, field, create: v, compare: (live) => ((live ?? c.liveDefault) === v ? NONE : [write(v)]) }
    }
    case 'head': {
      if (typeof v !== 'string') return undefined
      const dk = c.defaultKey
      const on = (c.tokens ?? []).filter((t) => t.kind === 'flag' && at(spec, t.path.split('.')) === true)
      const tokens = Object.fromEntries(on.map((t) => [t.token, '1']))
      const create = withTokens(v, tokens)
      return {
        key: r.key,
        field,
        create,
        compare: (live) => {
          const p =
            live === undefined ? (c.liveDefault === undefined ? undefined : { [dk]: c.liveDefault }) : parsePS(live, dk)
          if (p && p[dk] === v && on.every((t) => liveBool(p[t.token], false))) return NONE
          // a rewrite keeps PVE's other tokens
          return [write(p && live !== undefined ? rewrite(p, { [dk]: v, ...tokens }, dk) : create)]
        },
      }
    }
    case 'machine': {
      if (v !== 'q35' && v !== 'i440fx') return undefined
      const want = v === 'q35' ? 'q35' : 'pc'
      return { key: r.key, field, create: want, compare: (live) => (machineFamily(live) === v ? NONE : [write(want)]) }
    }
    case 'flag': {
      if (typeof v !== 'boolean' || (!v && c.truthyOnly)) return undefined
      if (r.createOnly) return createOnlyFlag(type, r, v, c.liveDefault)
      if (c.defaultKey !== undefined) return headFlag(r.key, field, v, c.liveDefault, c.defaultKey)
      return flag(r.key, field, v, c.liveDefault)
    }
    case 'list':
      return Array.isArray(v) && v.length > 0 ? stringSet(r.key, field, v as string[], c.sep ?? ' ', c.read) : undefined
  }
}

/** A flag that is the head of a property string: a change rewrites the head and keeps PVE's other tokens. */
function headFlag(key: string, field: string, desired: boolean, liveDefault: boolean, defaultKey: string): Owned {
  const value = desired ? 1 : 0
  return {
    key,
    field,
    create: value,
    compare: (live) => {
      const p = live === undefined ? undefined : parsePS(live, defaultKey)
      if (liveBool(p?.[defaultKey], liveDefault) === desired) return NONE
      return [write(live === undefined ? value : rewrite(p ?? {}, { [defaultKey]: String(value) }, defaultKey))]
    },
  }
}

/** A flag PVE sets at create only: a live difference is an anomaly, never a write. */
function createOnlyFlag(type: GuestType, r: FieldRow, want: boolean, liveDefault: boolean): Owned {
  const field = r.field
  const guest = type === 'lxc' ? 'container' : 'VM'
  return {
    key: r.key,
    field,
    create: want ? 1 : 0,
    compare: (live) => {
      const on = liveBool(live, liveDefault)
      if (on === want) return NONE
      return [
        anomaly(
          'create-only-option',
          `${r.key} is ${on ? 1 : 0} on PVE but ${field} is ${want}; PVE cannot change it on an existing ${guest} (recreate required)`,
        ),
      ]
    },
  }
}

/** Keys PVE sets at create only (never part of a clone's post-clone write). */
export const isCreateOnly = (type: GuestType, key: string): boolean => fieldRow(type, key)?.createOnly === true

/** Records what a live value holds that the manifest cannot say (adopt's gaps). */
export type GapSink = (field: string, value: string, note: string) => void

/** The tokens of a property string other than its head and the declared ones, each a gap. */
function tokenGaps(
  key: string,
  live: string,
  defaultKey: string,
  gap: GapSink,
  declared: readonly HeadToken[] = [],
): void {
  const p = parsePS(live, defaultKey)
  if (!p) return
  for (const [token, value] of Object.entries(p))
    if (token !== defaultKey && !declared.some((t) => t.token === token))
      gap(`${key}.${token}`, value, 'option not modelled')
}

/**
 * A live value as the manifest writes it (adopt), or undefined when the manifest would not declare it (a
 * truthy-only flag that is off, an empty list, a value the manifest cannot say, which `gap` records).
 */
export function fromPve(r: FieldRow, live: string, gap: GapSink = () => {}): unknown {
  const c = r.codec
  switch (c.t) {
    case 'int': {
      const text = c.defaultKey !== undefined && /[=,]/.test(live) ? parsePS(live, c.defaultKey)?.[c.defaultKey] : live
      const n = Number(text)
      return c.mib ? formatQuantity(n * MiB) : n
    }
    case 'string':
      return live === '' ? undefined : live
    case 'enum':
      if (c.values.includes(live)) return live
      gap(r.key, live, `not modelled (${c.values.join(', ')})`)
      return undefined
    case 'head':
      tokenGaps(r.key, live, c.defaultKey, gap, c.tokens)
      return headOf(live, c.defaultKey)
    case 'machine': {
      const fam = machineFamily(live)
      tokenGaps(r.key, live, 'type', gap)
      const type = headOf(live, 'type')
      if (fam === undefined) gap(r.key, live, 'machine type not modelled')
      else if (type !== 'q35' && type !== 'pc')
        gap(r.key, type, 'pinned machine version is not modelled (adopted as the family)')
      return fam
    }
    case 'flag': {
      let text: string | undefined = live
      if (c.defaultKey !== undefined) {
        tokenGaps(r.key, live, c.defaultKey, gap)
        text = parsePS(live, c.defaultKey)?.[c.defaultKey]
      }
      const on = liveBool(text, c.liveDefault)
      return c.truthyOnly && !on ? undefined : on
    }
    case 'list': {
      const items = c.read ? [...c.read(live)] : live.split(/[\s,;]+/).filter((s) => s !== '')
      // a manifest owns only a non-empty list: a value that reads as none (`hotplug: 0`) cannot be adopted
      if (items.length === 0 && live.trim() !== '')
        gap(r.key, live, 'an empty set is not modelled (only a non-empty list is owned)')
      return items.length > 0 ? items : undefined
    }
  }
}

/**
 * adopt: the manifest values of the rows under one block of the spec (`cpu`, `options`; a top-level field
 * such as `memory` is its own block), keyed by the path inside it, in table order. `take` reads a live key
 * (and marks it used); an absent key takes PVE's default when the row names one. `name` is the adopted
 * manifest's name, which fields defaulting to it are left out for.
 */
export function adoptBlock(
  type: GuestType,
  block: string,
  reader: { take: (key: string) => string | undefined; gap: GapSink },
  name?: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  const inBlock = (path: readonly string[]) => path[0] === block
  const put = (path: readonly string[], value: unknown) => {
    out[path.length === 1 ? block : path.slice(1).join('.')] = value
  }
  for (const r of ROWS[type]) {
    // tokens beside a head that the manifest declares in this block (`options.hidden` of `cpu`)
    if (r.codec.t === 'head' && !inBlock(r.path))
      for (const t of r.codec.tokens ?? []) {
        const path = t.path.split('.')
        const live = inBlock(path) ? reader.take(r.key) : undefined
        const p = live === undefined ? undefined : parsePS(live, r.codec.defaultKey)
        if (p?.[t.token] !== undefined && t.kind === 'flag' && liveBool(p[t.token], false)) put(path, true)
      }
    if (!inBlock(r.path)) continue
    const taken = reader.take(r.key)
    if (taken === undefined && r.absent !== undefined && r.absentNote !== undefined)
      reader.gap(r.key, '(unset)', r.absentNote)
    const live = taken ?? r.absent
    const value = live === undefined ? undefined : fromPve(r, live, reader.gap)
    if (value === undefined || (r.nameDefault && value === name)) continue
    put(r.path, value)
    if (r.codec.t === 'head' && live !== undefined) {
      const p = parsePS(live, r.codec.defaultKey)
      for (const t of r.codec.tokens ?? []) {
        const path = t.path.split('.')
        if (!inBlock(path) || p?.[t.token] === undefined) continue
        if (t.kind === 'unsent')
          put(
            path,
            p[t.token]!.split(';').filter((x) => x !== ''),
          )
        else if (liveBool(p[t.token], false)) put(path, true)
      }
    }
  }
  return out
}
