/** The guest firewall kind: options, rules, IP sets and aliases of a declared guest (`spec.firewall`). */
import { defineKind } from '../../kit/kind.js'
import { adoptFirewall } from './adopt.js'
import { confirmFirewall } from './confirm.js'
import { firewallVmids, planFirewalls } from './plan.js'
import { readFirewalls } from './read.js'
import { firewallRunners } from './run.js'

export {
  applyWrite,
  desiredFirewall,
  firewallWrites,
  liveFirewall,
  ruleLine,
  type CanonFirewall,
  type CanonRule,
  type DesiredFirewall,
} from './canon.js'

export const firewall = defineKind({
  name: 'firewall',
  // it lives on a guest: the guest's manifest declares it, and its actions carry the guest's address
  manifests: [],
  // ... so its actions say they are a guest firewall's (Action.kind)
  actionKinds: ['GuestFirewall'],
  addresses: () => [],
  // the firewalls of the guests the manifests manage are read with them
  observe: (desired) => ({ firewalls: firewallVmids(desired) }),
  read: readFirewalls,
  plan: planFirewalls,
  run: firewallRunners,
  privileges: {
    // pve-firewall rules_modify_permissions / set_options for a guest: VM.Config.Network on /vms/<vmid>
    firewall: (r) => [{ need: [{ path: `/vms/${r.vmid}`, privs: ['VM.Config.Network'] }] }],
  },
  confirm: confirmFirewall,
  summary: { update: 'update' },
  verbs: { update: { phrase: 'will have its firewall updated (applies live)' } },
  adopt: {
    order: 2,
    run(live, ctx) {
      for (const { guest, file } of ctx.guestFiles.values()) {
        const found = adoptFirewall(live.firewalls.find((f) => f.vmid === guest.vmid))
        if (found) (file.document.spec as Record<string, unknown>).firewall = found
      }
    },
  },
})
