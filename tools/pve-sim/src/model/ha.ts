import type { Cluster, Guest } from './cluster.js'
import { fail400, fail500, PveHttpError } from './errors.js'
import { HaGroups } from './ha-groups.js'
import { HaManager, type ServiceAffinity, type ServiceConfig } from './ha-manager.js'
import { HaRules } from './ha-rules.js'
import { assertDigest, checkConfig, deleteOptions, sectionDigest, underHaLock } from './ha-section.js'
import type { SectionOptions } from './ha-section.js'

/**
 * HA (pve-ha-manager): the resources config (`/etc/pve/ha/resources.cfg`, PVE::API2::HA::Resources), groups
 * (8.x) or rules (9.x), and the manager (model/ha-manager.ts). A power or migration request on an HA-managed guest
 * only records what is wanted: the `hastart` / `hastop` / `hamigrate` worker runs `ha-manager set <sid> --state
 * started` / `ha-manager crm-command stop <sid> <timeout>` / `ha-manager migrate <sid> <node>`, and the manager acts
 * on it one cycle later.
 */

export type HaType = 'vm' | 'ct'

/** one section of resources.cfg: what PVE::API2::HA::Resources create/update store */
export interface HaResourceConf {
  type: HaType
  state?: string
  max_restart?: number
  max_relocate?: number
  comment?: string
  group?: string
  failback?: number
}

const RESOURCE_KEYS = ['state', 'max_restart', 'max_relocate', 'comment', 'group', 'failback'] as const
const STATES = ['started', 'stopped', 'enabled', 'disabled', 'ignored']

export class Ha {
  readonly resources = new Map<string, HaResourceConf>()
  /** ha groups (PVE 8.x); on 9.x they are migrated to rules */
  readonly groups = new HaGroups()
  /** ha rules (PVE 9.x) */
  readonly rules = new HaRules()
  /** the CRM and LRM */
  readonly manager: HaManager

  constructor(
    private readonly c: Cluster,
    /** one CRM + LRM cycle */
    lagMs: number,
  ) {
    this.manager = new HaManager(
      c,
      {
        configured: () => [...this.resources.keys()].sort(),
        config: (sid) => this.serviceConfig(sid),
        writeStopped: (sid) => this.writeStopped(sid),
        affinity: (sid) => this.affinity(sid),
      },
      lagMs,
    )
  }

  get lagMs(): number {
    return this.manager.lagMs
  }

  set lagMs(ms: number) {
    this.manager.lagMs = ms
  }

  static sidOf(g: Pick<Guest, 'type' | 'vmid'>): string {
    return `${g.type === 'qemu' ? 'vm' : 'ct'}:${g.vmid}`
  }

  /** PVE::HA::Config::vm_is_ha_managed: configured, and not `ignored` */
  managed(g: Pick<Guest, 'type' | 'vmid'>): boolean {
    return this.managedSid(Ha.sidOf(g))
  }

  private managedSid(sid: string): boolean {
    const r = this.resources.get(sid)
    return r !== undefined && r.state !== 'ignored'
  }

  configured(g: Pick<Guest, 'type' | 'vmid'>): boolean {
    return this.resources.has(Ha.sidOf(g))
  }

  /**
   * 9.x: have_groups_been_migrated (no groups left, and 9.x cannot create any) -> every groups call dies;
   * 8.x has no rules and always has groups
   */
  groupsMigrated(): boolean {
    return this.c.pveVersion !== '8.4' && this.groups.ids.size === 0
  }

  /** the `ha` object of vmstatus: PVE::HA::Config::get_service_status */
  serviceStatus(g: Guest): Record<string, unknown> {
    if (!this.managed(g)) return { managed: 0 }
    const s = this.manager.ss.get(Ha.sidOf(g))
    return s ? { managed: 1, state: s.state } : { managed: 1 }
  }

  /** /cluster/resources `hastate`: the manager's service state, else the configured request state */
  hastate(g: Guest): string | undefined {
    const sid = Ha.sidOf(g)
    return this.manager.ss.get(sid)?.state ?? this.resources.get(sid)?.state
  }

  /** a guest changed power state (by the LRM, or out of band): the manager looks at it in its next round */
  powerChanged(g: Guest): void {
    const sid = Ha.sidOf(g)
    if (this.resources.has(sid)) this.manager.wake(sid)
  }

  /** the SHA-1 of resources.cfg as written (the `digest` of every resources read) */
  digest(): string {
    // format_section_header writes `vm: 100`
    return sectionDigest(
      (_, s) => String(s.type),
      [...this.resources.keys()].sort().map((sid) => {
        const r = this.resources.get(sid) as HaResourceConf
        const s: Record<string, string | number> = { type: r.type }
        for (const k of RESOURCE_KEYS) if (r[k] !== undefined) s[k] = r[k]
        return [sid.slice(3), s]
      }),
    )
  }

  /** a resource as the API returns it (api_copy_config) */
  item(sid: string): Record<string, unknown> {
    const r = this.resources.get(sid)
    if (!r) throw fail500(`no such resource '${sid}'`)
    const out: Record<string, unknown> = { sid, type: r.type, digest: this.digest() }
    for (const k of RESOURCE_KEYS) if (r[k] !== undefined) out[k] = r[k]
    if (this.groupsMigrated()) delete out.group
    else if (r.group !== undefined && !this.groups.ids.has(r.group))
      out.errors = { group: `group '${r.group}' does not exist` }
    return out
  }

  /** PVE::HA::Config::parse_sid: `100` -> `vm:100` / `ct:100` from the vmlist */
  parseSid(sid: string): { sid: string; type: string; name: string } {
    const bare = /^(\d+)$/.exec(sid)
    if (bare) {
      const g = this.c.guests.get(Number(bare[1]))
      if (!g) throw fail500(`unable to detect SID from VMID - VM/CT ${bare[1]} does not exist`)
      return { sid: Ha.sidOf(g), type: g.type === 'qemu' ? 'vm' : 'ct', name: String(g.vmid) }
    }
    const m = /^(\S+):(\S+)$/.exec(sid)
    if (!m) throw fail500(`unable to parse service id '${sid}'`)
    return { sid, type: m[1] as string, name: m[2] as string }
  }

  /** the resource plugin's options (PVEVM / PVECT options(); `failback` exists on 9.x only) */
  private options(): SectionOptions {
    const o: Record<string, boolean> = {
      state: true,
      group: true,
      comment: true,
      max_restart: true,
      max_relocate: true,
    }
    if (this.c.pveVersion !== '8.4') o.failback = true
    return o
  }

  /**
   * POST /cluster/ha/resources: parse_sid, the type, groups (9.x), the plugin (lookup, verify_name, exists), then
   * check_config, and the section under the lock. The group is not checked (the index then reports it).
   */
  create(params: Record<string, unknown>): null {
    const { sid: sidParam, type: typeParam, ...rest } = params
    const { sid, type, name } = this.parseSid(String(sidParam))
    if (typeParam !== undefined && typeParam !== type) throw fail500('types does not match')
    if (rest.group !== undefined && this.groupsMigrated())
      throw fail500(`invalid parameter 'group': ha groups have been migrated to rules`)
    if (type !== 'vm' && type !== 'ct') throw fail500(`unknown section type '${type}'`)
    if (!/^[1-9][0-9]+$/.test(name)) throw fail500('invalid VMID')
    // PVEVM/PVECT exists(): the guest must be in the cluster's vmlist, of the right kind
    const g = this.c.guests.get(Number(name))
    if (!g) throw fail500(`resource '${sid}' does not exist in cluster`)
    if ((g.type === 'qemu') !== (type === 'vm'))
      throw fail500(`resource '${sid}' - guest with ID ${name} is not a ${type === 'vm' ? 'VM' : 'container'}`)
    const conf: HaResourceConf = { type }
    this.assign(conf, checkConfig(type, this.options(), rest, true))
    underHaLock('create resource failed', () => {
      if (this.resources.has(sid)) throw fail500(`resource ID '${sid}' already defined`)
      this.resources.set(sid, conf)
    })
    this.manager.wake(sid)
    return null
  }

  /** create_vm with `ha-managed=1`: `ha-manager add <sid> --state started|stopped` once the guest exists */
  addFromCreate(g: Guest, started: boolean, log: (line: string) => void): void {
    const sid = Ha.sidOf(g)
    log('Add as HA resource')
    if (this.resources.has(sid)) {
      log(`WARN: resource ID '${sid}' already defined`)
      return
    }
    this.resources.set(sid, { type: g.type === 'qemu' ? 'vm' : 'ct', state: started ? 'started' : 'stopped' })
    this.manager.wake(sid)
  }

  /**
   * PUT /cluster/ha/resources/{sid}: the group (it must exist), check_service_state, then update_resources_config
   * under the lock: digest, the section, check_config, the options set, then `delete` removes
   */
  update(params: Record<string, unknown>): null {
    const { sid: sidParam, type: typeParam, digest, delete: del, ...rest } = params
    const { sid, type } = this.parseSid(String(sidParam))
    if (typeParam !== undefined && typeParam !== type) throw fail500('types does not match')
    if (rest.group !== undefined && rest.group !== '') {
      if (this.groupsMigrated()) throw fail500(`invalid parameter 'group': ha groups have been migrated to rules`)
      if (!this.groups.ids.has(String(rest.group))) throw fail500(`HA group '${String(rest.group)}' does not exist`)
    }
    this.checkServiceState(sid, rest.state === undefined ? undefined : String(rest.state))
    underHaLock('update resources config failed', () => {
      assertDigest(digest, this.digest())
      const conf = this.resources.get(sid)
      if (!conf) throw fail500(`no such resource '${sid}'`)
      const next = { ...conf }
      const opts = checkConfig(conf.type, this.options(), rest, false)
      this.assign(next, opts)
      deleteOptions(next, this.options(), opts, del, false)
      this.resources.set(sid, next)
    })
    this.manager.wake(sid)
    return null
  }

  /** DELETE /cluster/ha/resources/{sid} (`purge`, 9.x, default 1) */
  remove(sidParam: string, purge = true): null {
    const { sid } = this.parseSid(sidParam)
    if (!this.resources.has(sid)) throw fail500(`cannot delete service '${sid}', not HA managed!`)
    this.drop(sid, purge)
    return null
  }

  /**
   * delete_service_from_config: the manager forgets the service too; with purge (9.x) the resource leaves
   * every rule and a rule left without resources is deleted
   */
  drop(sid: string, purge = true): void {
    this.resources.delete(sid)
    this.manager.forget(sid)
    if (purge && this.c.pveVersion !== '8.4') this.rules.purge(sid)
  }

  /** the resource naming a group (groups delete refuses it) */
  groupUser(group: string): string | undefined {
    return [...this.resources.keys()].sort().find((sid) => this.resources.get(sid)?.group === group)
  }

  /**
   * PVE::API2::HA::Resources::check_service_state: while the manager has a managed service in `error`, a request
   * is refused unless it asks for `disabled` (an update without `state` is refused too)
   */
  checkServiceState(sid: string, requested: string | undefined): void {
    if (!this.managedSid(sid) || this.manager.ss.get(sid)?.state !== 'error' || requested === 'disabled') return
    throw fail500(`service '${sid}' in error state, must be disabled and fixed first`)
  }

  /**
   * `ha-manager crm-command stop <sid> <timeout>`: the service must be HA managed (not `ignored`) and not in
   * error; the command is queued for the CRM
   */
  crmStop(sidParam: string, timeout: number): void {
    const { sid } = this.parseSid(sidParam)
    if (!this.managedSid(sid)) throw fail500(`resource '${sid}' is not HA managed`)
    this.checkServiceState(sid, undefined)
    this.manager.queue(sid, { kind: 'stop', timeout })
  }

  /**
   * PVE::API2::HA::Resources migrate / relocate (and `ha-manager migrate|relocate`): parse_sid, service_is_ha_managed,
   * check_service_state, then the command is queued for the CRM, which checks the node; on 9.x the answer names the
   * resources that go along and those that block the node (get_resource_motion_info), on 8.x it is null
   */
  motion(task: 'migrate' | 'relocate', sidParam: string, node: string): Record<string, unknown> | null {
    const { sid } = this.parseSid(sidParam)
    if (!this.managedSid(sid)) throw fail500(`resource '${sid}' is not HA managed`)
    this.checkServiceState(sid, undefined)
    this.manager.queue(sid, { kind: task, target: node })
    if (this.c.pveVersion === '8.4') return null
    const info = this.motionInfo(sid)
    const out: Record<string, unknown> = { sid, 'requested-node': node }
    if (info.dependent.length > 0) out['comigrated-resources'] = info.dependent
    const blocking = info.blocking.get(node)
    if (blocking) out['blocking-resources'] = blocking
    return out
  }

  /**
   * PVE::HA::Config::get_resource_motion_info: the managed services in positive affinity with `sid` (they move
   * along), and per online node the ones in negative affinity that are there or going there (they block it)
   */
  motionInfo(sid: string): { dependent: string[]; blocking: Map<string, { sid: string; cause: string }[]> } {
    const dependent: string[] = []
    const blocking = new Map<string, { sid: string; cause: string }[]>()
    if (!this.managedSid(sid)) return { dependent, blocking }
    const { together, separate } = this.affinity(sid)
    const ss = this.manager.ss
    for (const csid of [...together].sort()) if (ss.has(csid)) dependent.push(csid)
    for (const node of this.manager.onlineNodes()) {
      for (const csid of [...separate].sort()) {
        const cs = ss.get(csid)
        if (!cs || cs.node !== node || (cs.target !== undefined && cs.target !== node)) continue
        blocking.set(node, [...(blocking.get(node) ?? []), { sid: csid, cause: 'resource-affinity' }])
      }
    }
    return { dependent, blocking }
  }

  /**
   * migrate_vm of an HA-managed guest (qemu-server and pve-container): a `hamigrate` worker runs `ha-manager migrate
   * <sid> <target>`; when the command fails, its error goes to the task log and the task fails as run_command
   * reports it
   */
  migrateRequest(g: Guest, target: string, caller: { actor: string }): string {
    const sid = Ha.sidOf(g)
    return this.c.dispatch(g.node, 'hamigrate', String(g.vmid), caller.actor, {
      durationMs: 0,
      run: (ctx) => {
        ctx.log(`Requesting HA migration for ${g.type === 'qemu' ? 'VM' : 'CT'} ${g.vmid} to node ${target}`)
        try {
          this.motion('migrate', sid, target)
        } catch (e) {
          if (!(e instanceof PveHttpError)) throw e
          ctx.log(e.message)
          throw new Error(`command 'ha-manager migrate ${sid} ${target}' failed: exit code 255`)
        }
      },
    })
  }

  /**
   * The compiled placement rules of a service: 9.x rules (node affinity, resource affinity), else the resource's
   * group (8.x, or 9.x before the groups are migrated) as migrate_groups_to_rules reads it
   */
  private affinity(sid: string): ServiceAffinity {
    const nodes = [...this.c.nodes.keys()]
    const compiled = this.c.pveVersion !== '8.4' ? this.rules.compile(sid, nodes) : undefined
    if (compiled?.nodes) return compiled
    const group = this.resources.get(sid)?.group
    const placement = group !== undefined ? this.groups.placement(group, nodes) : undefined
    return {
      ...(placement ? { nodes: placement.nodes } : {}),
      together: compiled?.together ?? new Set(),
      separate: compiled?.separate ?? new Set(),
    }
  }

  /**
   * The API start/stop/shutdown of an HA-managed guest: a `hastart`/`hastop` worker that runs the ha-manager
   * command; when the command fails, its error goes to the task log and the task fails as run_command reports it.
   */
  powerRequest(g: Guest, action: 'start' | 'stop' | 'shutdown', timeoutS: number, caller: { actor: string }): string {
    const sid = Ha.sidOf(g)
    const label = g.type === 'qemu' ? 'VM' : 'CT'
    const timeout = action === 'stop' ? 0 : timeoutS
    const command =
      action === 'start' ? `ha-manager set ${sid} --state started` : `ha-manager crm-command stop ${sid} ${timeout}`
    return this.c.dispatch(g.node, action === 'start' ? 'hastart' : 'hastop', String(g.vmid), caller.actor, {
      durationMs: 0,
      run: (ctx) => {
        ctx.log(`Requesting HA ${action === 'start' ? 'start' : 'stop'} for ${label} ${g.vmid}`)
        try {
          if (action === 'start') this.update({ sid, state: 'started' })
          else this.crmStop(sid, timeout)
        } catch (e) {
          if (!(e instanceof PveHttpError)) throw e
          ctx.log(e.message)
          throw new Error(`command '${command}' failed: exit code 255`)
        }
      },
    })
  }

  /** run the manager rounds that are due */
  settle(): void {
    this.manager.settle()
  }

  /**
   * read_and_check_resources_config: `started` when unset or `enabled`, max_restart and max_relocate 1, failback 1
   * (on 8.x and for a 9.x resource in a group not yet migrated: the group's `nofailback` negated)
   */
  private serviceConfig(sid: string): ServiceConfig | undefined {
    const r = this.resources.get(sid)
    if (!r) return undefined
    const state = r.state === undefined || r.state === 'enabled' ? 'started' : r.state
    const group = r.group !== undefined ? this.groups.placement(r.group, []) : undefined
    return {
      type: r.type,
      state: state as ServiceConfig['state'],
      maxRestart: r.max_restart ?? 1,
      maxRelocate: r.max_relocate ?? 1,
      failback: r.failback !== undefined ? r.failback === 1 : (group?.failback ?? true),
    }
  }

  /** the CRM's update_service_config (state stopped): resources.cfg changes, and with it the digest */
  private writeStopped(sid: string): void {
    const r = this.resources.get(sid)
    if (r) this.resources.set(sid, { ...r, state: 'stopped' })
  }

  private assign(conf: HaResourceConf, opts: Record<string, unknown>): void {
    for (const k of RESOURCE_KEYS) {
      const v = opts[k]
      if (v === undefined) continue
      if (k === 'max_restart' || k === 'max_relocate') conf[k] = Number(v)
      else if (k === 'failback') conf.failback = v === true || v === 1 || v === '1' ? 1 : 0
      else conf[k] = String(v)
    }
    if (conf.state !== undefined && !STATES.includes(conf.state)) {
      throw fail400({
        state: `value '${conf.state}' does not have a value in the enumeration '${STATES.join(', ')}'`,
      })
    }
  }
}
