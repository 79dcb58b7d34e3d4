/**
 * Network as code through the CLI against the simulator's pve-network (issue 41): an SDN estate (a zone of each
 * type, the EVPN controller, vnets, a subnet, a guest on a vnet) converges in one `apply` with exactly one
 * `PUT /cluster/sdn` and the next `diff` is empty; an SDN edit someone else left pending blocks `diff` and is
 * never applied (issue 39 item 5's pending-edits case); a random SDN estate converges the same way (property).
 */
import { afterEach, beforeEach, expect, it, vi } from 'vitest'
import { rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fc } from '@fast-check/vitest'
import type { Simulator } from '@proxops/pve-sim'
import type { PveClient } from '@proxops/pve-client'
import { adminClient, baseEnv, makeRepo, proxops, startLab, vmManifest } from './harness.js'

vi.setConfig({ testTimeout: 240_000, hookTimeout: 60_000 })

let sim: Simulator
let root: string
let pve: PveClient
const run = (...args: string[]) => proxops(args, { cwd: root, env: baseEnv(root) })
const doc = (kind: string, name: string, spec: string) =>
  `apiVersion: proxops/v1alpha1\nkind: ${kind}\nmetadata:\n  name: ${name}\nspec:\n${spec}`

const ESTATE: Record<string, string> = {
  'sdncontroller/lab/evpn1.yaml': doc('SdnController', 'evpn1', '  asn: 65000\n  peers: [10.0.0.1, 10.0.0.2]\n'),
  'zone/lab/zones.yaml': [
    doc('Zone', 'simple1', '  type: simple\n  mtu: 1450\n'),
    doc('Zone', 'vlan1', '  type: vlan\n  bridge: vmbr0\n'),
    doc('Zone', 'qinq1', '  type: qinq\n  bridge: vmbr0\n  tag: 20\n'),
    doc('Zone', 'vxlan1', '  type: vxlan\n  peers: [10.0.0.1, 10.0.0.2]\n'),
    doc('Zone', 'evpn1', '  type: evpn\n  controller: evpn1\n  vrf-vxlan: 5000\n'),
  ].join('---\n'),
  'vnet/lab/vnets.yaml': [
    doc('VNet', 'web', '  zone: vlan1\n  tag: 10\n  alias: web tier\n'),
    doc('VNet', 'ov', '  zone: evpn1\n  tag: 100\n'),
  ].join('---\n'),
  'subnet/lab/web.yaml': doc(
    'Subnet',
    'web-v4',
    '  vnet: web\n  cidr: 10.10.0.0/24\n  gateway: 10.10.0.1\n  snat: true\n',
  ),
  'vm/lab/api.yaml': vmManifest('api', 100).replace('bridge: vmbr0', 'bridge: web'),
}

beforeEach(async () => {
  sim = await startLab()
  root = await makeRepo(sim, { manifests: ESTATE })
  pve = adminClient(sim)
})
afterEach(async () => {
  await pve.close()
  await sim.close()
  rmSync(root, { recursive: true, force: true })
})

const applies = () => sim.stats.count('PUT', '/cluster/sdn')

it('a network estate converges in one apply with exactly one PUT /cluster/sdn; the next diff is empty', async () => {
  const a = await run('apply', '--yes')
  expect(a.code, a.stdout + a.stderr).toBe(0)
  expect(applies()).toBe(1)
  expect(a.stdout).toContain('SdnApply/cluster')
  // the guest plugged into the vnet: it was created after the apply and started
  expect(await pve.get('/cluster/sdn/vnets/web', { query: { running: 1 } })).toMatchObject({ tag: 10 })
  const d = await run('diff', '--detailed-exitcode')
  expect(d.code, d.stdout + d.stderr).toBe(0)
  expect(applies()).toBe(1)
})

it("someone else's pending SDN edit blocks diff with its keys named, and apply writes nothing", async () => {
  expect((await run('apply', '--yes')).code).toBe(0)
  await pve.request('PUT', '/cluster/sdn/zones/vlan1', { params: { mtu: 1400 } })
  writeFileSync(
    path.join(root, 'zone/lab/zones.yaml'),
    ESTATE['zone/lab/zones.yaml']!.replace('mtu: 1450', 'mtu: 1500'),
  )
  const d = await run('diff', '--detailed-exitcode')
  expect(d.code).not.toBe(0)
  expect(d.stdout + d.stderr).toMatch(/sdn-pending/)
  expect(d.stdout + d.stderr).toContain('pending keys: mtu')
  const writes = sim.stats.writes()
  const a = await run('apply', '--yes')
  expect(a.code).not.toBe(0)
  expect(sim.stats.writes()).toBe(writes)
  expect(applies()).toBe(1)
  expect(await pve.get('/cluster/sdn/zones/vlan1', { query: { running: 1 } })).not.toHaveProperty('mtu')
})

it('random SDN estates converge in one apply with one PUT /cluster/sdn, then diff is empty (property)', async () => {
  const estate = fc.record({
    zones: fc.uniqueArray(fc.constantFrom('za', 'zb', 'zc'), { minLength: 1, maxLength: 3 }),
    vnets: fc.uniqueArray(fc.constantFrom('va', 'vb', 'vc', 'vd'), { minLength: 1, maxLength: 4 }),
    subnet: fc.boolean(),
  })
  await fc.assert(
    fc.asyncProperty(estate, async ({ zones, vnets, subnet }) => {
      const files: Record<string, string> = {
        'zone/lab/zones.yaml': zones.map((z) => doc('Zone', z, '  type: simple\n')).join('---\n'),
        'vnet/lab/vnets.yaml': vnets
          .map((v, i) => doc('VNet', v, `  zone: ${zones[i % zones.length]!}\n`))
          .join('---\n'),
      }
      if (subnet)
        files['subnet/lab/s.yaml'] = doc(
          'Subnet',
          's1',
          `  vnet: ${vnets[0]!}\n  cidr: 10.77.0.0/24\n  gateway: 10.77.0.1\n`,
        )
      const lab = await startLab()
      const repo = await makeRepo(lab, { manifests: files })
      try {
        const env = baseEnv(repo)
        const a = await proxops(['apply', '--yes'], { cwd: repo, env })
        expect(a.code, a.stdout + a.stderr).toBe(0)
        expect(lab.stats.count('PUT', '/cluster/sdn')).toBe(1)
        expect((await proxops(['diff', '--detailed-exitcode'], { cwd: repo, env })).code).toBe(0)
      } finally {
        await lab.close()
        rmSync(repo, { recursive: true, force: true })
      }
    }),
    { numRuns: 3 },
  )
})
