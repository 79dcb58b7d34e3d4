import { afterEach, describe, expect, it } from 'vitest'
import { Redactor } from '../redact.js'
import type { ClusterCycle } from '../status-model.js'
import type { HttpAuth } from './auth.js'
import { readiness, startHttp, type DaemonView } from './http.js'
import { Metrics } from './metrics.js'

const cycle = (cluster: string, result: ClusterCycle['result'], abortReason?: string): ClusterCycle => ({
  cluster,
  startedAt: '2026-01-01T00:00:00.000Z',
  finishedAt: '2026-01-01T00:00:01.000Z',
  mode: 'apply',
  result,
  ...(abortReason ? { abortReason } : {}),
  actions: { planned: 2, ok: 1, failed: 1, skipped: 0 },
  pruned: 0,
  pruneDeferred: 2,
  anomalies: 1,
  skips: 0,
  unmanaged: 0,
  blocked: result === 'blocked' ? 1 : 0,
  blockedByReason: result === 'blocked' ? { 'node-offline': 1 } : {},
  desiredStale: false,
  objects: [],
  plannedActions: [],
  findings: [],
})

function view(over: Partial<DaemonView> = {}): DaemonView {
  return {
    clusters: ['edge', 'homelab'],
    pollIntervalMs: 1000,
    startedAt: 0,
    desiredStale: false,
    cycles: new Map(),
    lastSuccess: new Map(),
    stopping: false,
    ...over,
  }
}

describe('readiness', () => {
  it('is not ready before every cluster completed, ready within 3 intervals, stale after', () => {
    expect(readiness(view(), 10).ready).toBe(false)
    const half = view({
      lastSuccess: new Map([['edge', 0]]),
      cycles: new Map([['homelab', cycle('homelab', 'aborted', 'pve unreachable')]]),
    })
    expect(readiness(half, 10)).toEqual({
      ready: false,
      role: 'leader',
      clusters: {
        edge: { ready: true, lastSuccessAgeSeconds: 0 },
        homelab: { ready: false, reason: 'last cycle aborted: pve unreachable' },
      },
    })
    const both = view({
      lastSuccess: new Map([
        ['edge', 0],
        ['homelab', 500],
      ]),
    })
    expect(readiness(both, 2_999).ready).toBe(true)
    expect(readiness(both, 3_000).ready).toBe(false)
    expect(readiness({ ...both, stopping: true }, 10).ready).toBe(false)
    // a standby is never ready, whatever it remembers: it writes nothing while another daemon leads
    expect(readiness({ ...both, standbyFor: 4242 }, 10)).toEqual({
      ready: false,
      role: 'standby',
      leader: 4242,
      clusters: {
        edge: { ready: false, reason: 'standby: the proxops daemon with pid 4242 leads on this data dir' },
        homelab: { ready: false, reason: 'standby: the proxops daemon with pid 4242 leads on this data dir' },
      },
    })
  })
})

describe('HTTP endpoints', () => {
  let close: (() => Promise<void>) | undefined
  afterEach(async () => close?.())

  it('serves healthz, readyz, metrics with cluster labels and redacted status', async () => {
    const metrics = new Metrics({ defaultMetrics: false })
    metrics.registerCluster('edge')
    metrics.recordCycle(
      cycle('homelab', 'incomplete'),
      5_000,
      [{ kind: 'VM', type: 'create', status: 'failed' }],
      ['live-only-slot'],
    )
    metrics.recordRequest({ cluster: 'homelab', method: 'get', status: 200, durationMs: 12 })
    const redactor = new Redactor().add('CANARY-http-1')
    const failing = {
      ...cycle('homelab', 'incomplete'),
      objects: [
        { cluster: 'homelab', kind: 'VM', name: 'a', node: 'pve1', state: 'failed' as const, error: 'x CANARY-http-1' },
      ],
    }
    const v = view({
      cycles: new Map([['homelab', failing]]),
      lastSuccess: new Map([
        ['edge', 0],
        ['homelab', 0],
      ]),
    })
    const http = await startHttp({ host: '127.0.0.1', port: 0, view: () => v, metrics, redactor, now: () => 100 })
    close = http.close
    const get = async (p: string) => {
      const res = await fetch(`http://127.0.0.1:${http.port}${p}`)
      return { status: res.status, body: await res.text() }
    }
    expect((await get('/healthz')).status).toBe(200)
    expect((await get('/readyz')).status).toBe(200)
    const m = await get('/metrics')
    expect(m.body).toContain('proxops_cycles_total{cluster="homelab",result="incomplete"} 1')
    expect(m.body).toContain('proxops_actions_total{cluster="homelab",kind="VM",action="create",result="failed"} 1')
    expect(m.body).toContain('proxops_prune_deferred_total{cluster="homelab"} 2')
    expect(m.body).toContain('proxops_anomalies_total{cluster="homelab",code="live-only-slot"} 1')
    expect(m.body).toContain('proxops_last_success_timestamp_seconds{cluster="homelab"} 5')
    expect(m.body).toMatch(
      /proxops_pve_request_duration_seconds_count\{cluster="homelab",method="GET",status="200"\} 1/,
    )
    const s = await get('/status')
    expect(s.body).not.toContain('CANARY')
    expect(JSON.parse(s.body)).toMatchObject({
      desired_stale: false,
      clusters: [
        { cluster: 'edge', result: null },
        { cluster: 'homelab', result: 'incomplete' },
      ],
    })
    expect((await get('/nope')).status).toBe(404)
  })

  it('serves the status page at /: HTML of the same document, masked, with no script allowed', async () => {
    const redactor = new Redactor().add('CANARY&"http-2')
    const failing = {
      ...cycle('homelab', 'incomplete'),
      objects: [
        {
          cluster: 'homelab',
          kind: 'VM',
          name: 'a',
          node: 'pve1',
          state: 'failed' as const,
          action: 'create',
          error: 'x CANARY&"http-2',
        },
      ],
    }
    const v = view({ cycles: new Map([['homelab', failing]]) })
    const http = await startHttp({
      host: '127.0.0.1',
      port: 0,
      view: () => v,
      metrics: new Metrics({ defaultMetrics: false }),
      redactor,
      now: () => 100,
    })
    close = http.close
    const res = await fetch(`http://127.0.0.1:${http.port}/`)
    const html = await res.text()
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'/)
    expect(html).toMatch(/<title>incomplete · edge: no cycle yet, homelab: incomplete · ProxOps<\/title>/)
    expect(html).toContain('<td class="detail">x (sensitive)</td>')
    expect(html).not.toContain('CANARY')
  })

  describe('opt-in auth', () => {
    const start = async (auth: HttpAuth) => {
      const http = await startHttp({
        host: '127.0.0.1',
        port: 0,
        view: () => view(),
        metrics: new Metrics({ defaultMetrics: false }),
        redactor: new Redactor(),
        auth,
        now: () => 100,
      })
      close = http.close
      return (p: string, authorization?: string) =>
        fetch(`http://127.0.0.1:${http.port}${p}`, authorization ? { headers: { authorization } } : {})
    }
    const basic = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`

    it('a bearer token: every endpoint answers 401 without it, with a wrong one, or with another scheme', async () => {
      const get = await start({ bearer: 'tok-1' })
      for (const p of ['/', '/status', '/metrics', '/healthz', '/readyz', '/convergedz']) {
        const denied = await get(p)
        expect(denied.status, p).toBe(401)
        expect(denied.headers.get('www-authenticate')).toBe('Bearer realm="proxops"')
        expect(await denied.text()).toBe('authentication required\n')
      }
      expect((await get('/status', 'Bearer tok-2')).status).toBe(401)
      expect((await get('/status', basic('x:tok-1'))).status).toBe(401)
      expect((await get('/status', 'Bearer tok-1')).status).toBe(200)
      expect((await get('/', 'bearer tok-1')).status).toBe(200)
    })

    it('basic auth: the browser is asked for a user and a password', async () => {
      const get = await start({ basic: { user: 'ops', password: 'p:w' } })
      const denied = await get('/')
      expect(denied.status).toBe(401)
      expect(denied.headers.get('www-authenticate')).toBe('Basic realm="proxops", charset="UTF-8"')
      expect((await get('/', basic('ops:p:w'))).status).toBe(200)
      expect((await get('/', basic('ops:p:x'))).status).toBe(401)
      expect((await get('/', basic('other:p:w'))).status).toBe(401)
      expect((await get('/', 'Bearer p:w')).status).toBe(401)
    })
  })
})

describe('cycle metrics', () => {
  it('a cycle duration histogram and the cycles in a row that did not converge', async () => {
    const metrics = new Metrics({ defaultMetrics: false })
    metrics.registerCluster('lab')
    const at = (result: ClusterCycle['result']) => ({ ...cycle('lab', result), finishedAt: '2026-01-01T00:00:03.000Z' })
    metrics.recordCycle(at('blocked'), 1, [], [])
    metrics.recordCycle(at('aborted'), 2, [], [])
    let text = await metrics.text()
    expect(text).toContain('proxops_consecutive_unconverged_cycles{cluster="lab"} 2')
    expect(text).toContain('proxops_cycle_duration_seconds_bucket{le="2.5",cluster="lab"} 0')
    expect(text).toContain('proxops_cycle_duration_seconds_bucket{le="5",cluster="lab"} 2')
    expect(text).toContain('proxops_cycle_duration_seconds_sum{cluster="lab"} 6')
    metrics.recordCycle(at('converged'), 3, [], [])
    text = await metrics.text()
    expect(text).toContain('proxops_consecutive_unconverged_cycles{cluster="lab"} 0')
    expect(text).toContain('proxops_cycle_duration_seconds_count{cluster="lab"} 3')
  })
})
