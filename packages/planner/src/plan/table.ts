/**
 * The field table of each guest kind: every PVE config key whose value is one manifest value, declared once
 * with its manifest path, how it is read from PVE and written to it, how it compares, and (where it does not
 * follow the kind's rule in disruption.ts) how a write lands on a running guest. plan() builds its owned
 * fields from these rows (qemu.ts, lxc.ts), adopt() reads the live keys back through the same rows, and the
 * adopt→plan property test generates live values from them. Keys with a structure of their own (volumes,
 * NICs, devices, cloud-init secrets, tags) are built by hand beside the table, in qemu.ts and lxc.ts.
 */
import type { GuestType } from '@proxops/pve-client/wire'
import { formatQuantity } from '@proxops/schema'
import { flag, integer, liveBool, parsePS, scalar, stringSet, type Owned } from './fields.js'

/** How a value is written to PVE and read back. */
export type Codec =
  /** a whole number; `mib`: a manifest quantity the schema parses to MiB (PVE stores MiB) */
  | { t: 'int'; mib?: boolean; defaultKey?: string }
  /** a string compared as written */
  | { t: 'string' }
  /** PVE's 0/1; `liveDefault`: what PVE assumes when absent; `truthyOnly`: owned only when true (see docs/safety.md) */
  | { t: 'flag'; liveDefault: boolean; truthyOnly?: boolean }
  /** a list compared as a set, written joined by spaces (PVE splits on spaces, commas and semicolons) */
  | { t: 'list' }

export interface FieldRow {
  /** the PVE config key */
  key: string
  /** the path under `spec` in the manifest */
  path: readonly string[]
  codec: Codec
  /** the disruption class of a write to a running guest when it is fixed (PVE applies it at once) */
  running?: 'none'
  /** what PVE assumes when the key is absent, which adopt writes (qemu-server's and pve-container's defaults) */
  absent?: string
}

const row = (key: string, path: string, codec: Codec, more: Pick<FieldRow, 'running' | 'absent'> = {}): FieldRow => ({
  key,
  path: path.split('.'),
  codec,
  ...more,
})
const AT_ONCE = { running: 'none' } as const

const INT: Codec = { t: 'int' }
const STRING: Codec = { t: 'string' }
const LIST: Codec = { t: 'list' }
const truthy = (liveDefault: boolean): Codec => ({ t: 'flag', liveDefault, truthyOnly: true })
const tri = (liveDefault: boolean): Codec => ({ t: 'flag', liveDefault })

/** The rows of each guest kind. Defaults (`liveDefault`) are qemu-server's and pve-container's schema defaults. */
export const FIELD_TABLE: Record<GuestType, readonly FieldRow[]> = {
  qemu: [
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
  ],
  lxc: [
    row('memory', 'memory', { t: 'int', mib: true }, { absent: '512' }),
    row('swap', 'swap', { t: 'int', mib: true }),
    row('cores', 'cpu.cores', INT),
    row('nameserver', 'dns.nameservers', LIST),
    row('searchdomain', 'dns.domain', STRING),
    row('protection', 'options.protection', tri(false), AT_ONCE),
    row('onboot', 'options.onboot', tri(false), AT_ONCE),
    row('console', 'options.console', tri(true)),
    row('startup', 'options.startup', STRING, AT_ONCE),
  ],
}

const MiB = 1024 * 1024

/** The row of a key, when the table declares it. */
export function fieldRow(type: GuestType, key: string): FieldRow | undefined {
  return FIELD_TABLE[type].find((r) => r.key === key)
}

function at(spec: unknown, path: readonly string[]): unknown {
  let v = spec
  for (const p of path) v = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[p] : undefined
  return v
}

/** The manifest path in diffs and messages (`spec.options.onboot`). */
export const fieldPath = (r: FieldRow): string => `spec.${r.path.join('.')}`

/**
 * The owned fields the rows give for a manifest's spec: a row is owned when its value is declared (a string
 * or list not empty, a truthy-only flag true).
 */
export function tableFields(type: GuestType, spec: unknown): Owned[] {
  const out: Owned[] = []
  for (const r of FIELD_TABLE[type]) {
    const v = at(spec, r.path)
    const field = fieldPath(r)
    const c = r.codec
    if (c.t === 'int' && typeof v === 'number') out.push(integer(r.key, field, v, c.defaultKey))
    else if (c.t === 'string' && typeof v === 'string' && v !== '') out.push(scalar(r.key, field, v))
    else if (c.t === 'flag' && typeof v === 'boolean' && (v || !c.truthyOnly))
      out.push(flag(r.key, field, v, c.liveDefault))
    else if (c.t === 'list' && Array.isArray(v) && v.length > 0) out.push(stringSet(r.key, field, v as string[], ' '))
  }
  return out
}

/**
 * A live value as the manifest writes it (adopt), or undefined when the manifest would not declare it (a
 * truthy-only flag that is off, an empty list).
 */
export function fromPve(r: FieldRow, live: string): unknown {
  const c = r.codec
  switch (c.t) {
    case 'int': {
      const text = c.defaultKey !== undefined && /[=,]/.test(live) ? parsePS(live, c.defaultKey)?.[c.defaultKey] : live
      const n = Number(text)
      return c.mib ? formatQuantity(n * MiB) : n
    }
    case 'string':
      return live === '' ? undefined : live
    case 'flag': {
      const on = liveBool(live, c.liveDefault)
      return c.truthyOnly && !on ? undefined : on
    }
    case 'list': {
      const items = live.split(/[\s,;]+/).filter((s) => s !== '')
      return items.length > 0 ? items : undefined
    }
  }
}

/**
 * adopt: the manifest values of the rows under one block of the spec (`cpu`, `options`; a top-level field
 * such as `memory` is its own block), keyed by the path inside it, in table order. `take` reads a live key
 * (and marks it used); an absent key takes PVE's default when the row names one.
 */
export function adoptBlock(
  type: GuestType,
  block: string,
  take: (key: string) => string | undefined,
): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const r of FIELD_TABLE[type]) {
    if (r.path[0] !== block) continue
    const live = take(r.key) ?? r.absent
    const value = live === undefined ? undefined : fromPve(r, live)
    if (value !== undefined) out[r.path.length === 1 ? block : r.path.slice(1).join('.')] = value
  }
  return out
}
