/**
 * spec.ha through the CLI against the simulator (PVE 9: a node-affinity rule), one lifecycle: validate
 * refuses a preference that would move the guest off its node, apply creates the guest and its HA resource (the
 * CRM starts it), a hand edit of the resource is drift and converges, a declared stop goes through HA, adopt
 * writes spec.ha back so that the manifest plans nothing, and removing spec.ha removes only what ProxOps marked.
 */
import { request } from 'node:https'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { Simulator } from '@proxops/pve-sim'
import { baseEnv, git, makeRepo, proxops, startLab, vmManifest } from './harness.js'

vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 })

let sim: Simulator
let repo: string
const run = (...args: string[]) => proxops(args, { cwd: repo, env: baseEnv(repo) })
const FILE = 'vm/lab/web.yaml'
const HA = `  ha:
    max_restart: 2
    nodes: { pve1: 2, pve2: 1 }
`
const manifest = (state: 'started' | 'stopped', ha = HA) =>
  vmManifest('web', 130).replace('  state: stopped\n', `  state: ${state}\n`) + ha

function commit(text: string | undefined, message: string): void {
  if (text === undefined) rmSync(path.join(repo, FILE))
  else writeFileSync(path.join(repo, FILE), text)
  git(repo, 'add', '-A')
  git(repo, 'commit', '-q', '--allow-empty', '-m', message)
}

/** an administrator's call on the cluster, outside ProxOps */
function admin(method: string, p: string, params: Record<string, string> = {}): Promise<unknown> {
  const body = new URLSearchParams(params).toString()
  const u = new URL(`${sim.apiUrl}${p}`)
  return new Promise((resolve, reject) => {
    const req = request(
      {
        method,
        hostname: u.hostname,
        port: u.port,
        path: u.pathname,
        agent: false,
        ...(sim.caPem !== undefined ? { ca: sim.caPem } : {}),
        headers: {
          Authorization: sim.token.header,
          'Content-Type': 'application/x-www-form-urlencoded',
          'Content-Length': String(Buffer.byteLength(body)),
        },
      },
      (res) => {
        let text = ''
        res.on('data', (c: Buffer) => (text += c.toString()))
        res.on('end', () =>
          res.statusCode === 200
            ? resolve((JSON.parse(text) as { data: unknown }).data)
            : reject(new Error(`${method} ${p}: ${res.statusCode} ${text}`)),
        )
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}
const haList = async (what: 'resources' | 'rules') =>
  (await admin('GET', `/cluster/ha/${what}`)) as Record<string, unknown>[]

beforeAll(async () => {
  sim = await startLab({ haLagMs: 100 })
  repo = await makeRepo(sim, { manifests: { [FILE]: manifest('started') } })
})
afterAll(async () => {
  await sim.close()
  rmSync(repo, { recursive: true, force: true })
})

describe('spec.ha lifecycle', () => {
  it('validate, create, drift, update, adopt, remove', async () => {
    // validate: the guest's node must be among the preferred ones, or HA would move it away
    writeFileSync(path.join(repo, FILE), manifest('started', HA.replace('pve1: 2, pve2: 1', 'pve1: 1, pve2: 2')))
    const bad = await run('validate')
    expect(bad.code).toBe(1)
    expect(bad.stdout + bad.stderr).toMatch(/vm\/lab\/web\.yaml:\d+:\d+ field-invalid /)
    expect(bad.stdout + bad.stderr).toContain('spec.node pve1 must be listed with the highest priority (2)')
    commit(manifest('started'), 'web with HA')

    // create: the guest (not started by ProxOps), then its resource, whose requested state starts it
    const created = await run('apply', '--yes')
    expect(created.code, created.stdout + created.stderr).toBe(0)
    expect(created.stdout).toMatch(/ok +VM\/pve1\/130\(web\) HA create/)
    expect(sim.control.guest(130)?.status).toBe('running')
    expect((await haList('resources')).find((r) => r.sid === 'vm:130')).toMatchObject({
      state: 'started',
      max_restart: 2,
      comment: 'proxops: VM/web',
    })
    expect((await haList('rules')).map((r) => [r.rule, r.resources, r.nodes])).toEqual([
      ['proxops-vm-130', 'vm:130', 'pve1:2,pve2:1'],
    ])
    expect((await run('diff', '--detailed-exitcode')).code).toBe(0)

    // drift by hand: an administrator raises max_restart; it is owned, so it is put back
    await admin('PUT', '/cluster/ha/resources/vm:130', { max_restart: '5' })
    const drift = await run('diff', '--detailed-exitcode')
    expect(drift.code, drift.stdout).toBe(2)
    expect(drift.stdout).toContain('will have its HA resource updated')
    expect(drift.stdout).toContain('spec.ha.max_restart')
    expect((await run('apply', '--yes')).code).toBe(0)
    expect((await haList('resources')).find((r) => r.sid === 'vm:130')?.max_restart).toBe(2)

    // update from git: a declared stop is a requested HA state, never a direct shutdown HA would undo
    commit(manifest('stopped'), 'web stopped')
    const stopped = await run('apply', '--yes')
    expect(stopped.code, stopped.stdout + stopped.stderr).toBe(0)
    expect(stopped.stdout).toMatch(/ok +VM\/pve1\/130\(web\) HA update/)
    expect(sim.control.guest(130)?.status).toBe('stopped')
    expect((await haList('resources')).find((r) => r.sid === 'vm:130')?.state).toBe('stopped')
    expect((await run('diff', '--detailed-exitcode')).code).toBe(0)

    // adopt: forget the manifest (the guest stays: prunes are bounded) and adopt it back with its spec.ha
    commit(undefined, 'forget web')
    writeFileSync(path.join(repo, 'clusters/lab/resources.yaml'), 'resources: []\n')
    const adopted = await run('adopt', '--cluster', 'lab')
    expect(adopted.code, adopted.stdout + adopted.stderr).toBe(0)
    const file = readFileSync(path.join(repo, FILE), 'utf8')
    expect(file).toContain('state: stopped')
    expect(file).toMatch(/ha:\n {4}max_restart: 2\n {4}nodes:\n {6}pve1: 2\n {6}pve2: 1\n/)
    writeFileSync(path.join(repo, 'clusters/lab/resources.yaml'), `resources:\n  - ../../${FILE}\n`)
    git(repo, 'add', '-A')
    git(repo, 'commit', '-q', '-m', 'adopted')
    const after = await run('diff', '--output', 'json')
    expect(after.code, after.stderr).toBe(0)
    const set = JSON.parse(after.stdout) as { plans: { actions: { type: string }[] }[] }
    expect(set.plans[0]!.actions).toEqual([])

    // remove spec.ha: the marked resource and rule go, the guest stays; a resource nobody marked is left alone
    commit(readFileSync(path.join(repo, FILE), 'utf8').replace(/ {2}ha:\n( {4}.*\n)+/, ''), 'web without HA')
    const removed = await run('apply', '--yes')
    expect(removed.code, removed.stdout + removed.stderr).toBe(0)
    expect(removed.stdout).toMatch(/ok +VM\/pve1\/130\(web\) HA delete/)
    expect((await haList('resources')).map((r) => r.sid)).toEqual([])
    expect(await haList('rules')).toEqual([])
    expect(sim.control.guest(130)).toBeDefined()
    await admin('POST', '/cluster/ha/resources', { sid: 'vm:130', state: 'stopped', comment: 'by hand' })
    const left = await run('diff', '--detailed-exitcode')
    expect(left.code, left.stdout).toBe(0)
  })
})
