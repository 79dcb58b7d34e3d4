/**
 * The NIC family of both guest kinds (`net<N>`): each property-string token declared once with its manifest
 * field, driving the create form, the compare (a rewrite keeps the live MAC and every token nobody declares)
 * and adopt. A qemu NIC's head is `<model>=<mac>` (qemu-server's parse_net); a container's is `name=`.
 */
import type { GuestType } from '@proxops/pve-client/wire'
import type { LxcNic, VmNic } from '@proxops/schema'
import { anomaly, liveBool, NONE, parsePS, rewrite, withTokens, write, type Outcome, type Owned } from './fields.js'
import { QEMU_NIC_MODELS } from './keys.js'
import type { GapSink } from './table.js'

export interface NicToken {
  /** the PVE token */
  token: string
  /** the field of the manifest's NIC entry */
  field: string
  /** `flag`: only true is owned (PVE's 0 default); `mac`: compared and written upper-case */
  codec: 'string' | 'int' | 'flag' | 'mac'
  /** a declared value at or below it means "not set": neither sent nor compared (an LXC's tag 0) */
  none?: number
  /** sent on create, never compared (an LXC NIC's type) */
  compare?: false
  /** PVE assigns it (a MAC): never adopted, never a gap */
  adopt?: false
  /** adopt leaves out this live value (PVE's default) */
  omit?: string
  /** sent on create when the manifest leaves the field out */
  createDefault?: (slot: string) => string
}

/** The tokens of each kind's NIC, in create order. */
export const NIC_TOKENS: Record<GuestType, readonly NicToken[]> = {
  qemu: [
    { token: 'bridge', field: 'bridge', codec: 'string' },
    { token: 'tag', field: 'vlan', codec: 'int' },
    { token: 'rate', field: 'rate-limit', codec: 'int' },
    { token: 'firewall', field: 'firewall', codec: 'flag' },
  ],
  lxc: [
    // pve-container names the interface eth<N> for net<N> when the manifest does not
    { token: 'name', field: 'iface', codec: 'string', createDefault: ethName },
    { token: 'bridge', field: 'bridge', codec: 'string' },
    { token: 'type', field: 'type', codec: 'string', compare: false, omit: 'veth' },
    { token: 'tag', field: 'tag', codec: 'int', none: 0 },
    { token: 'hwaddr', field: 'hwaddr', codec: 'mac', adopt: false },
    { token: 'rate', field: 'rate-limit', codec: 'int', none: 0 },
    { token: 'firewall', field: 'firewall', codec: 'flag' },
    { token: 'ip', field: 'ip', codec: 'string' },
    { token: 'gw', field: 'gw', codec: 'string' },
  ],
}

function ethName(slot: string): string {
  return /^net\d+$/.test(slot) ? `eth${slot.slice(3)}` : slot
}

const fieldOf = (nic: VmNic | LxcNic, field: string): unknown => (nic as unknown as Record<string, unknown>)[field]

/** A declared manifest value as its PVE token, or undefined when the manifest does not set it. */
function tokenValue(t: NicToken, v: unknown): string | undefined {
  if (v === undefined) return undefined
  if (typeof v === 'number' && t.none !== undefined && v <= t.none) return undefined
  if (t.codec === 'flag') return v === true ? '1' : undefined
  if (t.codec === 'mac') return String(v).toUpperCase()
  return String(v)
}

function sameToken(t: NicToken, live: string | undefined, want: string): boolean {
  switch (t.codec) {
    case 'int':
      return live !== undefined && Number(live) === Number(want)
    case 'flag':
      return liveBool(live, false)
    case 'mac':
      return (live ?? '').toUpperCase() === want
    case 'string':
      return live === want
  }
}

/** The declared tokens of a NIC entry, in table order. */
function desiredTokens(type: GuestType, nic: VmNic | LxcNic, slot: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const t of NIC_TOKENS[type]) {
    const v = tokenValue(t, fieldOf(nic, t.field)) ?? t.createDefault?.(slot)
    if (v !== undefined) out[t.token] = v
  }
  return out
}

/** The declared tokens that differ from the live ones. */
function changedTokens(
  type: GuestType,
  nic: VmNic | LxcNic,
  live: Readonly<Record<string, string>>,
): Record<string, string> {
  const out: Record<string, string> = {}
  for (const t of NIC_TOKENS[type]) {
    const want = t.compare === false ? undefined : tokenValue(t, fieldOf(nic, t.field))
    if (want !== undefined && !sameToken(t, live[t.token], want)) out[t.token] = want
  }
  return out
}

/** A qemu NIC value read as PVE's parse_net does: model and MAC from `virtio=<mac>` or `model=`/`macaddr=`. */
export function qemuNic(
  value: string,
): { model: string | undefined; mac: string | undefined; props: Record<string, string> } | undefined {
  const p = parsePS(value) ?? parsePS(value, 'model')
  if (!p) return undefined
  const modelKey =
    Object.keys(p).find((k) => QEMU_NIC_MODELS.includes(k)) ?? (p.model !== undefined ? 'model' : undefined)
  const model = modelKey === 'model' ? p.model : modelKey
  const mac = modelKey !== undefined && modelKey !== 'model' ? p[modelKey] : p.macaddr
  return { model, mac, props: p }
}

/** The tokens of a qemu NIC other than its model and MAC. */
function qemuNicRest(props: Readonly<Record<string, string>>): Record<string, string> {
  const rest: Record<string, string> = { ...props }
  for (const k of QEMU_NIC_MODELS) delete rest[k]
  delete rest.model
  delete rest.macaddr
  return rest
}

export function qemuNicOwned(n: VmNic, i: number): Owned {
  const field = `spec.networks[${i}]`
  const head = n.mac ? `${n.model}=${n.mac.toLowerCase()}` : n.model
  const create = withTokens(head, desiredTokens('qemu', n, n.slot))
  return {
    key: n.slot,
    field,
    create,
    compare: (live) => {
      if (live === undefined) return [write(create, create, true)]
      const nic = qemuNic(live)
      if (!nic) return [anomaly('invalid-live', `${n.slot}: cannot read PVE's value`)]
      const rest = qemuNicRest(nic.props)
      const changes = changedTokens('qemu', n, rest)
      const macDrift = n.mac !== undefined && (nic.mac ?? '').toLowerCase() !== n.mac.toLowerCase()
      if (nic.model === n.model && !macDrift && Object.keys(changes).length === 0) return NONE
      // rewrite keeping the live MAC (PVE would otherwise generate a new one) and every unowned token
      const mac = n.mac ? n.mac.toLowerCase() : nic.mac
      const headOut = mac ? `${n.model}=${mac}` : n.model
      const body = rewrite(rest, changes, undefined)
      return [write(body === '' ? headOut : `${headOut},${body}`)]
    },
  }
}

export function lxcNicOwned(n: LxcNic, i: number): Owned {
  const create = rewrite({}, desiredTokens('lxc', n, n.slot), undefined, ['name'])
  return {
    key: n.slot,
    field: `spec.networks[${i}]`,
    create,
    compare: (live): readonly Outcome[] => {
      if (live === undefined) return [write(create, create, true)]
      const p = parsePS(live)
      if (!p) return [anomaly('invalid-live', `${n.slot}: cannot read PVE's value`)]
      const changes = changedTokens('lxc', n, p)
      // the rewrite keeps hwaddr, so PVE does not assign a new MAC
      return Object.keys(changes).length > 0 ? [write(rewrite(p, changes, undefined, ['name']))] : NONE
    },
  }
}

/**
 * adopt: a live NIC as the manifest's entry (PVE-assigned MACs are not pinned), or undefined with a gap when
 * it cannot be read; tokens the table does not declare are gaps. `incomplete` is set when PVE has no bridge.
 */
export function adoptNic(
  type: GuestType,
  slot: string,
  live: string,
  gap: GapSink,
): { nic: Record<string, unknown>; noBridge: boolean } | undefined {
  const q = type === 'qemu' ? qemuNic(live) : undefined
  const props = type === 'qemu' ? (q ? qemuNicRest(q.props) : undefined) : parsePS(live)
  if (!props) {
    gap(slot, live, "NIC not readable (PVE's property-string grammar)")
    return undefined
  }
  const nic: Record<string, unknown> = type === 'qemu' ? { model: q?.model ?? 'virtio' } : {}
  const declared = new Set<string>()
  for (const t of NIC_TOKENS[type]) {
    declared.add(t.token)
    const v = props[t.token]
    if (v === undefined || t.adopt === false || v === t.omit) continue
    if (t.codec === 'flag') {
      if (liveBool(v, false)) nic[t.field] = true
    } else if (t.codec === 'int') {
      if (Number.isInteger(Number(v))) nic[t.field] = Number(v)
      else gap(`${slot}.${t.token}`, v, 'not a whole number; not modelled')
    } else nic[t.field] = v
  }
  nic.slot = slot
  for (const [token, v] of Object.entries(props))
    if (!declared.has(token)) gap(`${slot}.${token}`, v, 'NIC option not modelled')
  return { nic, noBridge: props.bridge === undefined }
}
