/**
 * Runs a `firewall` request. Before every write the guest firewall is read again: it must be what the plan
 * expected at that step (the plan-time read with the earlier writes applied, compared by content), and the
 * write carries the digest of its section from that read, so a concurrent edit fails the action instead of
 * being overwritten at a shifted rule position. For a guest created in this run there was nothing to plan
 * against: the writes are derived from the first read (a clone may have copied its template's firewall).
 */
import type { PveRequest } from '../../plan-types.js'
import type { FirewallWrite, GuestFirewall } from '@proxops/pve-client/wire'
import type { LiveReader, PveWriter } from '../../ports.js'
import { applyWrite, firewallWrites, liveFirewall, sameFirewall, type CanonFirewall } from './canon.js'
import type { Runners } from '../../kit/runners.js'

export const firewallRunners = {
  firewall: async (request, { ctx }) => {
    await runFirewall(request, ctx.reader, ctx.writer)
  },
} satisfies Runners

type FirewallRequest = Extract<PveRequest, { call: 'firewall' }>

export class FirewallChanged extends Error {}

/** the digest PVE checks for this write (create calls take none) */
function withDigest(w: FirewallWrite, fw: GuestFirewall): FirewallWrite {
  switch (w.op) {
    case 'options':
      return { ...w, digest: fw.optionsDigest }
    case 'rule-update':
    case 'rule-move':
    case 'rule-delete':
      return { ...w, digest: fw.rulesDigest }
    case 'alias-update':
    case 'alias-delete':
      return { ...w, digest: fw.aliasesDigest }
    case 'ipset-comment':
      return { ...w, digest: fw.ipsetsDigest }
    case 'ipset-update':
    case 'ipset-remove': {
      const digest = fw.ipsets.find((s) => s.name === w.name)?.digest
      return digest === undefined ? w : { ...w, digest }
    }
    default:
      return w
  }
}

export async function runFirewall(request: FirewallRequest, reader: LiveReader, writer: PveWriter): Promise<number> {
  const { node, guest, vmid } = request
  const read = reader.guestFirewall.bind(reader)
  const write = writer.firewallWrite.bind(writer)
  let fresh = await read(node, guest, vmid)
  let expected: CanonFirewall
  let writes: readonly FirewallWrite[]
  if (request.live === undefined) {
    expected = liveFirewall(fresh)
    writes = firewallWrites(expected, request.desired)
  } else {
    expected = request.live
    writes = request.writes
  }
  let step = 0
  for (const w of writes) {
    if (step > 0) fresh = await read(node, guest, vmid)
    if (!sameFirewall(liveFirewall(fresh), expected)) {
      throw new FirewallChanged(
        `firewall of ${guest} ${vmid} changed since ${step === 0 ? 'the plan' : `write ${step}`} (compared by content); the next cycle re-plans`,
      )
    }
    await write(node, guest, vmid, withDigest(w, fresh))
    expected = applyWrite(expected, w)
    step++
  }
  return step
}
