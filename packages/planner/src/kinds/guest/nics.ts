/**
 * The NIC family of both guest kinds (`net<N>`): each property-string token declared once with its manifest
 * field, driving the create form, the compare (a rewrite keeps the live MAC and every token nobody declares)
 * and adopt. A qemu NIC's head is `<model>=<mac>` (qemu-server's parse_net); a container's is `name=`.
 */
import type { GuestType } from '@proxops/pve-client/wire'
import type { LxcNic, VmNic } from '@proxops/schema'
import { anomaly, NONE, parsePS, rewrite, withTokens, write, type Outcome, type Owned } from './fields.js'
import { QEMU_NIC_MODELS } from './keys.js'
import type { GapSink } from './table.js'
import { adoptTokens, changedTokens, createTokens, type SlotToken } from './tokens.js'

/** The tokens of each kind's NIC, in create order. */
export const NIC_TOKENS: Record<GuestType, readonly SlotToken[]> = {
  qemu: [
    { token: 'bridge', field: 'bridge', codec: 'string' },
    { token: 'tag', field: 'vlan', codec: 'int' },
    { token: 'rate', field: 'rate-limit', codec: 'number' },
    { token: 'firewall', field: 'firewall', codec: 'flag' },
  ],
  lxc: [
    // pve-container names the interface eth<N> for net<N> when the manifest does not
    { token: 'name', field: 'iface', codec: 'string', createDefault: ethName },
    { token: 'bridge', field: 'bridge', codec: 'string' },
    { token: 'type', field: 'type', codec: 'string', compare: false, omit: 'veth' },
    { token: 'tag', field: 'tag', codec: 'int', none: 0 },
    { token: 'hwaddr', field: 'hwaddr', codec: 'mac', adopt: false },
    { token: 'rate', field: 'rate-limit', codec: 'number', none: 0 },
    { token: 'firewall', field: 'firewall', codec: 'flag' },
    { token: 'ip', field: 'ip', codec: 'string' },
    { token: 'gw', field: 'gw', codec: 'string' },
  ],
}

function ethName(slot: string): string {
  return /^net\d+$/.test(slot) ? `eth${slot.slice(3)}` : slot
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

/** The tokens that name a qemu NIC's model and MAC (`<model>=<mac>`, or `model=` and `macaddr=`). */
const MODEL_AND_MAC: ReadonlySet<string> = new Set([...QEMU_NIC_MODELS, 'model', 'macaddr'])

/** The tokens of a qemu NIC other than its model and MAC. */
function qemuNicRest(props: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(props).filter(([k]) => !MODEL_AND_MAC.has(k)))
}

export function qemuNicOwned(n: VmNic, i: number): Owned {
  const field = `spec.networks[${i}]`
  const head = n.mac ? `${n.model}=${n.mac.toLowerCase()}` : n.model
  const create = withTokens(head, createTokens(NIC_TOKENS.qemu, n, n.slot))
  return {
    key: n.slot,
    field,
    create,
    compare: (live) => {
      if (live === undefined) return [write(create, create, true)]
      const nic = qemuNic(live)
      if (!nic) return [anomaly('invalid-live', `${n.slot}: cannot read PVE's value`)]
      const rest = qemuNicRest(nic.props)
      const changes = changedTokens(NIC_TOKENS.qemu, n, rest)
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
  const create = rewrite({}, createTokens(NIC_TOKENS.lxc, n, n.slot), undefined, ['name'])
  return {
    key: n.slot,
    field: `spec.networks[${i}]`,
    create,
    compare: (live): readonly Outcome[] => {
      if (live === undefined) return [write(create, create, true)]
      const p = parsePS(live)
      if (!p) return [anomaly('invalid-live', `${n.slot}: cannot read PVE's value`)]
      const changes = changedTokens(NIC_TOKENS.lxc, n, p)
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
  adoptTokens(NIC_TOKENS[type], props, nic, slot, gap, 'NIC')
  nic.slot = slot
  return { nic, noBridge: props.bridge === undefined }
}
