/**
 * Reads the access objects (pve-access-control): users with their groups and tokens (`GET /access/users?full=1`),
 * groups, roles, ACL entries and realms, five requests whatever user.cfg holds (no request per object). Only when
 * the cluster manages access (ObserveOptions.access). A failed or malformed listing makes every access object
 * unknown for the cycle: nothing is created, changed or deleted.
 */
import type { LiveInventory } from '../../inventory.js'
import type { ReadContext } from '../../kit/kind.js'

export async function readAccess(ctx: ReadContext): Promise<Pick<LiveInventory, 'access'>> {
  if (ctx.options.access !== true) return {}
  const { reader, read } = ctx
  try {
    const [users, groups, roles, acl, realms] = await Promise.all([
      read(() => reader.accessUsers()),
      read(() => reader.accessGroups()),
      read(() => reader.accessRoles()),
      read(() => reader.acl()),
      read(() => reader.realms()),
    ])
    const by =
      <T>(key: (x: T) => string) =>
      (a: T, b: T) =>
        key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0
    return {
      access: {
        known: {
          users: [...users].sort(by((u) => u.userid)),
          groups: [...groups].sort(by((g) => g.groupid)),
          roles: [...roles].sort(by((r) => r.roleid)),
          acl: [...acl].sort(by((e) => `${e.path}\u0000${e.type}\u0000${e.ugid}\u0000${e.roleid}`)),
          realms: [...realms].sort(by((r) => r.realm)),
        },
      },
    }
  } catch (error) {
    return { access: { unreadable: error instanceof Error ? error.message : String(error) } }
  }
}
