/** Reading the firewall kind: the firewalls of the guests whose manifests declare one (observe's `firewalls`). */
import type { LiveFirewall, LiveGuest } from '../../inventory.js'
import { errorText } from '../../kit/text.js'
import type { Read, ReadContext } from '../../kit/kind.js'
import type { LiveReader } from '../../ports.js'
import type { ObserveOptions } from '../../kit/kind.js'

export async function readFirewalls(ctx: ReadContext): Promise<{ firewalls: LiveFirewall[] }> {
  const guests = await ctx.guests
  return { firewalls: await readGuestFirewalls(ctx.reader, ctx.read, guests, ctx.options) }
}

/** the firewalls asked for, of guests that were read; a failed read is kept with its reason */
async function readGuestFirewalls(
  reader: LiveReader,
  read: Read,
  guests: readonly LiveGuest[],
  options: ObserveOptions,
): Promise<LiveFirewall[]> {
  if (!options.firewalls || options.firewalls.length === 0) return []
  const want = options.firewalls === 'all' ? new Set(guests.map((g) => g.vmid)) : new Set(options.firewalls)
  const out: LiveFirewall[] = []
  await Promise.all(
    guests
      .filter((g) => want.has(g.vmid))
      .map(async (g) => {
        const readFw = reader.guestFirewall.bind(reader)
        try {
          out.push({ vmid: g.vmid, known: await read(() => readFw(g.node, g.type, g.vmid)) })
        } catch (error) {
          options.signal?.throwIfAborted()
          out.push({ vmid: g.vmid, unreadable: errorText(error) })
        }
      }),
  )
  return out.sort((a, b) => a.vmid - b.vmid)
}
