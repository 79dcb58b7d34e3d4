/**
 * run: the daemon. One tick at once, then one every poll interval (measured from the end of a tick, so
 * ticks never overlap). Each tick: one git sync (one fetch in URL mode, one commit for all clusters), then
 * an apply cycle per cluster in name order with the per-cycle prune budget capped by the sliding window.
 * HTTP / (the status page) /healthz /readyz /convergedz /metrics /status, with opt-in auth; a single-instance
 * lock in the data dir (a second daemon waits as a standby and takes over when the leader stops or dies), a write
 * lock per tick that a manual `apply` shares; SIGINT/SIGTERM stop gracefully.
 */
import type { PveClient } from '@proxops/pve-client'
import { PruneWindowBudget } from '@proxops/planner'
import { HTTP_BASIC_ENV, HTTP_TOKEN_ENV, httpAuthFromEnv, isLoopback } from '../daemon/auth.js'
import { CycleHistory } from '../daemon/history.js'
import { CYCLE_LOCK, LEADER_LOCK, acquireLock, isHeld, tryLock, type Lock } from '../daemon/lock.js'
import { startHttp, type DaemonView } from '../daemon/http.js'
import { Metrics } from '../daemon/metrics.js'
import { Wakeup } from '../daemon/wakeup.js'
import { readMemory, writeMemory } from '../daemon/memory.js'
import { Notifier, type NotifyTarget } from '../daemon/notify.js'
import { stateChanges } from '../daemon/notify-events.js'
import { PROVIDERS, hookPath, webhookRoutes, type Receiver } from '../daemon/webhooks.js'
import { RECONCILE_TOKEN_FILE } from '../daemon/reconcile-token.js'
import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { CliError, oneLine } from '../errors.js'
import { clientHooks, fullClient } from '../runtime/clients.js'
import type { CliContext } from '../runtime/context.js'
import { runCycle, twinGuard } from '../runtime/cycle.js'
import type { ClusterCycle } from '../status-model.js'
import { readSuspensions, type Suspension } from '../runtime/suspensions.js'
import { prepare, type GlobalArgs } from './common.js'
import { version } from '../version.js'

export interface RunArgs extends GlobalArgs {
  once?: boolean
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const timer = setTimeout(done, ms)
    function done(): void {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done, { once: true })
  })
}

/** Waits for `work`, at most `ms`; the timer never keeps the process alive after the work is done. */
async function within(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  try {
    await Promise.race([work, new Promise((resolve) => (timer = setTimeout(resolve, ms)))])
  } finally {
    clearTimeout(timer)
  }
}

export async function runHandler(ctx: CliContext, args: RunArgs): Promise<number> {
  // NDJSON for a journal or a pipe, timed human lines on a terminal; --log-format decides when given
  const terminal = Boolean(ctx.io.stderr.isTTY)
  const prepared = await prepare(ctx, args, { logFormat: terminal ? 'text' : 'json', clock: terminal })
  const { config } = prepared
  const auth = httpAuthFromEnv(ctx.env)
  ctx.redactor.add(auth?.bearer, auth?.basic?.password)
  // the leader lock is taken once the endpoints answer, so that a standby shows itself on /readyz
  let lock: Lock | undefined
  let standbyFor: number | undefined
  const metrics = new Metrics()
  const window = new PruneWindowBudget(config.reconcile.pruneWindow)
  const cycles = new Map<string, ClusterCycle>()
  const lastSuccess = new Map<string, number>()
  const lastRead = new Map<string, ClusterCycle>()
  const history = new CycleHistory()
  // recent cycles and deletions outlive a restart (the status page's history, the prune window)
  const memory = readMemory(config.dataDir)
  for (const [cluster, list] of Object.entries(memory.history)) history.restore(cluster, list)
  for (const [cluster, times] of Object.entries(memory.deletions))
    for (const t of [...times].sort((a, b) => a - b)) window.record(cluster, 1, t)
  const startedAt = ctx.now()
  let commit: string | undefined
  let stale = false
  let uncommitted: readonly string[] | undefined
  let suspensions: readonly Suspension[] = []
  let stopping = false
  // SIGTERM or Ctrl-C: /healthz answers 503 from now on, while the running cycle finishes; then the daemon exits
  ctx.announceStop = () => {
    stopping = true
    ctx.log.info('daemon stopping: the running cycle finishes first', { event: 'proxops.daemon.stopping' })
  }
  for (const c of config.clusters) metrics.registerCluster(c.name)
  const view = (): DaemonView => ({
    clusters: config.clusters.map((c) => c.name),
    pollIntervalMs: config.reconcile.pollIntervalMs,
    startedAt,
    ...(commit ? { commit } : {}),
    desiredStale: stale,
    ...(uncommitted ? { uncommitted } : {}),
    suspensions,
    receivers: receivers.map((r) => ({
      path: hookPath(r),
      cluster: r.cluster,
      provider: r.provider,
      deliveries: hooks.deliveries(hookPath(r)),
    })),
    cycles,
    lastSuccess,
    lastRead,
    history: (cluster) => history.of(cluster),
    stopping,
    ...(standbyFor !== undefined ? { standbyFor } : {}),
  })
  const clients = new Map<string, PveClient>()
  for (const cluster of config.clusters) {
    clients.set(
      cluster.name,
      fullClient(
        cluster,
        config,
        clientHooks(ctx, {
          onRequest: (name, event) =>
            metrics.recordRequest({
              cluster: name,
              method: event.method,
              status: event.status ?? 0,
              durationMs: event.latencyMs,
            }),
        }),
      ),
    )
  }
  // `POST /reconcile` and push webhooks end the wait between ticks
  const wakeup = new Wakeup()
  const reconcileToken = randomBytes(32).toString('hex')
  ctx.redactor.add(reconcileToken)
  const names = new Set(config.clusters.map((c) => c.name))
  const askReconcile = (clusters: readonly string[] | undefined, by: string): { status: number; body: unknown } => {
    if (standbyFor !== undefined)
      return { status: 503, body: { error: `standby: the proxops daemon with pid ${standbyFor} leads; ask it` } }
    const unknown = (clusters ?? []).filter((c) => !names.has(c))
    if (unknown.length > 0)
      return { status: 404, body: { error: `not configured: ${unknown.join(', ')}`, clusters: [...names] } }
    wakeup.request(clusters)
    ctx.log.info('reconcile asked: a tick starts now', {
      event: 'proxops.daemon.reconcile',
      by,
      clusters: clusters ?? [...names],
    })
    return { status: 202, body: { accepted: true, clusters: clusters ?? [...names] } }
  }
  // push webhooks: each receiver's secret from its cluster's SOPS file, masked everywhere
  const receivers: Receiver[] = []
  for (const cluster of config.clusters)
    for (const provider of PROVIDERS) {
      const key = cluster.webhooks?.[provider]
      if (key === undefined) continue
      const secret = prepared.sops.get(cluster.name)?.secret(key)?.reveal()
      if (secret === undefined || secret === '')
        throw new CliError(
          'SECRETS',
          `pve.clusters.${cluster.name}.webhooks.${provider}: no secret "${key}" in the cluster's SOPS secrets (add it with proxops-sops set)`,
        )
      ctx.redactor.add(secret)
      receivers.push({ cluster: cluster.name, provider, secret })
    }
  // notifications: one notifier per cluster, its targets' secrets from its SOPS file
  const notifiers = new Map<string, Notifier>()
  for (const cluster of config.clusters) {
    if (!cluster.notifications) continue
    const secret = (key: string, what: string): string => {
      const value = prepared.sops.get(cluster.name)?.secret(key)?.reveal()
      if (value === undefined || value === '')
        throw new CliError(
          'SECRETS',
          `pve.clusters.${cluster.name}.notifications: no secret "${key}" (${what}) in the cluster's SOPS secrets`,
        )
      ctx.redactor.add(value)
      return value
    }
    const targets: NotifyTarget[] = cluster.notifications.map((n) => ({
      type: n.type,
      url: n.urlSecret !== undefined ? secret(n.urlSecret, 'url-secret') : (n.url as string),
      ...(n.tokenSecret !== undefined ? { token: secret(n.tokenSecret, 'token-secret') } : {}),
      ...(n.room !== undefined ? { room: n.room } : {}),
    }))
    notifiers.set(
      cluster.name,
      new Notifier({
        targets,
        mask: (text) => ctx.redactor.text(text),
        now: ctx.now,
        log: (level, message, fields) => ctx.log.log(level, message, { ...fields, cluster: cluster.name }),
      }),
    )
  }
  const hooks = webhookRoutes({
    receivers,
    branch: config.git.branch,
    now: ctx.now,
    start: (clusters, why) => askReconcile(clusters, why),
    log: (level, message, fields) => ctx.log.log(level, message, fields),
  })
  let http: Awaited<ReturnType<typeof startHttp>> | undefined
  try {
    http = await startHttp({
      host: config.listen.host,
      port: config.listen.port,
      allowedHosts: config.allowedHosts,
      view,
      metrics,
      redactor: ctx.redactor,
      ...(auth ? { auth } : {}),
      now: ctx.now,
      reconcile: { token: reconcileToken, request: (clusters) => askReconcile(clusters, 'POST /reconcile') },
      posts: hooks.routes,
    })
  } catch (error) {
    throw new CliError(
      'USAGE',
      `cannot listen on ${config.listen.host}:${config.listen.port}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}; use --listen`,
    )
  }
  ctx.log.info('daemon started', {
    event: 'proxops.daemon.start',
    version,
    listen: `${config.listen.host}:${http.port}`,
    clusters: config.clusters.map((c) => c.name),
    pollIntervalMs: config.reconcile.pollIntervalMs,
    mode: prepared.source.mode,
    auth: auth ? [...(auth.bearer !== undefined ? ['bearer'] : []), ...(auth.basic ? ['basic'] : [])] : 'none',
  })
  if (!auth && !isLoopback(config.listen.host))
    ctx.log.warn('HTTP endpoints listen beyond this host without authentication', {
      event: 'proxops.daemon.auth',
      listen: `${config.listen.host}:${http.port}`,
      hint: `set ${HTTP_TOKEN_ENV} (bearer) or ${HTTP_BASIC_ENV} (user:password) in the daemon's environment`,
    })
  let failures = 0
  // a leader every check is one file read; a standby notices a dead leader within a second, or one interval
  const step = Math.min(config.reconcile.pollIntervalMs, 1000)
  try {
    const first = tryLock(config.dataDir, LEADER_LOCK)
    if (isHeld(first)) {
      if (args.once) acquireLock(config.dataDir) // throws: a single tick does not wait as a standby
      standbyFor = first.holder
      ctx.log.warn('another proxops daemon leads on this data dir; waiting as a standby', {
        event: 'proxops.daemon.standby',
        leader: first.holder,
        lock: first.file,
      })
      while (!ctx.signal.aborted) {
        await sleep(step, ctx.signal)
        const next = tryLock(config.dataDir, LEADER_LOCK)
        if (!isHeld(next)) {
          lock = next
          break
        }
        standbyFor = next.holder
      }
      if (lock) ctx.log.info('leading: the daemon before stopped', { event: 'proxops.daemon.leader', was: standbyFor })
      standbyFor = undefined
    } else lock = first
    // the leader's token, for `proxops reconcile` on this machine (the file is private to the daemon's user)
    if (lock) writeFileSync(path.join(config.dataDir, RECONCILE_TOKEN_FILE), `${reconcileToken}\n`, { mode: 0o600 })
    while (!ctx.signal.aborted && lock) {
      // a tick asked for some clusters runs those; a timed one every cluster
      const wanted = wakeup.take()
      let tree
      try {
        // commits only: an uncommitted edit in a local checkout is shown, never applied
        tree = await prepared.source.sync({ commitsOnly: true })
        commit = tree.commit
        stale = tree.stale
        if (tree.uncommitted && tree.uncommitted.join('\0') !== uncommitted?.join('\0') && tree.uncommitted.length > 0)
          ctx.log.warn('uncommitted changes in the work tree are not applied; commit them', {
            event: 'proxops.git',
            commit: tree.commit,
            uncommitted: tree.uncommitted.slice(0, 20),
          })
        uncommitted = tree.uncommitted
        metrics.setDesiredStale(stale)
        if (prepared.source.lastFetchAt !== undefined) metrics.recordGitFetch(prepared.source.lastFetchAt)
      } catch (error) {
        failures++
        ctx.log.warn('git not ready; retrying next tick', {
          event: 'proxops.git',
          error: oneLine((error as Error).message),
        })
      }
      // one writer at a time: a manual apply on this data dir holds the write lock until it ends
      const write = tree ? tryLock(config.dataDir, CYCLE_LOCK) : undefined
      if (write && isHeld(write)) {
        ctx.log.info('a manual apply holds the write lock; this tick waits for it', {
          event: 'proxops.daemon.wait',
          holder: write.holder,
          lock: write.file,
        })
        await sleep(step, ctx.signal)
        continue
      }
      try {
        // read every tick: `proxops suspend` takes effect at the next one (a damaged file aborts each cycle, by name)
        try {
          suspensions = readSuspensions(config.dataDir)
        } catch {
          suspensions = []
        }
        // every tick: an endpoint may have started answering for another entry's cluster
        const blocked = tree && !ctx.signal.aborted ? await twinGuard(ctx, config, clients) : new Map<string, string>()
        for (const cluster of config.clusters) {
          if (!tree || ctx.signal.aborted) break
          if (wanted !== undefined && wanted !== 'all' && !wanted.has(cluster.name)) continue
          const twin = blocked.get(cluster.name)
          const client = clients.get(cluster.name) as PveClient
          const now = ctx.now()
          const budget = window.cycleBudget(cluster.name, config.reconcile.pruneBudget, now)
          const sops = prepared.sops.get(cluster.name)
          const outcome = await runCycle(ctx, {
            ...(twin !== undefined ? { blocked: twin } : {}),
            cluster,
            config,
            tree,
            reader: client,
            writer: client,
            ...(sops ? { sops } : {}),
            pruneBudget: budget,
            onProgress: (event) => {
              // a lock retry is logged as it happens (the client's own retries and waits are logged by clients.ts)
              if (event.type === 'retry')
                ctx.log.warn('action retry', {
                  event: 'proxops.action.retry',
                  cluster: cluster.name,
                  address: event.action.address,
                  action: event.action.type,
                  attempt: event.attempt,
                  attempts: event.attempts,
                  delayMs: event.delayMs,
                  reason: event.reason,
                })
              if (event.type === 'action-finished') {
                const r = event.result
                const level = r.status === 'failed' ? 'warn' : 'info'
                ctx.log.log(level, 'action', {
                  event: 'proxops.action',
                  cluster: cluster.name,
                  address: r.address,
                  kind: r.kind,
                  action: r.type,
                  result: r.status,
                  durationMs: r.durationMs,
                  ...(r.error ? { error: r.error } : {}),
                  ...(r.skip ? { reason: r.skip.reason } : {}),
                })
              }
            },
          })
          const finished = ctx.now()
          const pruned = outcome.report?.results.filter((r) => r.type === 'delete' && r.status === 'ok').length ?? 0
          window.record(cluster.name, pruned, finished)
          if (pruned > 0) {
            const since = finished - config.reconcile.pruneWindow.periodMs
            memory.deletions[cluster.name] = [
              ...(memory.deletions[cluster.name] ?? []).filter((t) => t > since),
              ...Array.from({ length: pruned }, () => finished),
            ]
          }
          const cycle = outcome.cycle
          // one message per change of state, not per cycle
          notifiers.get(cluster.name)?.notify(stateChanges(cycles.get(cluster.name), cycle))
          cycles.set(cluster.name, cycle)
          history.record(cycle)
          memory.history[cluster.name] = [...history.of(cluster.name)]
          try {
            writeMemory(config.dataDir, memory)
          } catch (error) {
            ctx.log.warn('cannot write the daemon memory', {
              event: 'proxops.daemon',
              error: oneLine((error as Error).message),
            })
          }
          if (cycle.result !== 'aborted') {
            lastSuccess.set(cluster.name, finished)
            lastRead.set(cluster.name, cycle)
          } else failures++
          metrics.recordCycle(
            cycle,
            finished,
            outcome.report?.results ?? [],
            outcome.plan?.anomalies.map((a) => a.code) ?? [],
          )
          for (const a of outcome.plan?.anomalies ?? [])
            ctx.log.warn('anomaly', {
              event: 'proxops.anomaly',
              cluster: cluster.name,
              code: a.code,
              address: a.address,
              message: a.message,
            })
          // a cycle that did not converge is worth a look: aborted is an error, blocked or incomplete a warning
          const level =
            cycle.result === 'aborted'
              ? 'error'
              : cycle.result === 'converged' || cycle.result === 'drift'
                ? 'info'
                : 'warn'
          ctx.log.log(level, 'cycle finished', {
            event: 'proxops.cycle',
            cluster: cluster.name,
            commit: tree.commit,
            result: cycle.result,
            ...(cycle.abortReason ? { reason: cycle.abortReason } : {}),
            planned: cycle.actions.planned,
            ok: cycle.actions.ok,
            failed: cycle.actions.failed,
            pruned,
            pruneDeferred: cycle.pruneDeferred,
            pruneBudget: budget,
            anomalies: cycle.anomalies,
            blocked: cycle.blocked,
            ...(cycle.blocked > 0 ? { blockedByReason: cycle.blockedByReason } : {}),
            desiredStale: tree.stale,
          })
          if (cycle.result === 'incomplete') failures++
        }
      } finally {
        write?.release()
      }
      if (args.once) break
      await wakeup.wait(config.reconcile.pollIntervalMs, ctx.signal)
    }
  } finally {
    stopping = true
    ctx.log.info('daemon stopped', { event: 'proxops.daemon.stop' })
    // open connections get at most 5 s; the timer is cleared, so an idle daemon exits at once
    hooks.close()
    await within(Promise.all([...notifiers.values()].map((n) => n.drain())), 5000)
    await within(http.close(), 5000)
    await within(Promise.all([...clients.values()].map((c) => c.close().catch(() => undefined))), 5000)
    lock?.release()
  }
  if (args.once) return failures > 0 ? 1 : 0
  return 0
}
