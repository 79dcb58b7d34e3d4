import type { Caller } from './caller.js'
import type { Cluster, Guest } from './cluster.js'
import { selectServiceNode, type NodePreference } from './ha-placement.js'
import { powerLxc } from './lxc.js'
import { migrateLxc } from './migrate-lxc.js'
import { migrateQemu } from './migrate-qemu.js'
import { shutdownQemu, startQemu, stopQemu } from './qemu.js'
import type { Task } from './tasks.js'

/**
 * The HA manager's service state machine (pve-ha-manager PVE::HA::Manager, the CRM), its node status
 * (PVE::HA::NodeStatus: fence delay, fencing through the failed node's agent lock) and the node's resource agent
 * runs (PVE::HA::LRM with the PVEVM / PVECT plugins), for one service at a time. A round of a service is what a
 * CRM round and the LRM round after it do to it: the CRM adds the service, reads its queued crm commands (`stop`,
 * `migrate`, `relocate`), moves it through next_state_* (using the LRM's result for the service's current uid),
 * fences and recovers it when its node failed, and the LRM then runs exec_resource_agent for the state, as the real
 * `qmstart` / `qmshutdown` / `qmigrate` / `vzstart` / ... tasks (root@pam). Rounds run one `lagMs` after whatever
 * needs one (a request, an LRM task that ended, a guest that changed state out of band, a node that failed or came
 * back, a rule change), or at the moment a fence delay or an agent lock expires; a service with nothing to do gets
 * no round, so the model is deterministic on the simulator's clock and costs nothing when idle.
 *
 * Not modelled (docs/gaps/simulator-model.md): maintenance mode and disarm, the static and dynamic CRS schedulers,
 * rebalancing (`ha-rebalance-on-start`, auto-rebalance), freeze on an LRM restart, the transformation of resource
 * affinity rules (a resource does not inherit its positive partners' negative relations).
 */

export type ServiceState =
  'request_start' | 'started' | 'request_stop' | 'stopped' | 'error' | 'migrate' | 'relocate' | 'fence' | 'recovery'

/** a crm command (ha/crm_commands) */
export type CrmCommand = { kind: 'stop'; timeout: number } | { kind: 'migrate' | 'relocate'; target: string }

/** one entry of the manager status' service_status */
export interface ServiceStatus {
  state: ServiceState
  node: string
  /** the uid the LRM result must carry to count (compute_new_uuid) */
  uid: number
  /** a crm command the state machine has not handled yet */
  cmd?: CrmCommand
  /** request_stop's timeout (from a stop command) */
  timeout?: number
  /** migrate / relocate: the node the service goes to */
  target?: string
  failedNodes?: string[]
  /** set once a start succeeded, while the service stays `started` */
  running?: boolean
}

/** the resource as the CRM reads it (read_and_check_resources_config: defaults filled in) */
export interface ServiceConfig {
  type: 'vm' | 'ct'
  state: 'started' | 'stopped' | 'disabled' | 'ignored'
  maxRestart: number
  maxRelocate: number
  failback: boolean
}

/** the compiled rules for one service (node affinity, resource affinity partners) */
export interface ServiceAffinity {
  nodes?: ReadonlyMap<string, number>
  together: ReadonlySet<string>
  separate: ReadonlySet<string>
}

export interface ManagerHooks {
  /** the configured services (resources.cfg), sorted */
  configured(): string[]
  config(sid: string): ServiceConfig | undefined
  /** update_service_config($sid, { state => 'stopped' }): the CRM's write into resources.cfg */
  writeStopped(sid: string): void
  /** the compiled node and resource affinity of a service (rules on 9.x, its group on 8.x) */
  affinity(sid: string): ServiceAffinity
}

/** the CRM's view of a node (PVE::HA::NodeStatus); `gone` and `maintenance` are not modelled */
type NodeStatus = 'online' | 'unknown' | 'fence'

/** PVE::HA::Tools exit codes, and what an LRM worker whose agent died exits with (POSIX::_exit(-1)) */
const SUCCESS = 0
const ERROR = 1
const AGENT_DIED = 255

/** the LRM's API calls run as root@pam with rpcenv type `ha` (byHa), so they are not turned into HA requests */
const LRM: Caller = { userid: 'root@pam', actor: 'root@pam' }
const LOG_LINES = 1000
/** fence_recovery_cleanup's locks that are safe to drop once the node was reset */
const REMOVABLE_LOCKS = [
  'backup',
  'mounted',
  'migrate',
  'clone',
  'rollback',
  'snapshot',
  'snapshot-delete',
  'suspending',
  'suspended',
]

const commandText = (sid: string, cmd: CrmCommand): string =>
  cmd.kind === 'stop' ? `stop ${sid} ${cmd.timeout}` : `${cmd.kind} ${sid} ${cmd.target}`

export class HaManager {
  /** the manager status' service_status */
  readonly ss = new Map<string, ServiceStatus>()
  /** the CRM and LRM log lines (syslog on PVE; not served by the API), newest last */
  readonly log: string[] = []
  /** the manager status' node_status */
  private readonly nodeStatus = new Map<string, NodeStatus>()
  /** queued crm commands per service (ha/crm_commands) */
  private readonly commands = new Map<string, CrmCommand[]>()
  /** the LRM's last result per service: valid only while its uid is the service's */
  private readonly results = new Map<string, { uid: number; exit: number }>()
  /** the LRM worker running a resource agent for a service */
  private readonly workers = new Map<string, { uid: number; state: ServiceState }>()
  /** the LRM's restart_tries */
  private readonly tries = new Map<string, number>()
  /** when each service's next round is due */
  private readonly rounds = new Map<string, number>()
  /** LRM workers' next steps, run once the task they waited on has ended (upid_wait returned) */
  private readonly continuations: (() => void)[] = []
  private uidCounter = 0

  constructor(
    private readonly c: Cluster,
    private readonly hooks: ManagerHooks,
    /** one CRM + LRM cycle */
    private lag: number,
  ) {}

  get lagMs(): number {
    return this.lag
  }

  /** a new cycle length (setHaLag) holds from now on: the rounds already scheduled are one new cycle away */
  set lagMs(ms: number) {
    this.lag = ms
    const at = this.c.now() + ms
    for (const sid of this.rounds.keys()) this.rounds.set(sid, at)
  }

  /** a round for the service one cycle from now, unless one is already due */
  wake(sid: string): void {
    this.wakeAt(sid, this.c.now() + this.lag)
  }

  /** a round at `at` at the latest */
  private wakeAt(sid: string, at: number): void {
    const due = this.rounds.get(sid)
    if (due === undefined || at < due) this.rounds.set(sid, at)
  }

  /** every configured service gets a round (a node came back or failed, the rules changed) */
  wakeAll(): void {
    for (const sid of this.hooks.configured()) this.wake(sid)
  }

  /** queue_crm_commands("stop $sid $timeout") / ("migrate|relocate $sid $node") */
  queue(sid: string, cmd: CrmCommand): void {
    this.commands.set(sid, [...(this.commands.get(sid) ?? []), cmd])
    this.wake(sid)
  }

  /** a node came back online: every service gets a round (its LRM runs again, failback may move services there) */
  wakeNode(_node: string): void {
    this.wakeAll()
  }

  /** the resource left the config (delete_service_from_config): the manager and the LRM forget it */
  forget(sid: string): void {
    for (const m of [this.ss, this.commands, this.results, this.workers, this.tries, this.rounds]) m.delete(sid)
  }

  /** continue the LRM workers whose task ended, then run the rounds that are due, earliest first */
  settle(): void {
    while (this.continuations.length > 0) (this.continuations.shift() as () => void)()
    const now = this.c.now()
    const due = [...this.rounds].filter(([, t]) => t <= now).sort(([a, ta], [b, tb]) => ta - tb || (a < b ? -1 : 1))
    for (const [sid] of due) {
      this.rounds.delete(sid)
      this.round(sid)
    }
  }

  private say(level: string, message: string): void {
    this.log.push(`${level}: ${message}`)
    if (this.log.length > LOG_LINES) this.log.splice(0, this.log.length - LOG_LINES)
  }

  /** the LRM of the guest's node runs (an offline or failed node's does not) */
  private lrmUp(g: Guest): boolean {
    return this.c.nodes.get(g.node)?.online === true
  }

  private guest(sid: string): Guest | undefined {
    return this.c.guests.get(Number(sid.slice(sid.indexOf(':') + 1)))
  }

  // --- node status (PVE::HA::NodeStatus)

  /**
   * NodeStatus::update: a node the cluster still has is online unless it failed (control `failNode`), which takes
   * it out of the quorate partition; a node that is only unreachable through the API (`setNodeOnline`) stays a
   * member. A fenced node stays `fence` until its fencing completes.
   */
  private updateNodes(): void {
    this.knowNodes()
    for (const [name, n] of this.c.nodes) {
      const state = this.nodeStatus.get(name) as NodeStatus
      if (!n.failed) {
        if (state === 'unknown') this.setNode(name, 'online')
      } else if (state === 'online') this.setNode(name, 'unknown')
    }
  }

  /** the manager has been running since before the simulation started: it knows every member as online */
  private knowNodes(): void {
    for (const name of this.c.nodes.keys()) if (!this.nodeStatus.has(name)) this.nodeStatus.set(name, 'online')
  }

  private setNode(node: string, state: NodeStatus): void {
    const last = this.nodeStatus.get(node) ?? 'unknown'
    if (last === state) return
    this.nodeStatus.set(node, state)
    this.say('info', `node '${node}': state changed from '${last}' => '${state}'`)
  }

  private nodeOnline(node: string): boolean {
    return this.nodeStatus.get(node) === 'online'
  }

  /** the nodes the manager's node status has online */
  onlineNodes(): string[] {
    this.knowNodes()
    return [...this.nodeStatus].filter(([, s]) => s === 'online').map(([n]) => n)
  }

  /** node_is_offline_delayed: not online for the fence delay (PVE: 60 s) since it was last seen */
  private offlineDelayed(node: string): boolean {
    const failed = this.c.nodes.get(node)?.failed
    if (!failed || this.nodeOnline(node)) return false
    return this.c.now() - failed.atMs >= failed.fenceDelayMs
  }

  /**
   * fence_node: the node is `fence` until the manager gets its agent lock, which the failed node's LRM held and
   * which expires after the lock timeout (PVE: 120 s); a node that came back meanwhile was reset, its lock is free
   */
  private fenceNode(node: string): boolean {
    if (this.nodeStatus.get(node) !== 'fence') {
      this.setNode(node, 'fence')
    }
    const failed = this.c.nodes.get(node)?.failed
    if (failed && this.c.now() - failed.atMs < failed.agentLockMs) return false
    this.say('info', `fencing: acknowledged - got agent lock for node '${node}'`)
    this.setNode(node, 'unknown')
    return true
  }

  // --- a round

  private round(sid: string): void {
    this.updateNodes()
    const cd = this.hooks.config(sid)
    const g = this.guest(sid)
    if (!cd || !g) return
    // manage(): add new services, remove ignored ones, then read the crm commands
    if (cd.state === 'ignored') {
      if (this.ss.has(sid)) this.say('info', `removing stale service '${sid}' (ignored state requested)`)
      for (const cmd of this.commands.get(sid) ?? [])
        this.say('err', `crm command error - no such service: ${commandText(sid, cmd)}`)
      this.forget(sid)
      return
    }
    if (!this.ss.has(sid)) {
      this.say('info', `adding new service '${sid}' on node '${g.node}'`)
      this.ss.set(sid, {
        state: cd.state === 'started' ? 'request_start' : 'request_stop',
        node: g.node,
        uid: this.uid(),
      })
    }
    this.readCommands(sid)
    // the state machine runs again while the state changes (manage's `repeat`)
    for (;;) {
      const last = this.status(sid).state
      this.next(sid, cd, g)
      if (this.status(sid).state === last) break
    }
    this.lrm(sid, cd, g)
    const at = this.nextRound(sid, cd, g)
    if (at !== undefined) this.wakeAt(sid, at)
  }

  /** update_crm_commands for this service's commands */
  private readCommands(sid: string): void {
    for (const cmd of this.commands.get(sid) ?? []) {
      const text = commandText(sid, cmd)
      if (cmd.kind === 'stop') {
        this.say('info', `got crm command: ${text}`)
        this.status(sid).cmd = cmd
      } else if (!this.nodeOnline(cmd.target)) {
        this.say('err', `crm command error - node not online: ${text}`)
      } else if (cmd.target === this.status(sid).node) {
        this.say('info', `ignore crm command - service already on target node: ${text}`)
      } else {
        this.queueResourceMotion(text, sid, cmd)
      }
    }
    this.commands.delete(sid)
  }

  /**
   * queue_resource_motion: a service in negative affinity on the target refuses the command; services in positive
   * affinity go along to the target
   */
  private queueResourceMotion(text: string, sid: string, cmd: CrmCommand & { kind: 'migrate' | 'relocate' }): void {
    const { together, separate } = this.hooks.affinity(sid)
    for (const csid of [...separate].sort()) {
      const cs = this.ss.get(csid)
      if (!cs || cs.node !== cmd.target || (cs.target !== undefined && cs.target !== cmd.target)) continue
      this.say(
        'err',
        `crm command '${text}' error - service '${csid}' on node '${cmd.target}' in negative affinity with service '${sid}'`,
      )
      return
    }
    this.say('info', `got crm command: ${text}`)
    this.status(sid).cmd = cmd
    for (const csid of [...together].sort()) {
      const cs = this.ss.get(csid)
      if (!cs || cs.node === cmd.target || cs.target === cmd.target) continue
      this.say(
        'info',
        `crm command '${text}' - ${cmd.kind} service '${csid}' to node '${cmd.target}' (service '${csid}' in positive affinity with service '${sid}')`,
      )
      cs.cmd = { ...cmd }
      this.wake(csid)
    }
  }

  private status(sid: string): ServiceStatus {
    return this.ss.get(sid) as ServiceStatus
  }

  private uid(): number {
    return ++this.uidCounter
  }

  /** the LRM result for the service's current uid */
  private result(sid: string): number | undefined {
    const r = this.results.get(sid)
    return r && r.uid === this.ss.get(sid)?.uid ? r.exit : undefined
  }

  /**
   * change_service_state: a new uid; of the old entry only node and failed_nodes stay, the given parameters are
   * set (and logged, sorted by name)
   */
  private change(sid: string, state: ServiceState, params: { node?: string; target?: string; timeout?: number } = {}) {
    const old = this.status(sid)
    const sd: ServiceStatus = { state, node: params.node ?? old.node, uid: this.uid() }
    if (old.failedNodes) sd.failedNodes = old.failedNodes
    if (params.target !== undefined) sd.target = params.target
    if (params.timeout !== undefined) sd.timeout = params.timeout
    this.ss.set(sid, sd)
    const text = Object.entries(params)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v]) => `${k} = ${String(v)}`)
      .join(', ')
    this.say('info', `service '${sid}': state changed from '${old.state}' to '${state}'${text ? `  (${text})` : ''}`)
  }

  private next(sid: string, cd: ServiceConfig, g: Guest): void {
    const sd = this.status(sid)
    switch (sd.state) {
      case 'stopped':
        return this.nextStopped(sid, sd, cd, g)
      case 'request_start':
        return this.change(sid, 'started', { node: sd.node })
      case 'started':
        return this.nextStarted(sid, sd, cd)
      case 'request_stop':
        return this.nextRequestStop(sid, sd)
      case 'migrate':
      case 'relocate':
        return this.nextMigrateRelocate(sid, sd, cd)
      case 'fence':
        // manage()'s fencing loop: once the node is fenced the service is recovered
        if (this.fenceNode(sd.node)) this.change(sid, 'recovery')
        return
      case 'recovery':
        return this.nextRecovery(sid, sd, cd, g)
      case 'error':
        return this.nextError(sid, sd, cd)
    }
  }

  /** a migrate or relocate command of a stopped or started service */
  private motion(sid: string, sd: ServiceStatus, cmd: CrmCommand & { kind: 'migrate' | 'relocate' }, log: boolean) {
    if (!this.nodeOnline(cmd.target)) {
      this.say('err', `ignore service '${sid}' ${cmd.kind} request - node '${cmd.target}' not online`)
    } else if (sd.node === cmd.target) {
      this.say('info', `ignore service '${sid}' ${cmd.kind} request - service already on node '${cmd.target}'`)
    } else {
      if (log) this.say('info', `${cmd.kind} service '${sid}' to node '${cmd.target}'`)
      this.change(sid, cmd.kind, { node: sd.node, target: cmd.target })
      return
    }
    delete sd.cmd
  }

  /**
   * next_state_stopped: the node fixed up from the config, a migrate/relocate command moves the stopped service, a
   * stop command is ignored (`service already stopped`), a failed node is fenced, a started config starts it
   */
  private nextStopped(sid: string, sd: ServiceStatus, cd: ServiceConfig, g: Guest): void {
    if (sd.node !== g.node) {
      this.say('info', `fixup service '${sid}' location (${sd.node} => ${g.node})`)
      sd.node = g.node
    }
    if (sd.cmd) {
      const cmd = sd.cmd
      if (cmd.kind !== 'stop') {
        this.motion(sid, sd, cmd, false)
        if (this.status(sid) !== sd) return
      } else {
        this.say('info', `ignore service '${sid}' stop request - service already stopped`)
        delete sd.cmd
      }
    }
    if (cd.state === 'disabled') return
    if (this.offlineDelayed(sd.node)) return this.change(sid, 'fence')
    if (cd.state === 'started') this.change(sid, 'request_start', { node: sd.node })
  }

  /** select_service_node with what the manager knows now */
  private select(sid: string, sd: ServiceStatus, cd: ServiceConfig, preference: NodePreference): string | undefined {
    const online = this.onlineNodes()
    const onlineSet = new Set(online)
    const score = new Map(online.map((n) => [n, 0]))
    // Usage::Basic: every HA service counts on its current node, a moving one on its target too
    for (const s of this.ss.values()) {
      if (s.state === 'stopped' || s.state === 'request_start') continue
      for (const n of new Set([
        s.node,
        ...(s.target !== undefined && (s.state === 'migrate' || s.state === 'relocate') ? [s.target] : []),
      ]))
        if (onlineSet.has(n)) score.set(n, (score.get(n) ?? 0) + 1)
    }
    const affinity = this.hooks.affinity(sid)
    const used = (csid: string): string[] => {
      const s = this.ss.get(csid)
      if (!s || s.state === 'stopped' || s.state === 'request_start') return []
      const moving = s.state === 'migrate' || s.state === 'relocate'
      return [s.node, ...(moving && s.target !== undefined ? [s.target] : [])].filter((n) => onlineSet.has(n))
    }
    const together = new Map<string, number>()
    for (const csid of affinity.together) {
      const nodes = used(csid)
      // the target only: a service that moved already does not pull the others back
      const node = nodes[nodes.length - 1]
      if (node !== undefined) together.set(node, (together.get(node) ?? 0) + 1)
    }
    const separate = new Set([...affinity.separate].flatMap(used))
    return selectServiceNode({
      current: sd.node,
      failedNodes: sd.failedNodes ?? [],
      failback: cd.failback,
      preference,
      online,
      ...(affinity.nodes ? { nodeAffinity: affinity.nodes } : {}),
      together,
      separate,
      score,
    })
  }

  /**
   * next_state_started: a failed node fences the service; a stopped or disabled config asks for a stop; a command
   * moves or stops it (a stop writes `state stopped` into the config); else the LRM's result is judged (a failed
   * start is recorded on the node and relocated while the failed nodes are at most max_relocate, else `error`)
   * and select_service_node may move the service (failback to a preferred node, the next node after a failure)
   */
  private nextStarted(sid: string, sd: ServiceStatus, cd: ServiceConfig): void {
    if (!this.nodeOnline(sd.node)) {
      if (this.offlineDelayed(sd.node)) this.change(sid, 'fence')
      return
    }
    if (cd.state === 'disabled' || cd.state === 'stopped') return this.change(sid, 'request_stop')
    if (sd.cmd) {
      const cmd = sd.cmd
      if (cmd.kind !== 'stop') return this.motion(sid, sd, cmd, true)
      const { timeout } = cmd
      this.say(
        'info',
        timeout === 0
          ? `request immediate service hard-stop for service '${sid}'`
          : `request graceful stop with timeout '${timeout}' for service '${sid}'`,
      )
      this.change(sid, 'request_stop', { timeout })
      this.hooks.writeStopped(sid)
      return
    }
    let preference: NodePreference = 'none'
    const exit = this.result(sid)
    if (exit === SUCCESS) {
      if (sd.failedNodes)
        this.say(
          'info',
          `relocation policy successful for '${sid}' on node '${sd.node}', failed nodes: ${sd.failedNodes.join(', ')}`,
        )
      delete sd.failedNodes
      sd.running = true
    } else if (exit !== undefined) {
      sd.failedNodes = [...(sd.failedNodes ?? []), sd.node]
      delete sd.running
      if (exit !== ERROR) {
        this.say('err', `service '${sid}' got unrecoverable error (exit code ${exit})`)
        return this.change(sid, 'error')
      }
      if (sd.failedNodes.length > cd.maxRelocate) {
        this.say(
          'err',
          `recovery policy for service ${sid} failed, entering error state. Failed nodes: ${sd.failedNodes.join(', ')}`,
        )
        return this.change(sid, 'error')
      }
      this.say('warning', `starting service ${sid} on node '${sd.node}' failed, relocating service.`)
      preference = 'try-next'
    }
    const node = this.select(sid, sd, cd, preference)
    if (node !== undefined && node !== sd.node) {
      if (cd.type === 'vm') {
        this.say('info', `migrate service '${sid}' to node '${node}' (running)`)
        return this.change(sid, 'migrate', { node: sd.node, target: node })
      }
      this.say('info', `relocate service '${sid}' to node '${node}'`)
      return this.change(sid, 'relocate', { node: sd.node, target: node })
    }
    if (preference === 'try-next' && node === undefined)
      this.say(
        'warning',
        `Start Error Recovery: Tried all available nodes for service '${sid}', retry start on current node. Tried nodes: ${(sd.failedNodes ?? []).join(', ')}`,
      )
    // a new uid: the LRM runs `started` again (and so restarts a guest that went down)
    if (exit !== undefined) sd.uid = this.uid()
  }

  /** next_state_request_stop: the LRM's result decides: stopped, or error; a failed node fences the service */
  private nextRequestStop(sid: string, sd: ServiceStatus): void {
    const exit = this.result(sid)
    if (exit === SUCCESS) return this.change(sid, 'stopped')
    if (exit !== undefined) {
      this.say('err', `service '${sid}' stop failed (exit code ${exit})`)
      return this.change(sid, 'error')
    }
    if (this.offlineDelayed(sd.node)) this.change(sid, 'fence')
  }

  /**
   * next_state_migrate_relocate: a successful move puts the service on the target (started, or asked to stop when
   * its config no longer wants it running); a failed one leaves it where it was
   */
  private nextMigrateRelocate(sid: string, sd: ServiceStatus, cd: ServiceConfig): void {
    const exit = this.result(sid)
    const wanted = cd.state === 'started' ? 'started' : 'request_stop'
    if (exit === SUCCESS) return this.change(sid, wanted, { node: sd.target as string })
    if (exit !== undefined) {
      this.say('err', `service '${sid}' - migration failed (exit code ${exit})`)
      return this.change(sid, wanted, { node: sd.node })
    }
    if (this.offlineDelayed(sd.node)) this.change(sid, 'fence')
  }

  /**
   * next_state_recovery: after the fence, the service goes to the best-scored node it may run on; its leftover
   * locks are dropped (fence_recovery_cleanup) and its config is moved there (steal_service). Without a node it
   * waits (a disabled config takes it to stopped).
   */
  private nextRecovery(sid: string, sd: ServiceStatus, cd: ServiceConfig, g: Guest): void {
    const fenced = sd.node
    const node = this.select(sid, sd, cd, 'best-score')
    if (node === undefined) {
      this.say('err', `recovering service '${sid}' from fenced node '${fenced}' failed, no recovery node found`)
      if (cd.state === 'disabled') {
        delete sd.failedNodes
        this.change(sid, 'stopped')
      }
      return
    }
    this.say(
      'info',
      node === fenced
        ? `recover service '${sid}' to previous failed and fenced node '${fenced}' again`
        : `recover service '${sid}' from fenced node '${fenced}' to node '${node}'`,
    )
    const lock = g.conf.get('lock')
    if (lock !== undefined && REMOVABLE_LOCKS.includes(lock)) {
      g.conf.delete('lock')
      this.say('warning', `removed leftover lock '${lock}' from recovered service '${sid}' to allow its start.`)
    }
    // steal_service: the config file moves to the recovery node; the guest went down with the fenced node
    g.node = node
    sd.node = node
    this.change(sid, cd.state === 'started' ? 'started' : 'request_stop', { node })
  }

  /** next_state_error: only a `disabled` config takes a service out of error, to `stopped` */
  private nextError(sid: string, sd: ServiceStatus, cd: ServiceConfig): void {
    if (cd.state !== 'disabled') return
    delete sd.failedNodes
    this.change(sid, 'stopped')
  }

  /**
   * LRM manage_resources + exec_resource_agent for the service's state. A command is not run twice for one uid
   * (except `stopped`, run every round), nor while a worker runs for the service.
   */
  private lrm(sid: string, cd: ServiceConfig, g: Guest): void {
    const sd = this.status(sid)
    if (['request_start', 'fence', 'recovery'].includes(sd.state) || this.workers.has(sid) || !this.lrmUp(g)) return
    if (sd.state !== 'stopped' && this.result(sid) !== undefined) return
    const running = g.status === 'running'
    if (sd.state === 'error') {
      this.say(
        'err',
        `service ${sid} is in an error state and needs manual intervention. Look up 'ERROR RECOVERY' in the documentation.`,
      )
      return this.record(sid, sd.uid, sd.state, SUCCESS, cd)
    }
    if (sd.state === 'migrate' || sd.state === 'relocate') return this.migrateAgent(sid, sd, cd, g)
    if (sd.state === 'started') {
      // a service known to run that still runs: the CRM would only hand out a new uid
      if (running && sd.running && !sd.failedNodes) return
      if (running) return this.record(sid, sd.uid, sd.state, SUCCESS, cd)
      this.say('info', `starting service ${sid}`)
      return this.agent(
        sid,
        sd,
        [
          () =>
            g.type === 'qemu'
              ? startQemu(this.c, g.node, g.vmid, {}, LRM, true)
              : powerLxc(this.c, g.node, g.vmid, 'start', {}, LRM, true),
        ],
        () => this.judgePower(sid, g, 'started'),
      )
    }
    // request_stop and stopped: PVEVM/PVECT shutdown, a hard stop for timeout 0 (a VM's shutdown forces the stop)
    if (!running) return this.record(sid, sd.uid, sd.state, SUCCESS, cd)
    const timeout = sd.timeout ?? 60
    this.say(
      'info',
      sd.timeout !== undefined ? `stopping service ${sid} (timeout=${timeout})` : `stopping service ${sid}`,
    )
    this.agent(sid, sd, [() => this.shutdown(g, timeout)], () => this.judgePower(sid, g, 'stopped'))
  }

  /** PVEVM / PVECT shutdown: a VM's is forced after the timeout, a hard stop for timeout 0 */
  private shutdown(g: Guest, timeout: number): string {
    if (g.type === 'qemu')
      return timeout === 0
        ? stopQemu(this.c, g.node, g.vmid, {}, LRM, true)
        : shutdownQemu(this.c, g.node, g.vmid, { timeout, forceStop: true }, LRM, true)
    return powerLxc(this.c, g.node, g.vmid, timeout === 0 ? 'stop' : 'shutdown', { timeout }, LRM, true)
  }

  /** the LRM's check_running after a start or stop task */
  private judgePower(sid: string, g: Guest, state: 'started' | 'stopped'): number {
    const running = g.status === 'running'
    const ok = state === 'started' ? running : !running
    this.say(
      ok ? 'info' : 'warning',
      state === 'started'
        ? ok
          ? `service status ${sid} started`
          : `unable to start service ${sid}`
        : ok
          ? `service status ${sid} stopped`
          : `unable to stop service ${sid} (still running)`,
    )
    return ok ? SUCCESS : ERROR
  }

  /**
   * exec_resource_agent for migrate / relocate: nothing to do when the guest is on the target already; else the
   * plugin's migrate: PVEVM shuts a VM down for a relocation and migrates online (force, with-local-disks) for a
   * migration; PVECT always shuts a container down and migrates it offline. The service moved when its config left
   * the node.
   */
  private migrateAgent(sid: string, sd: ServiceStatus, cd: ServiceConfig, g: Guest): void {
    const target = sd.target as string
    if (g.node === target) return this.record(sid, sd.uid, sd.state, SUCCESS, cd)
    const from = g.node
    const online = sd.state === 'migrate' && g.type === 'qemu'
    const steps: (() => string)[] = []
    if (!online && g.status === 'running') steps.push(() => this.shutdown(g, 60))
    steps.push(() =>
      g.type === 'qemu'
        ? migrateQemu(
            this.c,
            from,
            g.vmid,
            { target, online: online ? 1 : 0, force: 1, 'with-local-disks': 1 },
            LRM,
            true,
          )
        : migrateLxc(this.c, from, g.vmid, { target, online: 0 }, LRM, true),
    )
    this.agent(sid, sd, steps, () => {
      if (g.node !== from) return SUCCESS
      this.say('err', `service ${sid} not moved (migration error)`)
      return ERROR
    })
  }

  /**
   * a resource agent run as an LRM worker: its API calls one after the other (upid_wait on each task), then the
   * judgement of the outcome; a call that dies before its task ends the worker with exit code -1
   */
  private agent(sid: string, sd: ServiceStatus, steps: (() => string)[], judge: () => number): void {
    const worker = { uid: sd.uid, state: sd.state }
    this.workers.set(sid, worker)
    const done = (exit: number) => {
      if (this.workers.get(sid) !== worker) return
      this.workers.delete(sid)
      const now = this.hooks.config(sid)
      if (!now || !this.ss.has(sid)) return
      this.record(sid, worker.uid, worker.state, exit, now)
      this.wake(sid)
    }
    const step = (i: number): void => {
      let upid: string
      try {
        upid = (steps[i] as () => string)()
      } catch (e) {
        this.say('err', e instanceof Error ? e.message : String(e))
        return done(AGENT_DIED)
      }
      const t = this.c.tasks.peek(upid)
      const then = () => (i + 1 < steps.length ? step(i + 1) : done(judge()))
      if (t) this.after(t, then)
      else then()
    }
    step(0)
  }

  /**
   * run `then` once the task has ended, whether it succeeded or failed: at the next settle, when the task is stopped
   * and no longer holds its locks
   */
  private after(t: Task, then: () => void): void {
    const { run, onError } = t.work
    let called = false
    const once = () => {
      if (called) return
      called = true
      this.continuations.push(then)
    }
    t.work = {
      ...t.work,
      run: (ctx) => {
        run(ctx)
        once()
      },
      onError: (message) => {
        onError?.(message)
        once()
      },
    }
  }

  /**
   * resource_command_finished with handle_service_exitcode: a failed start is retried on the node (ETRY_AGAIN, no
   * result) until max_restart retries were made, then reported as ERROR and the count starts again
   */
  private record(sid: string, uid: number, state: ServiceState, exit: number, cd: ServiceConfig): void {
    if (state === 'started' && exit === SUCCESS) this.tries.set(sid, 0)
    if (state === 'started' && exit === ERROR) {
      const tries = this.tries.get(sid) ?? 0
      if (tries < cd.maxRestart) {
        this.tries.set(sid, tries + 1)
        this.say('warning', `restart policy: retry number ${tries + 1} for service '${sid}'`)
        return
      }
      this.say('err', `unable to start service ${sid} on local node after ${tries} retries`)
      this.tries.set(sid, 0)
    }
    this.results.set(sid, { uid, exit })
  }

  /**
   * when the service needs its next round: a cycle from now when another round would change anything, the moment
   * its failed node's fence delay or agent lock expires, or never (a round that would only confirm the state)
   */
  private nextRound(sid: string, cd: ServiceConfig, g: Guest): number | undefined {
    const cycle = this.c.now() + this.lag
    if (this.commands.has(sid)) return cycle
    const sd = this.ss.get(sid)
    if (!sd) return undefined
    const failed = this.c.nodes.get(sd.node)?.failed
    if (failed && !this.workers.has(sid)) {
      if (sd.state === 'fence') return Math.max(cycle, failed.atMs + failed.agentLockMs)
      if (sd.state === 'recovery') return cycle
      if (!(sd.state === 'stopped' && cd.state === 'disabled') && sd.state !== 'error')
        return Math.max(cycle, failed.atMs + failed.fenceDelayMs)
    }
    if (this.workers.has(sid)) return undefined
    // an offline node's LRM does nothing until the node is back (wakeNode)
    if (!this.lrmUp(g) && sd.state !== 'request_start' && sd.state !== 'recovery') return undefined
    const running = g.status === 'running'
    switch (sd.state) {
      case 'request_start':
      case 'request_stop':
      case 'migrate':
      case 'relocate':
      case 'fence':
      case 'recovery':
        return cycle
      case 'started':
        return cd.state !== 'started' ||
          this.result(sid) !== undefined ||
          !running ||
          !sd.running ||
          sd.failedNodes !== undefined ||
          sd.cmd !== undefined ||
          this.select(sid, sd, cd, 'none') !== sd.node
          ? cycle
          : undefined
      case 'stopped':
        return cd.state === 'started' || running || sd.cmd !== undefined ? cycle : undefined
      case 'error':
        return cd.state === 'disabled' ? cycle : undefined
    }
  }
}
