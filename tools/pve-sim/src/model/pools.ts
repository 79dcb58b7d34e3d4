import { fail500, PveHttpError } from './errors.js'

/**
 * Resource pools as user.cfg keeps them (pve-access-control PVE::AccessControl parse_user_config /
 * write_user_config, pve-manager PVE::API2::Pool). A pool holds guest vmids and storage ids; a vmid is in at
 * most one pool (`$usercfg->{vms}->{$vmid}`). Nested pools (`parent/child`, at most three levels) name their
 * parent, which must exist.
 */
export interface PoolEntry {
  comment?: string
  vms: Set<number>
  storage: Set<string>
}

/** raise_perm_exc: 403 `Permission check failed (<what>)` */
function permFail(what: string): PveHttpError {
  return new PveHttpError(403, `Permission check failed (${what})`)
}

export class Pools {
  readonly pools = new Map<string, PoolEntry>()
  /** vmid -> pool (user.cfg's reverse map) */
  readonly vmPool = new Map<number, string>()

  /** RPCEnvironment check_pool_exist, as create_vm and clone_vm call it before forking */
  requireExists(pool: string): void {
    if (!this.pools.has(pool)) throw permFail(`pool '${pool}' does not exist`)
  }

  /** children of a pool: the `pools` map parse_user_config builds from the names */
  children(pool: string): string[] {
    return [...this.pools.keys()].filter((p) => p.startsWith(`${pool}/`) && !p.slice(pool.length + 1).includes('/'))
  }

  /** API2::Pool create_pool (errors wrapped by lock_user_config: `create pool failed: ...`) */
  create(pool: string, comment: string | undefined): void {
    const die = (m: string) => fail500(`create pool failed: ${m}`)
    if (this.pools.has(pool)) throw die(`pool '${pool}' already exists`)
    const m = /^(.*)\/([^/]+)$/.exec(pool)
    if (m) {
      const [, parent, leaf] = m as unknown as [string, string, string]
      if (!this.pools.has(parent)) throw die(`parent '${parent}' of pool '${pool}' does not exist`)
      if (!/^[A-Za-z]/.test(leaf)) throw die('pool name must start with a letter')
    } else if (!/^[A-Za-z]/.test(pool)) throw die('pool name must start with a letter')
    // `if $param->{comment}`: an empty comment is not stored
    this.pools.set(pool, { ...(comment ? { comment } : {}), vms: new Set(), storage: new Set() })
  }

  /**
   * API2::Pool update_pool: the comment, then vms, then storage, each id in turn; the first error aborts the
   * whole update (user.cfg is written only at the end). `knownStorage` is storage.cfg's list of ids.
   */
  update(params: {
    poolid: string
    comment?: string
    vms?: number[]
    storage?: string[]
    delete?: boolean
    allowMove?: boolean
  }): void {
    const die = (m: string) => fail500(`update pools failed: ${m}`)
    const pool = params.poolid
    const current = this.pools.get(pool)
    if (!current) throw die(`pool '${pool}' does not exist`)
    // work on copies so that a failure leaves user.cfg untouched
    const next: PoolEntry = { ...current, vms: new Set(current.vms), storage: new Set(current.storage) }
    const vmPool = new Map(this.vmPool)
    const moved = new Map<string, Set<number>>()
    // parse_user_config drops an empty comment on the next read
    if (params.comment !== undefined) {
      if (params.comment === '') delete next.comment
      else next.comment = params.comment
    }
    for (const vmid of params.vms ?? []) {
      if (params.delete) {
        if (!next.vms.has(vmid)) throw die(`VM ${vmid} is not a pool member`)
        next.vms.delete(vmid)
        vmPool.delete(vmid)
      } else {
        if (next.vms.has(vmid)) throw die(`VM ${vmid} is already a pool member`)
        const existing = vmPool.get(vmid)
        if (existing !== undefined) {
          if (!params.allowMove)
            throw die(`VM ${vmid} belongs already to pool '${existing}' and 'allow-move' is not set`)
          const set = moved.get(existing) ?? new Set(this.pools.get(existing)?.vms)
          set.delete(vmid)
          moved.set(existing, set)
        }
        next.vms.add(vmid)
        vmPool.set(vmid, pool)
      }
    }
    for (const sid of params.storage ?? []) {
      if (params.delete) {
        if (!next.storage.has(sid)) throw die(`Storage '${sid}' is not a pool member`)
        next.storage.delete(sid)
      } else {
        if (next.storage.has(sid)) throw die(`Storage '${sid}' is already a pool member`)
        next.storage.add(sid)
      }
    }
    for (const [p, vms] of moved) {
      const e = this.pools.get(p)
      if (e) this.pools.set(p, { ...e, vms })
    }
    this.pools.set(pool, next)
    this.vmPool.clear()
    for (const [k, v] of vmPool) this.vmPool.set(k, v)
  }

  /**
   * API2::Pool delete_pool: refused while it has a sub-pool, a member guest that still exists or a member
   * storage that storage.cfg still has; members that are gone are ignored. The pool's ACL goes with it
   * (Cluster.aclCleanup, called by the route).
   */
  remove(pool: string, guestExists: (vmid: number) => boolean, storageExists: (sid: string) => boolean): void {
    const die = (m: string) => fail500(`delete pool failed: ${m}`)
    const e = this.pools.get(pool)
    if (!e) throw die(`pool '${pool}' does not exist`)
    const sub = this.children(pool).sort()[0]
    if (sub !== undefined) throw die(`pool '${pool}' is not empty (contains pool '${sub}')`)
    // `sort keys` over vmids: string order
    for (const vmid of [...e.vms].map(String).sort()) {
      if (guestExists(Number(vmid))) throw die(`pool '${pool}' is not empty (contains VM ${vmid})`)
    }
    for (const sid of [...e.storage].sort()) {
      if (storageExists(sid)) throw die(`pool '${pool}' is not empty (contains storage '${sid}')`)
    }
    this.pools.delete(pool)
    for (const vmid of e.vms) if (this.vmPool.get(vmid) === pool) this.vmPool.delete(vmid)
  }

  /** AccessControl add_vm_to_pool: at the end of a create/clone worker; a pool deleted meanwhile is skipped */
  addVm(vmid: number, pool: string): void {
    const e = this.pools.get(pool)
    if (!e) return
    e.vms.add(vmid)
    this.vmPool.set(vmid, pool)
  }

  /** AccessControl remove_vm_access (after destroy_vm): the guest leaves its pool */
  dropVm(vmid: number): void {
    const pool = this.vmPool.get(vmid)
    if (pool === undefined) return
    this.pools.get(pool)?.vms.delete(vmid)
    this.vmPool.delete(vmid)
  }
}
