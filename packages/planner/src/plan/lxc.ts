/** Desired LXC / TemplateCT -> the owned container config keys. */
import type { ContainerManifest } from '@proxops/schema'
import {
  anomaly,
  gib,
  NONE,
  liveBool,
  parsePS,
  rewrite,
  withTokens,
  write,
  type Outcome,
  type Owned,
} from './fields.js'
import type { GuestBuildContext, GuestFields } from './qemu.js'
import { changedTokens, createTokens } from './tokens.js'
import { BIND_TOKENS, guardVolume, isEmptySlot, MOUNT_TOKENS } from './volumes.js'
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
  // root filesystem: a volume slot with the data-loss guards
  const root = `${s.root.storage}:${gib(s.root.size)}`
  owned.push({
    key: 'rootfs',
    field: 'spec.root',
    create: root,
    volume: true,
    compare: (live) => {
      if (isEmptySlot(live)) return [write(root, root, true)]
      const p = parsePS(live as string, 'volume')
      if (!p?.volume) return [anomaly('invalid-live', "rootfs: cannot read PVE's value")]
      return guardVolume('rootfs', 'spec.root', p.volume, p.size, s.root.storage, s.root.size, true)
    },
  })

  s['mount-points'].forEach((mp, i) => {
    declaredSlots.add(mp.slot)
    const field = `spec.mount-points[${i}]`
    const create = withTokens(`${mp.storage}:${gib(mp.size)}`, createTokens(MOUNT_TOKENS, mp, mp.slot))
    owned.push({
      key: mp.slot,
      field,
      create,
      volume: true,
      compare: (live) => {
        if (isEmptySlot(live)) return [write(create, create, true)]
        const p = parsePS(live as string, 'volume')
        if (!p?.volume) return [anomaly('invalid-live', `${mp.slot}: cannot read PVE's value`)]
        if (p.volume.startsWith('/')) {
          return [
            anomaly(
              'volume-kind',
              `${mp.slot} is a bind mount of ${p.volume} on PVE but ${field} declares an allocated volume; proxops will not replace it`,
            ),
          ]
        }
        const out: Outcome[] = guardVolume(mp.slot, field, p.volume, p.size, mp.storage, mp.size, true)
        if (out.some((x) => x.t === 'anomaly')) return out
        const changes = changedTokens(MOUNT_TOKENS, mp, p)
        if (Object.keys(changes).length > 0) out.unshift(write(rewrite(p, changes, 'volume', ['mp'])))
        return out
      },
    })
  })

  s['bind-mounts'].forEach((b, i) => {
    declaredSlots.add(b.slot)
    const field = `spec.bind-mounts[${i}]`
    const host = b['host-path'].replace(/(.)\/+$/, '$1')
    const create = withTokens(host, createTokens(BIND_TOKENS, b, b.slot))
    owned.push({
      key: b.slot,
      field,
      create,
      compare: (live) => {
        if (isEmptySlot(live)) return [write(create, create, true)]
        const p = parsePS(live as string, 'volume')
        if (!p?.volume) return [anomaly('invalid-live', `${b.slot}: cannot read PVE's value`)]
        if (!p.volume.startsWith('/')) {
          return [
            anomaly(
              'volume-kind',
              `${b.slot} holds volume ${p.volume} on PVE but ${field} declares a bind mount; proxops will not replace it`,
            ),
          ]
        }
        if (p.volume.replace(/(.)\/+$/, '$1') !== host) {
          return [
            anomaly(
              'bind-path',
              `${b.slot} binds ${p.volume} on PVE but ${field} wants ${host}; proxops never re-points a bind mount (change it by hand)`,
            ),
          ]
        }
        const changes = changedTokens(BIND_TOKENS, b, p)
        return Object.keys(changes).length > 0 ? [write(rewrite(p, changes, 'volume', ['mp']))] : NONE
      },
    })
  })

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
