import type { Cluster, Guest } from './cluster.js'
import { powerLxc } from './lxc.js'
import { shutdownQemu, startQemu, stopQemu } from './qemu.js'

/**
 * The HA manager's service state machine (pve-ha-manager PVE::HA::Manager, the CRM) and the node's resource agent
 * runs (PVE::HA::LRM), for one service at a time. A round of a service is what a CRM round and the LRM round after
 * it do to it: the CRM adds the service, reads its queued `stop` command, moves it through next_state_* (using the
 * LRM's result for the service's current uid), and the LRM then runs exec_resource_agent for the state, as the real
 * `qmstart` / `qmshutdown` / `qmstop` / `vzstart` / ... task (root@pam). Rounds run one `lagMs` after whatever
 * needs one (a request, an LRM task that ended, a guest that changed state out of band); a service with nothing to
 * do gets no round, so the model is deterministic on the simulator's clock and costs nothing when idle.
 *
 * Not modelled (docs/gaps/simulator-model.md): node failures (fence, recovery, freeze), migration and relocation
 * (a guest never changes node: a relocation try after a failed start is a retry on the same node), the
 * scheduler's node choice (failback, node affinity), maintenance and disarm.
 */

export type ServiceState = 'request_start' | 'started' | 'request_stop' | 'stopped' | 'error'

/** one entry of the manager status' service_status */
export interface ServiceStatus {
  state: ServiceState
  node: string
  /** the uid the LRM result must carry to count (compute_new_uuid) */
  uid: number
  /** a queued `stop <sid> <timeout>` crm command the state machine has not handled yet */
  cmd?: { timeout: number }
  /** request_stop's timeout (from a stop command) */
  timeout?: number
  failedNodes?: string[]
  /** set once a start succeeded, while the service stays `started` */
  running?: boolean
}

/** the resource as the CRM reads it (read_and_check_resources_config: defaults filled in) */
export interface ServiceConfig {
  state: 'started' | 'stopped' | 'disabled' | 'ignored'
  maxRestart: number
  maxRelocate: number
}

export interface ManagerHooks {
  config(sid: string): ServiceConfig | undefined
  /** update_service_config($sid, { state => 'stopped' }): the CRM's write into resources.cfg */
  writeStopped(sid: string): void
}

/** PVE::HA::Tools exit codes, and what an LRM worker whose agent died exits with (POSIX::_exit(-1)) */
const SUCCESS = 0
const ERROR = 1
const AGENT_DIED = 255

/** the LRM's API calls run as root@pam with rpcenv type `ha` (byHa), so they are not turned into HA requests */
const LRM: Parameters<typeof startQemu>[4] = { userid: 'root@pam', actor: 'root@pam' }
const LOG_LINES = 1000

export class HaManager {
  /** the manager status' service_status */
  readonly ss = new Map<string, ServiceStatus>()
  /** the CRM and LRM log lines (syslog on PVE; not served by the API), newest last */
  readonly log: string[] = []
  /** queued crm commands per service (ha/crm_commands) */
  private readonly commands = new Map<string, { timeout: number }[]>()
  /** the LRM's last result per service: valid only while its uid is the service's */
  private readonly results = new Map<string, { uid: number; exit: number }>()
  /** the LRM worker running a resource agent for a service */
  private readonly workers = new Map<string, { uid: number; state: ServiceState; upid: string }>()
  /** the LRM's restart_tries */
  private readonly tries = new Map<string, number>()
  /** when each service's next round is due */
  private readonly rounds = new Map<string, number>()
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
    if (!this.rounds.has(sid)) this.rounds.set(sid, this.c.now() + this.lag)
  }

  /** queue_crm_commands("stop $sid $timeout") */
  queueStop(sid: string, timeout: number): void {
    this.commands.set(sid, [...(this.commands.get(sid) ?? []), { timeout }])
    this.wake(sid)
  }

  /** a node came back online: its LRM picks up its services again */
  wakeNode(node: string): void {
    for (const sid of [...this.ss.keys()].sort()) if (this.guest(sid)?.node === node) this.wake(sid)
  }

  /** the resource left the config (delete_service_from_config): the manager and the LRM forget it */
  forget(sid: string): void {
    for (const m of [this.ss, this.commands, this.results, this.workers, this.tries, this.rounds]) m.delete(sid)
  }

  /** run the rounds that are due, earliest first */
  settle(): void {
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

  /** the LRM of the guest's node runs (an offline node's does not; fencing is not modelled) */
  private lrmUp(g: Guest): boolean {
    return this.c.nodes.get(g.node)?.online === true
  }

  private guest(sid: string): Guest | undefined {
    return this.c.guests.get(Number(sid.slice(sid.indexOf(':') + 1)))
  }

  private round(sid: string): void {
    const cd = this.hooks.config(sid)
    const g = this.guest(sid)
    if (!cd || !g) return
    // manage(): add new services, remove ignored ones, then read the crm commands
    if (cd.state === 'ignored') {
      if (this.ss.has(sid)) this.say('info', `removing stale service '${sid}' (ignored state requested)`)
      for (const cmd of this.commands.get(sid) ?? [])
        this.say('err', `crm command error - no such service: stop ${sid} ${cmd.timeout}`)
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
    for (const cmd of this.commands.get(sid) ?? []) {
      this.say('info', `got crm command: stop ${sid} ${cmd.timeout}`)
      this.status(sid).cmd = cmd
    }
    this.commands.delete(sid)
    // the state machine runs again while the state changes (manage's `repeat`)
    for (;;) {
      const last = this.status(sid).state
      this.next(sid, cd)
      if (this.status(sid).state === last) break
    }
    this.lrm(sid, cd, g)
    if (this.needsRound(sid, cd, g)) this.wake(sid)
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

  /** change_service_state: a new uid; of the old entry only node and failed_nodes stay */
  private change(sid: string, state: ServiceState, timeout?: number): void {
    const old = this.status(sid)
    const sd: ServiceStatus = { state, node: old.node, uid: this.uid() }
    if (old.failedNodes) sd.failedNodes = old.failedNodes
    if (timeout !== undefined) sd.timeout = timeout
    this.ss.set(sid, sd)
    // the parameters change_service_state is given, as it logs them
    const params =
      timeout !== undefined
        ? `  (timeout = ${timeout})`
        : state === 'started' || state === 'request_start'
          ? `  (node = ${sd.node})`
          : ''
    this.say('info', `service '${sid}': state changed from '${old.state}' to '${state}'${params}`)
  }

  private next(sid: string, cd: ServiceConfig): void {
    const sd = this.status(sid)
    if (sd.state === 'stopped') this.nextStopped(sid, sd, cd)
    else if (sd.state === 'request_start') this.change(sid, 'started')
    else if (sd.state === 'started') this.nextStarted(sid, sd, cd)
    else if (sd.state === 'request_stop') this.nextRequestStop(sid)
    else this.nextError(sid, sd, cd)
  }

  /** next_state_stopped: a stop command is ignored (`service already stopped`); a started config starts it */
  private nextStopped(sid: string, sd: ServiceStatus, cd: ServiceConfig): void {
    if (sd.cmd) {
      this.say('info', `ignore service '${sid}' stop request - service already stopped`)
      delete sd.cmd
    }
    if (cd.state === 'started') this.change(sid, 'request_start')
  }

  /**
   * next_state_started: a stopped or disabled config asks for a stop; a stop command asks for one with its
   * timeout and writes `state stopped` into the config; else the LRM's result is judged: a failed start is
   * recorded on the node and relocated while the failed nodes are at most max_relocate, else `error`
   */
  private nextStarted(sid: string, sd: ServiceStatus, cd: ServiceConfig): void {
    if (cd.state === 'disabled' || cd.state === 'stopped') return this.change(sid, 'request_stop')
    if (sd.cmd) {
      const { timeout } = sd.cmd
      this.say(
        'info',
        timeout === 0
          ? `request immediate service hard-stop for service '${sid}'`
          : `request graceful stop with timeout '${timeout}' for service '${sid}'`,
      )
      this.change(sid, 'request_stop', timeout)
      this.hooks.writeStopped(sid)
      return
    }
    const exit = this.result(sid)
    if (exit === undefined) return
    let relocate = false
    if (exit === SUCCESS) {
      if (sd.failedNodes)
        this.say(
          'info',
          `relocation policy successful for '${sid}' on node '${sd.node}', failed nodes: ${sd.failedNodes.join(', ')}`,
        )
      delete sd.failedNodes
      sd.running = true
    } else {
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
      relocate = true
    }
    // select_service_node: the simulator moves no guest, so a relocation retries on the current node
    if (relocate)
      this.say(
        'warning',
        `Start Error Recovery: Tried all available nodes for service '${sid}', retry start on current node. Tried nodes: ${(sd.failedNodes ?? []).join(', ')}`,
      )
    // a new uid: the LRM runs `started` again (and so restarts a guest that went down)
    sd.uid = this.uid()
  }

  /** next_state_request_stop: the LRM's result decides: stopped, or error */
  private nextRequestStop(sid: string): void {
    const exit = this.result(sid)
    if (exit === undefined) return
    if (exit === SUCCESS) return this.change(sid, 'stopped')
    this.say('err', `service '${sid}' stop failed (exit code ${exit})`)
    this.change(sid, 'error')
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
    if (sd.state === 'request_start' || this.workers.has(sid) || !this.lrmUp(g)) return
    if (sd.state !== 'stopped' && this.result(sid) !== undefined) return
    const running = g.status === 'running'
    if (sd.state === 'error') {
      this.say(
        'err',
        `service ${sid} is in an error state and needs manual intervention. Look up 'ERROR RECOVERY' in the documentation.`,
      )
      return this.record(sid, sd.uid, sd.state, SUCCESS, cd)
    }
    if (sd.state === 'started') {
      // a service known to run that still runs: the CRM would only hand out a new uid
      if (running && sd.running && !sd.failedNodes) return
      if (running) return this.record(sid, sd.uid, sd.state, SUCCESS, cd)
      this.say('info', `starting service ${sid}`)
      return this.agent(sid, sd, g, cd, () =>
        g.type === 'qemu'
          ? startQemu(this.c, g.node, g.vmid, {}, LRM, true)
          : powerLxc(this.c, g.node, g.vmid, 'start', {}, LRM, true),
      )
    }
    // request_stop and stopped: PVEVM/PVECT shutdown, a hard stop for timeout 0 (a VM's shutdown forces the stop)
    if (!running) return this.record(sid, sd.uid, sd.state, SUCCESS, cd)
    const timeout = sd.timeout ?? 60
    this.say(
      'info',
      sd.timeout !== undefined ? `stopping service ${sid} (timeout=${timeout})` : `stopping service ${sid}`,
    )
    this.agent(sid, sd, g, cd, () => {
      if (g.type === 'qemu')
        return timeout === 0
          ? stopQemu(this.c, g.node, g.vmid, {}, LRM, true)
          : shutdownQemu(this.c, g.node, g.vmid, { timeout, forceStop: true }, LRM, true)
      return powerLxc(this.c, g.node, g.vmid, timeout === 0 ? 'stop' : 'shutdown', { timeout }, LRM, true)
    })
  }

  /** a resource agent run as an LRM worker: the API call, then (upid_wait) check_running when its task ends */
  private agent(sid: string, sd: ServiceStatus, g: Guest, cd: ServiceConfig, call: () => string): void {
    let upid: string
    try {
      upid = call()
    } catch (e) {
      // the call died before forking: the worker exits -1
      this.say('err', e instanceof Error ? e.message : String(e))
      return this.record(sid, sd.uid, sd.state, AGENT_DIED, cd)
    }
    const worker = { uid: sd.uid, state: sd.state, upid }
    this.workers.set(sid, worker)
    const t = this.c.tasks.peek(upid)
    if (!t) return
    const { run, onError } = t.work
    const done = () => {
      if (this.workers.get(sid) !== worker) return
      this.workers.delete(sid)
      const running = g.status === 'running'
      const ok = worker.state === 'started' ? running : !running
      this.say(
        ok ? 'info' : 'warning',
        worker.state === 'started'
          ? ok
            ? `service status ${sid} started`
            : `unable to start service ${sid}`
          : ok
            ? `service status ${sid} stopped`
            : `unable to stop service ${sid} (still running)`,
      )
      const now = this.hooks.config(sid)
      if (!now || !this.ss.has(sid)) return
      this.record(sid, worker.uid, worker.state, ok ? SUCCESS : ERROR, now)
      this.wake(sid)
    }
    t.work = {
      ...t.work,
      run: (ctx) => {
        run(ctx)
        done()
      },
      onError: (message) => {
        onError?.(message)
        done()
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

  /** whether another round would change anything (a round that would only confirm the state is skipped) */
  private needsRound(sid: string, cd: ServiceConfig, g: Guest): boolean {
    if (this.commands.has(sid)) return true
    const sd = this.ss.get(sid)
    if (!sd || this.workers.has(sid)) return false
    // an offline node's LRM does nothing until the node is back (wakeNode)
    if (!this.lrmUp(g) && sd.state !== 'request_start') return false
    const running = g.status === 'running'
    switch (sd.state) {
      case 'request_start':
      case 'request_stop':
        return true
      case 'started':
        return (
          cd.state !== 'started' ||
          this.result(sid) !== undefined ||
          !running ||
          !sd.running ||
          sd.failedNodes !== undefined
        )
      case 'stopped':
        return cd.state === 'started' || running
      case 'error':
        return cd.state === 'disabled'
    }
  }
}
