import { createHash } from 'node:crypto'

/**
 * A guest config as PVE keeps it: a text file with a main section and an optional `[PENDING]` section
 * (PVE::QemuServer parse_vm_config / write_vm_config). The model keeps the parsed maps and renders the text lazily; the digest is
 * the SHA-1 of that text, cached until the next change.
 */
export class GuestConfig {
  private mainMap = new Map<string, string>()
  private pendingMap = new Map<string, string>()
  /** pending deletions: key -> force */
  private deletes = new Map<string, boolean>()
  /** raw `lxc.*` lines of a container config, in file order (PVE::LXC::Config parse_pct_config keeps them as pairs) */
  private rawLxc: [string, string][] = []
  /** snapshot sections `[name]`: the snapshot's copy of the config plus snaptime, snapstate, vmstate, description */
  private snaps = new Map<string, Map<string, string>>()
  private cachedText: string | undefined
  private cachedDigest: string | undefined
  /** bumped on every change, for caches derived from the config */
  version = 0

  constructor(main?: Record<string, string>) {
    if (main) for (const [k, v] of Object.entries(main)) if (!emptyDescription(k, v)) this.mainMap.set(k, v)
  }

  private touch(): void {
    this.version++
    this.cachedText = undefined
    this.cachedDigest = undefined
  }

  get(key: string): string | undefined {
    return this.mainMap.get(key)
  }

  has(key: string): boolean {
    return this.mainMap.has(key)
  }

  set(key: string, value: string): void {
    // an empty description has no comment lines, so the file cannot hold it
    if (emptyDescription(key, value)) this.mainMap.delete(key)
    else this.mainMap.set(key, value)
    this.touch()
  }

  delete(key: string): boolean {
    const had = this.mainMap.delete(key)
    this.touch()
    return had
  }

  keys(): string[] {
    return [...this.mainMap.keys()]
  }

  main(): Record<string, string> {
    return Object.fromEntries(this.mainMap)
  }

  pending(): Record<string, string> {
    return Object.fromEntries(this.pendingMap)
  }

  pendingDeletes(): Map<string, boolean> {
    return new Map(this.deletes)
  }

  getPending(key: string): string | undefined {
    return this.pendingMap.get(key)
  }

  setPending(key: string, value: string): void {
    this.pendingMap.set(key, value)
    this.deletes.delete(key)
    this.touch()
  }

  addPendingDelete(key: string, force: boolean): void {
    this.pendingMap.delete(key)
    this.deletes.set(key, force)
    this.touch()
  }

  /** drop any pending value or deletion of `key` (`revert`) */
  clearPending(key: string): void {
    this.pendingMap.delete(key)
    this.deletes.delete(key)
    this.touch()
  }

  /** the raw `lxc.*` pairs, in file order */
  lxcPairs(): [string, string][] {
    return this.rawLxc.map(([k, v]) => [k, v])
  }

  /** replace the raw `lxc.*` lines (an admin's hand edit; the API cannot write them) */
  setLxcPairs(pairs: [string, string][]): void {
    this.rawLxc = pairs.map(([k, v]) => [k, v])
    this.touch()
  }

  snapshotNames(): string[] {
    return [...this.snaps.keys()]
  }

  snapshot(name: string): Record<string, string> | undefined {
    const m = this.snaps.get(name)
    return m && Object.fromEntries(m)
  }

  /** write (or replace) a snapshot section */
  setSnapshot(name: string, values: Record<string, string>): void {
    const m = new Map<string, string>()
    for (const [k, v] of Object.entries(values)) if (!emptyDescription(k, v)) m.set(k, v)
    this.snaps.set(name, m)
    this.touch()
  }

  deleteSnapshot(name: string): void {
    this.snaps.delete(name)
    this.touch()
  }

  /** __snapshot_apply_config: the main section becomes `values`, the pending section is dropped */
  replaceMain(values: Record<string, string>): void {
    this.mainMap = new Map()
    for (const [k, v] of Object.entries(values)) if (!emptyDescription(k, v)) this.mainMap.set(k, v)
    this.pendingMap = new Map()
    this.deletes = new Map()
    this.touch()
  }

  hasPending(): boolean {
    return this.pendingMap.size > 0 || this.deletes.size > 0
  }

  /** cleanup_pending: pending values equal to the current value, and deletions of unset keys, vanish */
  cleanupPending(): void {
    for (const [k, v] of this.pendingMap) if (this.mainMap.get(k) === v) this.pendingMap.delete(k)
    for (const k of this.deletes.keys()) if (!this.mainMap.has(k)) this.deletes.delete(k)
    this.touch()
  }

  /** the config as GET shows it by default: pending values merged in, pending deletions hidden */
  merged(): Record<string, string> {
    const out = Object.fromEntries(this.mainMap)
    for (const k of this.deletes.keys()) delete out[k]
    for (const [k, v] of this.pendingMap) out[k] = v
    return out
  }

  text(): string {
    if (this.cachedText === undefined) {
      let raw = renderSection(this.mainMap)
      // write_pct_config: the raw lxc.* lines follow the sorted keys of the main section
      for (const [k, v] of this.rawLxc) raw += `${k}: ${v}\n`
      if (this.hasPending()) {
        const p = new Map(this.pendingMap)
        if (this.deletes.size > 0) {
          p.set('delete', [...this.deletes].map(([k, force]) => (force ? `!${k}` : k)).join(','))
        }
        raw += `\n[PENDING]\n${renderSection(p)}`
      }
      // write_vm_config: snapshot sections follow, sorted by name
      for (const name of [...this.snaps.keys()].sort())
        raw += `\n[${name}]\n${renderSection(this.snaps.get(name) as Map<string, string>)}`
      this.cachedText = raw
    }
    return this.cachedText
  }

  digest(): string {
    if (this.cachedDigest === undefined) this.cachedDigest = createHash('sha1').update(this.text()).digest('hex')
    return this.cachedDigest
  }

  clone(): GuestConfig {
    const c = new GuestConfig(this.main())
    for (const [k, v] of this.pendingMap) c.pendingMap.set(k, v)
    for (const [k, v] of this.deletes) c.deletes.set(k, v)
    c.rawLxc = this.lxcPairs()
    return c
  }
}

/** write_vm_config: description as leading `#` comment lines, then `key: value` sorted by key. */
function renderSection(map: Map<string, string>): string {
  let raw = ''
  const descr = map.get('description')
  if (descr !== undefined) {
    for (const line of splitLinesPerl(descr)) raw += `#${encodeText(line)}\n`
  }
  for (const k of [...map.keys()].sort()) {
    if (k === 'description') continue
    raw += `${k}: ${map.get(k)}\n`
  }
  return raw
}

/** Perl's split(/\n/, $s): trailing empty fields are dropped */
function splitLinesPerl(s: string): string[] {
  const parts = s.split('\n')
  while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop()
  return parts
}

/** PVE::Tools::encode_text: percent-escape control, non-ASCII and `:` characters (UTF-8 bytes) */
export function encodeText(s: string): string {
  let out = ''
  for (const byte of Buffer.from(s, 'utf8')) {
    const safe = (byte >= 0x20 && byte <= 0x39) || (byte >= 0x3b && byte <= 0x7e)
    out += safe ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

/**
 * The description as read back from the file: the comment lines joined with newlines,
 * trailing whitespace trimmed.
 */
export function readBackDescription(descr: string): string {
  return splitLinesPerl(descr).join('\n').replace(/\s+$/, '')
}

function emptyDescription(key: string, value: string): boolean {
  return key === 'description' && value === ''
}
