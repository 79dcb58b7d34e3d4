/**
 * The HTTP layer never breaks on odd input: any method, path, headers and body get a well-formed PVE-style
 * answer (no internal errors, no exceptions), and authentication is always checked before the model runs.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { loadApidoc } from '../apidoc/load.js'
import { FaultState } from '../control/faults.js'
import { StatsLog } from '../control/stats.js'
import { createCluster } from '../sim-cluster.js'
import { ApiHandler } from './api.js'
import { AuthState } from './auth.js'
import { AccessState } from '../access/state.js'

const apidoc = loadApidoc('9.1')
const cluster = createCluster({ nodes: ['pve1', 'pve2'], pveVersion: '9.1', seed: 3, taskDurationMs: 5 })
const logs: string[] = []
const stats = new StatsLog()
const handled = stats.requests
const access = new AccessState('9.1')
access.addConfiguredToken('root@pam!tk')
const api = new ApiHandler({
  routes: cluster.routes,
  access,
  apidoc: apidoc.ok ? apidoc.tree : undefined,
  auth: new AuthState('pw', [{ id: 'root@pam!tk', secret: 's' }]),
  faults: new FaultState(),
  stats,
  authFailureDelayMs: 0,
  messageInBody: true,
  nodes: () => ['pve1', 'pve2'],
  localNode: 'pve1',
  proxyTimeoutMs: 30_000,
  log: (l) => logs.push(l),
})

const segment = fc.oneof(
  fc.constantFrom(
    'nodes',
    'pve1',
    'pve2',
    'pve9',
    'qemu',
    'lxc',
    '100',
    '999',
    'config',
    'status',
    'current',
    'start',
    'storage',
    'local',
    'content',
    'tasks',
    'cluster',
    'resources',
    'nextid',
    'version',
    'access',
    'ticket',
    '%2F',
    '%zz',
    '',
  ),
  fc.string({ maxLength: 6 }).map(encodeURIComponent),
)
const path = fc.oneof(
  fc.array(segment, { maxLength: 6 }).map((s) => `/api2/json/${s.join('/')}`),
  fc.constantFrom(
    '/api2/json/nodes/pve1/qemu',
    '/api2/json/nodes/pve1/qemu/100/config',
    '/api2/json/nodes/pve1/qemu/100/status/start',
    '/api2/json/nodes/pve1/lxc',
    '/api2/json/nodes/pve1/storage/local/content',
    '/api2/json/cluster/resources',
    '/api2/json/cluster/nextid',
    '/api2/json/nodes/pve1/qemu/100/resize',
    '/api2/json/nodes/pve2/lxc/101/config',
  ),
)
const body = fc.oneof(
  { arbitrary: fc.constant(''), weight: 4 },
  fc
    .dictionary(
      fc.constantFrom('vmid', 'name', 'onboot', 'tags', 'delete', 'node', 'memory', 'scsi0', 'net0', 'x'),
      fc.string({ maxLength: 12 }),
    )
    .map((d) => new URLSearchParams(d).toString()),
  fc.string({ maxLength: 40 }),
  fc.json({ maxDepth: 2 }),
)

describe('robustness of the HTTP layer', () => {
  it('answers every request with a known status and a well-formed body (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('GET', 'GET', 'GET', 'POST', 'PUT', 'DELETE', 'HEAD', 'PATCH'),
        path,
        body,
        fc.constantFrom(undefined, 'application/x-www-form-urlencoded', 'application/json', 'text/plain'),
        fc.constantFrom(
          'PVEAPIToken=root@pam!tk=s',
          'PVEAPIToken=root@pam!tk=s',
          'PVEAPIToken=root@pam!tk=s',
          'PVEAPIToken=root@pam!tk=x',
          undefined,
        ),
        async (method, p, b, ct, authz) => {
          const headers: Record<string, string | undefined> = {
            'content-type': ct,
            authorization: authz,
            'content-length': String(Buffer.byteLength(b)),
          }
          const r = await api.handle({ method, url: p, headers, body: Buffer.from(b) })
          expect([200, 400, 401, 403, 500, 501, 506, 595]).toContain(r.status)
          expect(r.reason).not.toMatch(/[\r\n]/)
          if (r.body.length > 0) expect(() => JSON.parse(r.body.toString('utf8'))).not.toThrow()
          if (r.status === 401) expect(r.body.length).toBe(0)
          if (authz !== 'PVEAPIToken=root@pam!tk=s' && r.status === 200)
            expect(p).toMatch(/^\/api2\/json\/access\/(ticket|domains)\/?$/)
        },
      ),
      { numRuns: 300 },
    )
    expect(logs.filter((l) => l.includes('threw'))).toEqual([])
    // the property reached the model, not only the error paths
    expect(handled.filter((r) => r.handled).length).toBeGreaterThan(5)
  })
})
