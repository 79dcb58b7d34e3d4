import { createHash } from 'node:crypto'
import type { Caller } from '../http/types.js'
import type { Cluster, Guest } from './cluster.js'
import { fail400, fail500 } from './errors.js'
import { HA_DIGEST_MISMATCH, HaGroups, HaRules, underHaLock } from './ha-rules.js'
import { powerLxc } from './lxc.js'
import { shutdownQemu, startQemu, stopQemu } from './qemu.js'

/**
 * HA (pve-ha-manager): the resources config (`/etc/pve/ha/resources.cfg`), groups (8.x) or rules (9.x), and
 * the manager's service status. A power request on an HA-managed guest only records the wanted state (the
 * `hastart`/`hastop` worker runs `ha-manager set` / `crm-command stop` and ends at once); the CRM picks the
 * request up one cycle later (`lagMs`) and the LRM runs the real `qmstart`/`qmshutdown`/... task as root@pam.
 * Nothing runs on timers: Cluster.settle() runs the due CRM steps.
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

/** the manager's service_status entry (PVE::HA::Manager): started, request_stop, stopped, error, ... */
interface ServiceStatus {
  state: string
  node: string
  /** the LRM task working on the service */
  lrmTask?: string
}

interface CrmStep {
  dueMs: number
  sid: string
  /** crm-command stop <sid> <timeout>: 0 = hard stop (qmstop), else a shutdown with forceStop */
  stopTimeout?: number
}

const LRM: Caller = { userid: 'root@pam', actor: 'root@pam' }
const RESOURCE_KEYS = ['state', 'max_restart', 'max_relocate', 'comment', 'group', 'failback'] as const

export class Ha {
  readonly resources = new Map<string, HaResourceConf>()
  readonly service = new Map<string, ServiceStatus>()
  /** ha groups (PVE 8.x); on 9.x they are migrated to rules */
  readonly groups = new HaGroups()
  /** ha rules (PVE 9.x) */
  readonly rules = new HaRules()
  private steps: CrmStep[] = []

  constructor(
    private readonly c: Cluster,
    /** one CRM + LRM cycle: how long after a request the LRM task starts */
    public lagMs: number,
  ) {}

  static sidOf(g: Pick<Guest, 'type' | 'vmid'>): string {
    return `${g.type === 'qemu' ? 'vm' : 'ct'}:${g.vmid}`
  }

  /** PVE::HA::Config::vm_is_ha_managed: configured, and not `ignored` */
  managed(g: Pick<Guest, 'type' | 'vmid'>): boolean {
    const r = this.resources.get(Ha.sidOf(g))
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
    const s = this.service.get(Ha.sidOf(g))
    return s ? { managed: 1, state: s.state } : { managed: 1 }
  }

  /** /cluster/resources `hastate`: the manager's service state, else the configured request state */
  hastate(g: Guest): string | undefined {
    const sid = Ha.sidOf(g)
    return this.service.get(sid)?.state ?? this.resources.get(sid)?.state
  }

  /** the SHA-1 of resources.cfg as written (the `digest` of every resources read) */
  digest(): string {
    let text = ''
    for (const sid of [...this.resources.keys()].sort()) {
      const r = this.resources.get(sid) as HaResourceConf
      text += `${r.type}: ${sid.slice(3)}\n`
      for (const k of RESOURCE_KEYS) if (r[k] !== undefined) text += `\t${k} ${String(r[k])}\n`
      text += '\n'
    }
    return createHash('sha1').update(text).digest('hex')
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
  parseSid(sid: string): { sid: string; type: string; vmid: number } {
    const bare = /^(\d+)$/.exec(sid)
    if (bare) {
      const g = this.c.guests.get(Number(bare[1]))
      if (!g) throw fail500(`unable to detect SID from VMID - VM/CT ${bare[1]} does not exist`)
      return { sid: Ha.sidOf(g), type: g.type === 'qemu' ? 'vm' : 'ct', vmid: g.vmid }
    }
    const m = /^(\S+):(\S+)$/.exec(sid)
    if (!m) throw fail500(`unable to parse service id '${sid}'`)
    return { sid, type: m[1] as string, vmid: Number(m[2]) }
  }

  /** POST /cluster/ha/resources */
  create(params: Record<string, unknown>): null {
    const { sid, type, vmid } = this.parseSid(String(params.sid))
    if (params.type !== undefined && params.type !== type) throw fail500('types does not match')
    if (params.group !== undefined && this.groupsMigrated())
      throw fail500(`invalid parameter 'group': ha groups have been migrated to rules`)
    if (type !== 'vm' && type !== 'ct') throw fail500(`unknown resource type '${type}'`)
    // PVEVM/PVECT exists(): the guest must be in the cluster's vmlist, of the right kind
    const g = this.c.guests.get(vmid)
    if (!g) throw fail500(`resource '${sid}' does not exist in cluster`)
    if ((g.type === 'qemu') !== (type === 'vm'))
      throw fail500(`resource '${sid}' - guest with ID ${vmid} is not a ${type === 'vm' ? 'VM' : 'container'}`)
    // create does not check that the group exists (the index then reports it in `errors`)
    const conf: HaResourceConf = { type }
    this.assign(conf, params)
    underHaLock('create resource failed', () => {
      if (this.resources.has(sid)) throw fail500(`resource ID '${sid}' already defined`)
      this.resources.set(sid, conf)
    })
    this.schedule(sid)
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
    this.schedule(sid)
  }

  /** PUT /cluster/ha/resources/{sid} (update_resources_config with digest and delete) */
  update(params: Record<string, unknown>): null {
    const { sid, type } = this.parseSid(String(params.sid))
    if (params.type !== undefined && params.type !== type) throw fail500('types does not match')
    if (params.group !== undefined) {
      if (this.groupsMigrated()) throw fail500(`invalid parameter 'group': ha groups have been migrated to rules`)
      if (!this.groups.ids.has(String(params.group))) throw fail500(`HA group '${String(params.group)}' does not exist`)
    }
    this.checkServiceState(sid, params.state === undefined ? undefined : String(params.state))
    // update_resources_config: digest, then the section; options are set, then `delete` removes
    underHaLock('update resources config failed', () => {
      if (params.digest !== undefined && String(params.digest) !== this.digest()) throw fail500(HA_DIGEST_MISMATCH)
      const conf = this.resources.get(sid)
      if (!conf) throw fail500(`no such resource '${sid}'`)
      const next = { ...conf }
      this.assign(next, params)
      for (const k of String(params.delete ?? '')
        .split(/[,;\s]+/)
        .filter(Boolean)) {
        if (!(RESOURCE_KEYS as readonly string[]).includes(k)) throw fail500(`no such option '${k}'`)
        delete (next as unknown as Record<string, unknown>)[k]
      }
      this.resources.set(sid, next)
    })
    this.schedule(sid)
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
    this.service.delete(sid)
    this.steps = this.steps.filter((s) => s.sid !== sid)
    if (purge && this.c.pveVersion !== '8.4') this.rules.purge(sid)
  }

  /** the resource naming a group (groups delete refuses it) */
  groupUser(group: string): string | undefined {
    return [...this.resources.keys()].sort().find((sid) => this.resources.get(sid)?.group === group)
  }

  /** check_service_state: a service in `error` takes only `disabled` */
  checkServiceState(sid: string, requested: string | undefined): void {
    if (this.service.get(sid)?.state !== 'error' || requested === 'disabled') return
    throw fail500(`service '${sid}' in error state, must be disabled and fixed first`)
  }

  /**
   * The API start/stop/shutdown of an HA-managed guest: a `hastart`/`hastop` worker that only records the
   * request (`ha-manager set <sid> --state started`, `ha-manager crm-command stop <sid> <timeout>`).
   */
  powerRequest(g: Guest, action: 'start' | 'stop' | 'shutdown', timeoutS: number, caller: Caller): string {
    const sid = Ha.sidOf(g)
    const label = g.type === 'qemu' ? 'VM' : 'CT'
    return this.c.dispatch(g.node, action === 'start' ? 'hastart' : 'hastop', String(g.vmid), caller.actor, {
      durationMs: 0,
      run: (ctx) => {
        const conf = this.resources.get(sid)
        if (!conf) throw new Error(`resource '${sid}' is not HA managed`)
        if (action === 'start') {
          ctx.log(`Requesting HA start for ${label} ${g.vmid}`)
          this.checkServiceState(sid, 'started')
          conf.state = 'started'
          this.schedule(sid)
        } else {
          ctx.log(`Requesting HA stop for ${label} ${g.vmid}`)
          // the CRM queues the command and writes `state stopped` into resources.cfg when it runs it
          this.schedule(sid, action === 'stop' ? 0 : timeoutS)
        }
      },
    })
  }

  private assign(conf: HaResourceConf, params: Record<string, unknown>): void {
    for (const k of RESOURCE_KEYS) {
      const v = params[k]
      if (v === undefined) continue
      if (k === 'max_restart' || k === 'max_relocate') conf[k] = Number(v)
      else if (k === 'failback') conf.failback = v === true || v === 1 || v === '1' ? 1 : 0
      else conf[k] = String(v)
    }
    if (conf.state !== undefined && !['started', 'stopped', 'enabled', 'disabled', 'ignored'].includes(conf.state)) {
      throw fail400({
        state: `value '${conf.state}' does not have a value in the enumeration 'started, stopped, enabled, disabled, ignored'`,
      })
    }
  }

  private schedule(sid: string, stopTimeout?: number): void {
    const step: CrmStep = { dueMs: this.c.now() + this.lagMs, sid }
    if (stopTimeout !== undefined) step.stopTimeout = stopTimeout
    this.steps.push(step)
  }

  /** run the CRM steps that are due, in order */
  settle(): void {
    const now = this.c.now()
    const due = this.steps.filter((s) => s.dueMs <= now).sort((a, b) => a.dueMs - b.dueMs)
    if (due.length === 0) return
    this.steps = this.steps.filter((s) => s.dueMs > now)
    for (const s of due) this.step(s)
  }

  /** one CRM decision for a service, and the LRM task that carries it out */
  private step(s: CrmStep): void {
    const conf = this.resources.get(s.sid)
    const g = this.c.guests.get(Number(s.sid.slice(3)))
    if (!conf || !g) return
    const svc = this.service.get(s.sid) ?? { state: g.status === 'running' ? 'started' : 'stopped', node: g.node }
    this.service.set(s.sid, svc)
    if (svc.lrmTask !== undefined && this.c.tasks.peek(svc.lrmTask)?.status === 'running') {
      // the LRM is still busy with this service: look again next cycle
      this.steps.push({ ...s, dueMs: this.c.now() + this.lagMs })
      return
    }
    if (s.stopTimeout !== undefined) conf.state = 'stopped'
    const wanted = conf.state === undefined || conf.state === 'enabled' ? 'started' : conf.state
    if (wanted === 'ignored') return
    if (wanted === 'started') {
      if (svc.state === 'error') return
      svc.state = 'started'
      if (g.status === 'running') return
      this.lrm(svc, 'started', () =>
        g.type === 'qemu'
          ? startQemu(this.c, g.node, g.vmid, {}, LRM, true)
          : powerLxc(this.c, g.node, g.vmid, 'start', {}, LRM, true),
      )
      return
    }
    // stopped and disabled: the LRM stops the guest (a shutdown with forceStop, or a hard stop for timeout 0)
    if (g.status !== 'running') {
      svc.state = 'stopped'
      return
    }
    svc.state = 'request_stop'
    const timeout = s.stopTimeout ?? 60
    this.lrm(svc, 'stopped', () =>
      g.type === 'qemu'
        ? timeout === 0
          ? stopQemu(this.c, g.node, g.vmid, {}, LRM, true)
          : shutdownQemu(this.c, g.node, g.vmid, { timeout, forceStop: true }, LRM, true)
        : powerLxc(
            this.c,
            g.node,
            g.vmid,
            timeout === 0 ? 'stop' : 'shutdown',
            { timeout, forceStop: true },
            LRM,
            true,
          ),
    )
  }

  /**
   * The LRM runs the real API call; the service follows its task: `done` on success, `error` on failure
   * (or when the call dies before forking). HA's restart/relocate policy is not modelled.
   */
  private lrm(svc: ServiceStatus, done: string, start: () => string): void {
    let upid: string
    try {
      upid = start()
    } catch {
      svc.state = 'error'
      return
    }
    svc.lrmTask = upid
    const t = this.c.tasks.peek(upid)
    if (!t) return
    const { run, onError } = t.work
    t.work = {
      ...t.work,
      run: (ctx) => {
        run(ctx)
        svc.state = done
      },
      onError: (message) => {
        onError?.(message)
        svc.state = 'error'
      },
    }
  }
}
