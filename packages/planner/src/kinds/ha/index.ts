/** The HA kind: a declared guest's HA resource and its node preference (a PVE 8 group or a PVE 9 rule). */
import { defineKind } from '../../kit/kind.js'
import { adoptHa } from './adopt.js'
import { confirmHa } from './confirm.js'
import { planHa } from './plan.js'
import { readHa } from './read.js'
import { haRunners } from './run.js'

export const ha = defineKind({
  name: 'ha',
  // it lives on a guest: the guest's manifest declares it (`spec.ha`), and its actions carry the guest's address
  manifests: [],
  // ... so its actions say they are an HA resource's (Action.kind)
  actionKinds: ['HA'],
  addresses: () => [],
  read: readHa,
  plan: planHa,
  // last: an HA resource of a guest that leaves git goes with the guest's own prune or after it
  pruneOrder: 3,
  run: haRunners,
  privileges: {
    // PVE::API2::HA::Resources / Groups / Rules: every write checks Sys.Console on /
    haWrite: () => [{ need: [{ path: '/', privs: ['Sys.Console'] }] }],
  },
  confirm: confirmHa,
  summary: { create: 'create', update: 'update', delete: 'delete' },
  // after the guest's own actions (its HA resource names a guest that exists); a removal after that
  verbs: {
    create: { phrase: 'will become an HA resource', rank: 7 },
    update: { phrase: 'will have its HA resource updated', rank: 7 },
    delete: { phrase: 'will stop being an HA resource (its resource is removed)', rank: 8 },
  },
  adopt: {
    order: 3,
    run(live, ctx) {
      for (const { guest, file } of ctx.guestFiles.values()) {
        const found = adoptHa(guest, live.ha, ctx.tag)
        const spec = file.document.spec as Record<string, unknown>
        if (found.ha) spec.ha = found.ha
        if (found.state) spec.state = found.state
        if (found.incomplete) file.incomplete.push(found.incomplete)
        ctx.collect.warnings.push(...found.warnings)
        for (const g of found.gaps)
          ctx.collect.gaps.push({ kind: file.kind, node: guest.node, id: String(guest.vmid), ...g })
      }
    },
  },
})
