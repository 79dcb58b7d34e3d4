/**
 * Reads the HA configuration (pve-ha-manager): `/cluster/ha/resources`, and the node preferences in the form
 * the PVE version has: `/cluster/ha/groups` on 8.x, `/cluster/ha/rules` on 9.x (where groups are migrated to
 * rules and every groups call dies). Two requests per cycle. A failed read makes HA unknown, never absent.
 */
import type { LiveHa, LiveInventory, Observed } from '../../inventory.js'
import type { ReadContext } from '../../kit/kind.js'
import type { HaItem } from '@proxops/pve-client/wire'
import type { LiveReader } from '../../ports.js'

/** PVE 9 replaced HA groups with rules (pve-ha-manager 5.0) */
export const haForm = (pveVersion: string): 'groups' | 'rules' =>
  Number(pveVersion.split('.')[0]) >= 9 ? 'rules' : 'groups'

export async function readHa(ctx: ReadContext): Promise<Pick<LiveInventory, 'ha'>> {
  return { ha: await readHaConfig(ctx.reader, ctx.pveVersion, ctx.read) }
}

export async function readHaConfig(
  reader: LiveReader,
  pveVersion: string,
  read: <T>(fn: () => Promise<T>) => Promise<T>,
): Promise<Observed<LiveHa>> {
  const haConfig = reader.haConfig.bind(reader)
  const form = haForm(pveVersion)
  try {
    const [resources, preferences] = await Promise.all([read(() => haConfig('resources')), read(() => haConfig(form))])
    return {
      known: {
        form,
        resources: sortBy(resources, 'sid'),
        preferences: sortBy(preferences, form === 'groups' ? 'group' : 'rule'),
      },
    }
  } catch (error) {
    return { unreadable: error instanceof Error ? error.message : String(error) }
  }
}

function sortBy(items: readonly HaItem[], key: string): HaItem[] {
  return [...items].sort((a, b) => ((a[key] ?? '') < (b[key] ?? '') ? -1 : (a[key] ?? '') > (b[key] ?? '') ? 1 : 0))
}
