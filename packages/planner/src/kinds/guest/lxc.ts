/** Desired LXC / TemplateCT -> the owned container config keys. */
import type { ContainerManifest } from '@proxops/schema'
import { anomaly, liveBool, parsePS, rewrite, write, type Outcome, type Owned } from './fields.js'
import type { GuestBuildContext, GuestFields } from './qemu.js'
import { lxcVolumesOwned } from './volumes.js'
import { lxcNicOwned } from './nics.js'
import { tableFields } from './table.js'
import { changedTokens, createTokens, fieldOf, type SlotToken } from './tokens.js'

export function lxcFields(m: ContainerManifest, ctx: GuestBuildContext): GuestFields {
  const s = m.spec
  const gaps: GuestFields['gaps'] = []
  const declaredSlots = new Set<string>()
  const o = s.options ?? {}
  const features = featuresField(o)
  const owned = tableFields(
    'lxc',
    s,
    {
      'volumes-nics': () => volumesAndNics(s, declaredSlots),
      features: () => features.owned,
      tags: () => [ctx.tags(s.tags)],
    },
    gaps,
  )

  const createOnly: Record<string, string> = { ...s.extra }
  // a clone-backed LXC has no ostemplate: its root filesystem comes from the TemplateCT
  if (s.template !== undefined) {
    const tmpl = ctx.volid('CTTemplate', s.template)
    createOnly.ostemplate = tmpl ?? `local:vztmpl/${s.template}`
  }
  if (Object.keys(s.extra).length > 0) gaps.push({ field: 'spec.extra', note: 'sent on create only; never compared' })
  return {
    owned,
    createOnly,
    gaps,
    declaredSlots,
    ...(features.createError === undefined ? {} : { createError: features.createError }),
  }
}

/** The volumes and NICs family: the root filesystem, mount points, bind mounts, NICs. */
function volumesAndNics(s: ContainerManifest['spec'], declaredSlots: Set<string>): Owned[] {
  const owned: Owned[] = []
  for (const volume of lxcVolumesOwned(s)) {
    if (volume.key !== 'rootfs') declaredSlots.add(volume.key)
    owned.push(volume)
  }
  s.networks.forEach((n, i) => {
    declaredSlots.add(n.slot)
    owned.push(lxcNicOwned(n, i))
  })

  return owned
}

type LxcOptions = NonNullable<ContainerManifest['spec']['options']>

/** pve-container's `features` tokens ProxOps writes (fields of `spec.options`). */
const FEATURE_TOKENS: readonly SlotToken[] = [{ token: 'nesting', field: 'nesting', codec: 'bit' }]

/** Features with no accepted PVE 9 create form: a true one is checked against PVE (an anomaly when off), never written. */
const CHECKED_FEATURES: readonly SlotToken[] = [
  { token: 'keyctl', field: 'keyctl', codec: 'bit' },
  { token: 'fuse', field: 'fuse', codec: 'bit' },
]

/** Every `features` token the manifest models, as adopt reads them. */
export const ALL_FEATURE_TOKENS: readonly SlotToken[] = [...FEATURE_TOKENS, ...CHECKED_FEATURES]

/** features: nesting is owned; keyctl and fuse are checked, never written. */
function featuresField(o: LxcOptions): { owned: Owned[]; createError?: string } {
  const checked = CHECKED_FEATURES.filter((t) => fieldOf(o, t.field) === true)
  const createError =
    checked[0] === undefined
      ? undefined
      : `spec.options.${checked[0].field}: true has no accepted PVE 9 create form; the container cannot be created as declared`
  const tokens = createTokens(FEATURE_TOKENS, o, 'features')
  if (Object.keys(tokens).length === 0 && checked.length === 0) return { owned: [] }
  const owned: Owned = {
    key: 'features',
    field: 'spec.options.nesting',
    ...(Object.keys(tokens).length === 0 ? {} : { create: rewrite({}, tokens, undefined) }),
    compare: (live) => {
      const p = (live === undefined ? {} : parsePS(live)) ?? {}
      const out: Outcome[] = checked
        .filter((t) => !liveBool(p[t.token], false))
        .map((t) =>
          anomaly(
            'unsupported-option',
            `spec.options.${t.field} is true but ${t.token} is off on PVE; proxops cannot turn it on (recreate required, by hand)`,
          ),
        )
      const changes = changedTokens(FEATURE_TOKENS, o, p)
      if (Object.keys(changes).length > 0) out.unshift(write(rewrite(p, changes, undefined)))
      return out
    },
  }
  return createError === undefined ? { owned: [owned] } : { owned: [owned], createError }
}

export function lxcSlotFamily(key: string): 'mount' | 'nic' | undefined {
  if (/^mp\d+$/.test(key)) return 'mount'
  if (/^net\d+$/.test(key)) return 'nic'
  return undefined
}
