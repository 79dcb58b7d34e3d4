/**
 * spec.ha through the CLI on PVE 8.4, where the node preference is an HA group (PVE::API2::HA::Groups),
 * for an HA-managed container (`ct:<vmid>`), one lifecycle: apply creates the container and its resource and
 * group (the CRM starts it), a hand edit of the group is drift and converges, a declared stop goes through HA,
 * adopt writes spec.ha back in the group form, and removing spec.ha removes the resource and the group only.
 * The PVE 9 rule form with a VM is ha.test.ts.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { apidocForTests, type Simulator } from '@proxops/pve-sim'
import { createPveClient, type PveClient } from '@proxops/pve-client'
import { baseEnv, git, makeRepo, proxops, startLab, CTT_DEB, transcriptCanaries } from './harness.js'

vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 })

const HA = `  ha:
    max_restart: 2
    nodes: { pve1: 2, pve2: 1 }
`
const cache = (state: 'started' | 'stopped', ha = HA) => `apiVersion: proxops/v1alpha1
kind: LXC
metadata:
  name: cache
spec:
  node: pve1
  vmid: 140
  template: deb
  state: ${state}
  memory: 512MiB
  cpu: {cores: 1}
  root: {storage: local-lvm, size: 4GiB}
  networks: [{bridge: vmbr0, ip: dhcp}]
${ha}`
const FILE = 'lxc/lab/cache.yaml'

// the 8.x API schema gates the simulator's 8.4 mode (skipped with a notice without it)
const skip = !apidocForTests('8.4')
let sim: Simulator
let repo: string
let pve: PveClient
const run = (...args: string[]) => proxops(args, { cwd: repo, env: baseEnv(repo) })
const commit = (message: string) => {
  git(repo, 'add', '-A')
  git(repo, 'commit', '-q', '--allow-empty', '-m', message)
}
const ha = async (what: 'resources' | 'groups') => (await pve.get(`/cluster/ha/${what}`)) as Record<string, unknown>[]

beforeAll(async () => {
  if (skip) return
  sim = await startLab({ pveVersion: '8.4', haLagMs: 100 })
  repo = await makeRepo(sim, { manifests: { 'ctt/lab/deb.yaml': CTT_DEB, [FILE]: cache('started') } })
  pve = createPveClient({
    baseUrl: sim.url,
    auth: { type: 'token', tokenId: 'root@pam!proxops', secret: sim.token.secret },
    tls: { fingerprint: sim.fingerprint! },
  })
})
afterAll(async () => {
  if (skip) return
  await pve.close()
  await sim.close()
  rmSync(repo, { recursive: true, force: true })
})

describe('spec.ha on PVE 8.4 (an HA group) for an LXC', () => {
  it.skipIf(skip)('create, drift, stop, adopt, remove', async () => {
    // create: the container (not started by ProxOps), then its resource and group; the CRM starts it
    const created = await run('apply', '--yes')
    expect(created.code, created.stdout + created.stderr).toBe(0)
    expect(created.stdout).toMatch(/ok +LXC\/pve1\/140\(cache\) HA create/)
    expect(sim.control.guest(140)?.status).toBe('running')
    expect((await ha('resources')).find((r) => r.sid === 'ct:140')).toMatchObject({
      state: 'started',
      max_restart: 2,
      group: 'proxops-ct-140',
      comment: 'proxops: LXC/cache',
    })
    const groups = await ha('groups')
    expect(groups.map((g) => g.group)).toEqual(['proxops-ct-140'])
    expect(String(groups[0]?.nodes).split(',').sort()).toEqual(['pve1:2', 'pve2:1'])
    expect((await run('diff', '--detailed-exitcode')).code).toBe(0)

    // drift by hand: an administrator changes the group's priorities; the preference is owned, so it is put back.
    // (pve1 stays first: a reorder would make the CRM move the container to pve2 at once, failback being on)
    await pve.request('PUT', '/cluster/ha/groups/proxops-ct-140', { params: { nodes: 'pve1:3,pve2:1' } })
    const drift = await run('diff', '--detailed-exitcode')
    expect(drift.code, drift.stdout).toBe(2)
    expect(drift.stdout).toContain('spec.ha.nodes')
    expect((await run('apply', '--yes')).code).toBe(0)
    expect(
      String((await ha('groups'))[0]?.nodes)
        .split(',')
        .sort(),
    ).toEqual(['pve1:2', 'pve2:1'])

    // a declared stop is the resource's requested state, never a direct shutdown HA would undo
    writeFileSync(path.join(repo, FILE), cache('stopped'))
    commit('cache stopped')
    const stopped = await run('apply', '--yes')
    expect(stopped.code, stopped.stdout + stopped.stderr).toBe(0)
    expect(stopped.stdout).toMatch(/ok +LXC\/pve1\/140\(cache\) HA update/)
    expect(sim.control.guest(140)?.status).toBe('stopped')
    expect((await ha('resources')).find((r) => r.sid === 'ct:140')?.state).toBe('stopped')
    expect((await run('diff', '--detailed-exitcode')).code).toBe(0)

    // adopt: forget the manifest (the container stays: prunes are bounded) and adopt it back with its spec.ha
    rmSync(path.join(repo, FILE))
    writeFileSync(path.join(repo, 'clusters/lab/resources.yaml'), 'resources:\n  - ../../ctt/lab/deb.yaml\n')
    commit('forget cache')
    const adopted = await run('adopt', '--cluster', 'lab')
    expect(adopted.stdout).toContain(`adopt: wrote ${FILE} (LXC)`)
    const file = readFileSync(path.join(repo, FILE), 'utf8')
    expect(file).toContain('state: stopped')
    expect(file).toMatch(/ha:\n {4}max_restart: 2\n {4}nodes:\n {6}pve1: 2\n {6}pve2: 1\n/)
    // PVE does not record a container's template (an adopt gap): the manifest of git comes back instead

    // remove spec.ha: the marked resource and group go, the container stays
    writeFileSync(path.join(repo, FILE), cache('stopped', ''))
    writeFileSync(
      path.join(repo, 'clusters/lab/resources.yaml'),
      `resources:\n  - ../../ctt/lab/deb.yaml\n  - ../../${FILE}\n`,
    )
    commit('cache without HA')
    const removed = await run('apply', '--yes')
    expect(removed.code, removed.stdout + removed.stderr).toBe(0)
    expect(removed.stdout).toMatch(/ok +LXC\/pve1\/140\(cache\) HA delete/)
    expect(await ha('resources')).toEqual([])
    expect(await ha('groups')).toEqual([])
    expect(sim.control.guest(140)?.status).toBe('stopped')
    expect((await run('diff', '--detailed-exitcode')).code).toBe(0)
    expect(transcriptCanaries()).toEqual([])
  })
})
