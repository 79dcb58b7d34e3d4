/** Desired LXC / TemplateCT -> the owned container config keys. */
import type { ContainerManifest } from '@proxops/schema'
import { anomaly, liveBool, parsePS, rewrite, write, type Outcome, type Owned } from './fields.js'
import type { GuestBuildContext, GuestFields } from './qemu.js'
import { lxcVolumesOwned } from './volumes.js'
import { lxcNicOwned } from './nics.js'
import { tableFields } from './table.js'

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

/** features: nesting is owned; keyctl and fuse are checked, never written (no accepted PVE 9 create form). */
function featuresField(o: NonNullable<ContainerManifest['spec']['options']>): { owned: Owned[]; createError?: string } {
  const owned: Owned[] = []
  let createError: string | undefined
  if (o.keyctl === true || o.fuse === true) {
    createError = `spec.options.${o.keyctl === true ? 'keyctl' : 'fuse'}: true has no accepted PVE 9 create form; the container cannot be created as declared`
  }
  if (o.nesting !== undefined || o.keyctl === true || o.fuse === true) {
    const nesting = o.nesting === undefined ? undefined : o.nesting ? '1' : '0'
    owned.push({
      key: 'features',
      field: 'spec.options.nesting',
      ...(nesting === undefined ? {} : { create: `nesting=${nesting}` }),
      compare: (live) => {
        const p = (live === undefined ? {} : parsePS(live)) ?? {}
        const out: Outcome[] = []
        for (const f of ['keyctl', 'fuse'] as const) {
          if (o[f] === true && !liveBool(p[f], false)) {
            out.push(
              anomaly(
                'unsupported-option',
                `spec.options.${f} is true but ${f} is off on PVE; proxops cannot turn it on (recreate required, by hand)`,
              ),
            )
          }
        }
        if (nesting !== undefined && (liveBool(p.nesting, false) ? '1' : '0') !== nesting)
          out.unshift(write(rewrite(p, { nesting }, undefined)))
        return out
      },
    })
  }

  return createError === undefined ? { owned } : { owned, createError }
}

export function lxcSlotFamily(key: string): 'mount' | 'nic' | undefined {
  if (/^mp\d+$/.test(key)) return 'mount'
  if (/^net\d+$/.test(key)) return 'nic'
  return undefined
}
