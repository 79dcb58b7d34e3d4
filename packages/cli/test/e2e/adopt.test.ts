/** adopt: read-only, never overwrites without --force, round trip (adopt, compose, diff = ownership claims only). */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { Simulator } from '@proxops/pve-sim'
import { baseEnv, findCanaries, git, makeRepo, proxops, startLab, transcriptCanaries } from './harness.js'

// simulator tasks on a shared 2-core machine: generous per-test limits
vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 })

let sim: Simulator
let repo: string
const run = (args: string[]) => proxops(args, { cwd: repo, env: baseEnv(repo) })

function files(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name))
}

beforeAll(async () => {
  sim = await startLab({ estate: { guests: 4 }, seed: 7 })
  repo = await makeRepo(sim, { manifests: {} })
})
afterAll(async () => {
  await sim.close()
  rmSync(repo, { recursive: true, force: true })
})

describe('adopt', () => {
  it('requires --cluster and names the configured ones', async () => {
    const r = await run(['adopt'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(
      'proxops: error: adopt requires an explicit --cluster=<name>; configured clusters: [lab]',
    )
  })

  it('writes manifests read-only, refuses to overwrite, and round-trips: adopt, paste, validate, diff', async () => {
    const writes = sim.stats.writes()
    // a filter adopts only the guests it names
    const vmids = sim.control
      .guests()
      .map((g) => g.vmid)
      .sort((a, b) => a - b)
    const one = await run(['adopt', '--cluster', 'lab', '--vmid', String(vmids[0])])
    expect(one.code, one.stderr).toBe(0)
    expect(one.stdout).toContain(`adopt: ${vmids.length - 1} other guest(s) left out by the filter`)
    expect([...one.stdout.matchAll(/^adopt: wrote /gm)]).toHaveLength(1)
    // a guest another cluster entry's marker names is that entry's: listed, never adopted
    const theirs = vmids[vmids.length - 1]!
    sim.control.driftSet(theirs, 'tags', 'proxops;proxops.other')
    const first = await run(['adopt', '--cluster', 'lab'])
    expect(first.stdout).toContain(`adopt: owned by another cluster entry, not adopted: vmid ${theirs} (proxops.other)`)
    expect(first.stderr).not.toMatch(/proxops: error/)
    expect(first.code).toBe(0)
    expect(first.stdout).toMatch(/^adopt: cluster lab \(read-only\)$/m)
    expect(first.stdout).toMatch(/^adopt: wrote (vm|lxc|templatevm|templatect)\/lab\/.+\.yaml/m)
    expect(sim.stats.writes()).toBe(writes)
    const written = files(repo).filter(
      (f) => !f.includes(`${path.sep}.git${path.sep}`) && !f.includes(`${path.sep}clusters${path.sep}`),
    )
    expect(written.length).toBeGreaterThan(0)
    for (const f of written) expect(findCanaries(readFileSync(f, 'utf8'))).toEqual([])

    // byte-identical re-run: nothing to overwrite
    const again = await run(['adopt', '--cluster', 'lab'])
    expect(again.code).toBe(0)
    expect(again.stdout).not.toMatch(/^adopt: wrote/m)
    expect(again.stdout).toMatch(/^adopt: unchanged /m)

    // an edited file is never overwritten without --force
    const target = written[0] as string
    writeFileSync(target, `${readFileSync(target, 'utf8')}# edited by hand\n`)
    const refused = await run(['adopt', '--cluster', 'lab'])
    expect(refused.code).toBe(1)
    expect(refused.stdout).toContain(`adopt: NOT overwriting ${path.relative(repo, target)}`)
    expect(readFileSync(target, 'utf8')).toContain('# edited by hand')
    const forced = await run(['adopt', '--cluster', 'lab', '--force'])
    expect(forced.code).toBe(0)
    expect(readFileSync(target, 'utf8')).not.toContain('# edited by hand')

    // paste the printed lines as they are (resources.yaml lists nothing yet: the whole file), commit
    const block = forced.stdout.split('\n')
    const start = block.findIndex((l) => l === 'adopt: write this as clusters/lab/resources.yaml:')
    expect(start, forced.stdout).toBeGreaterThan(-1)
    const end = block.indexOf('adopt: end of lines', start)
    const pasted = block.slice(start + 1, end)
    expect(pasted[0]).toBe('resources:')
    writeFileSync(path.join(repo, 'clusters/lab/resources.yaml'), `${pasted.join('\n')}\n`)
    git(repo, 'add', '-A')
    git(repo, 'commit', '-q', '-m', 'adopted')
    const valid = await run(['validate'])
    expect(valid.code, valid.stdout + valid.stderr).toBe(0)
    expect(valid.stdout).toMatch(/^lab: valid, \d+ resources/m)
    // adopted once: a second adopt skips what the repository now declares
    const declared = await run(['adopt', '--cluster', 'lab'])
    expect(declared.code).toBe(0)
    expect(declared.stdout).toMatch(/^adopt: already declared in the repository, not adopted again: vmid \d+/m)
    expect(declared.stdout).toContain('adopt: no objects to adopt')
    const diff = await run(['diff', '--output', 'json'])
    expect(diff.stderr).not.toMatch(/proxops: error/)
    expect(diff.code).toBe(0)
    const set = JSON.parse(diff.stdout) as {
      plans: { actions: { type: string; vmid?: number; diffs: { key: string }[] }[] }[]
    }
    // the gaps adopt listed, by vmid: `adopt: gap VM on pve1#1002: cpu=(unset) - ...`
    const gaps = new Map<string, Set<string>>()
    for (const m of forced.stdout.matchAll(/^adopt: gap \w+ on [\w-]+#(\d+): ([\w.-]+)=/gm)) {
      gaps.set(m[1] as string, new Set([...(gaps.get(m[1] as string) ?? []), m[2] as string]))
    }
    const actions = set.plans[0]?.actions ?? []
    expect(actions.length).toBeGreaterThan(0)
    for (const action of actions) {
      const keys = action.diffs.map((d) => d.key)
      // a tags-only claim is a plain update; a listed gap (the PVE-default cpu written out) may be reboot-class
      expect(keys.length === 1 ? action.type : 'update').toBe('update')
      expect(['update', 'shutdown-then-update']).toContain(action.type)
      expect(keys).toContain('tags')
      for (const key of keys.filter((k) => k !== 'tags'))
        expect(gaps.get(String(action.vmid))?.has(key), `${key} of ${action.vmid} is a listed gap`).toBe(true)
    }
    expect(sim.stats.writes()).toBe(writes)
  })

  it('--adopt-secrets merges unmatched SSH keys into the SOPS file (atomically, existing names kept)', async () => {
    const key = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAdoptedAdoptedAdoptedAdoptedAdoptedAdopted01 adopt@e2e'
    sim.control.driftSet(1002, 'sshkeys', encodeURIComponent(`${key}\n`))
    const file = path.join(repo, 'clusters/lab/secrets.sops.yaml')
    const before = readFileSync(file, 'utf8')
    const plain = await run(['adopt', '--cluster', 'lab', '--force', '--include-declared'])
    expect(plain.code).toBe(0)
    expect(readFileSync(file, 'utf8')).toBe(before)
    const merged = await run(['adopt', '--cluster', 'lab', '--force', '--include-declared', '--adopt-secrets'])
    expect(merged.stderr).not.toMatch(/proxops: error/)
    expect(merged.code).toBe(0)
    expect(merged.stdout).toMatch(/^adopt: merged 1 SSH key\(s\) into clusters\/lab\/secrets\.sops\.yaml$/m)
    const after = readFileSync(file, 'utf8')
    expect(after).not.toBe(before)
    expect(after).toMatch(/adopted-[0-9a-f]{16}: ENC\[AES256_GCM/)
    expect(after).not.toContain('AdoptedAdopted')
    // the adopted VM now refers to the new SOPS entry instead of carrying the key
    const vm = readFileSync(path.join(repo, 'vm/lab/vm-1002.yaml'), 'utf8')
    expect(vm).toMatch(/cloud-init\.ssh-keys\.adopted-[0-9a-f]{16}/)
    const again = await run(['adopt', '--cluster', 'lab', '--force', '--include-declared', '--adopt-secrets'])
    expect(again.stdout).toMatch(/^adopt: no new SSH keys (to merge|for)/m)
    expect(readFileSync(file, 'utf8')).toBe(after)
  })

  it('no canary anywhere', () => {
    expect(transcriptCanaries()).toEqual([])
  })
})
