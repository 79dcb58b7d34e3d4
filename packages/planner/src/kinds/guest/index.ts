/** The guest kind (VM, TemplateVM, LXC, TemplateCT): the kind every other kind that lives on a guest plans against. */
import { guestNodes, guestVmids, isGuest } from '../../desired.js'
import { guestAddress } from '../../kit/draft.js'
import { defineKind } from '../../kit/kind.js'
import { adoptLxc, adoptVm } from './adopt.js'
import { confirmGuest } from './confirm.js'
import { planGuests } from './plan.js'
import { guestPrivileges } from './privileges.js'
import { readGuests } from './read.js'
import { guestRunners } from './run.js'

export const guest = defineKind({
  name: 'guest',
  manifests: ['VM', 'TemplateVM', 'LXC', 'TemplateCT'],
  addresses: (m) => (isGuest(m) ? [guestAddress(m.kind, m.spec.node, m.spec.vmid, m.metadata.name)] : []),
  observe: (desired) => ({
    // a desired vmid that no visible guest holds is probed cluster-wide before a create is planned
    vmids: guestVmids(desired),
    // a guest found on another allowlisted node than its spec.node: PVE's migration precondition check is read
    guestNodes: guestNodes(desired),
  }),
  read: readGuests,
  readsGuests: true,
  plan: planGuests,
  // after the backup jobs: a destroy with purge deletes a job that names only the guest
  pruneOrder: 1,
  run: guestRunners,
  privileges: guestPrivileges,
  confirm: confirmGuest,
  summary: {
    create: 'create',
    clone: 'create',
    update: 'update',
    'shutdown-then-update': 'update',
    migrate: 'update',
    resize: 'resize',
    // a disk moved to another storage counts with the disk changes
    'move-disk': 'resize',
    start: 'power',
    stop: 'power',
    restart: 'power',
    'mark-template': 'markTemplate',
    snapshot: 'snapshot',
    delete: 'delete',
  },
  adopt: {
    // after the artifacts: a VM's CD names the ISO adopted before it
    order: 1,
    run(live, ctx) {
      for (const guest of live.unknownGuests) {
        ctx.skipped.push({
          kind: guest.type === 'qemu' ? 'VM' : 'LXC',
          node: guest.node,
          id: String(guest.vmid),
          ...(guest.name !== undefined ? { name: guest.name } : {}),
          reason: `not readable this run (${guest.unreadable})`,
        })
      }
      const options = { ...ctx.options, tag: ctx.tag }
      for (const guest of live.guests) {
        if (guest.lock)
          ctx.collect.warnings.push(
            `${guest.type} ${guest.vmid} on ${guest.node} is locked (${guest.lock}); adopted from its current config`,
          )
        if (Object.keys(guest.pending).length > 0 || guest.pendingDeletes.length > 0) {
          ctx.collect.warnings.push(
            `${guest.type} ${guest.vmid} on ${guest.node} has pending changes; the applied values were adopted`,
          )
        }
        const file =
          guest.type === 'qemu'
            ? adoptVm(guest, options, ctx.claim, ctx.collect, ctx.isoNames, ctx.census, ctx.newSshKeys)
            : adoptLxc(guest, options, ctx.claim, ctx.collect)
        ctx.files.push(file)
        ctx.guestFiles.set(guest.vmid, { guest, file })
      }
    },
  },
})
