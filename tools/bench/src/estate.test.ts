import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { loadRepository } from '@proxops/schema'
import { rng, writeEstateRepo } from './estate.js'

const dirs: string[] = []
const temp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'proxops-estate-test-'))
  dirs.push(d)
  return d
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

const snapshot = (root: string): string[] =>
  readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort()
    .map((f) => `${f.slice(root.length)}\n${readFileSync(f, 'utf8')}`)

describe('estate generator', () => {
  it('writes the same repository for the same seed, and a different one for another seed', () => {
    const o = { guests: 30, nodes: ['pve1', 'pve2'], lxcEvery: 3 }
    const a = temp()
    const b = temp()
    const c = temp()
    writeEstateRepo(a, { baseUrl: 'https://pve.example.invalid:8006' }, { ...o, seed: 1 })
    writeEstateRepo(b, { baseUrl: 'https://pve.example.invalid:8006' }, { ...o, seed: 1 })
    writeEstateRepo(c, { baseUrl: 'https://pve.example.invalid:8006' }, { ...o, seed: 2 })
    expect(snapshot(a)).toEqual(snapshot(b))
    expect(snapshot(a)).not.toEqual(snapshot(c))
  })

  it('produces a repository the loader accepts, with every guest on the given nodes', async () => {
    const root = temp()
    const repo = writeEstateRepo(
      root,
      { baseUrl: 'https://pve.example.invalid:8006', fingerprint: Array.from({ length: 32 }, () => 'AB').join(':') },
      { seed: 4, guests: 25, nodes: ['pve1', 'pve2', 'pve3'], lxcEvery: 5, state: 'started' },
    )
    const model = await loadRepository({ root })
    expect(model.errors).toEqual([])
    const cluster = model.clusters[0]
    expect(cluster?.name).toBe(repo.cluster)
    const guests = cluster!.index.resources.filter((r) => r.manifest.kind === 'VM' || r.manifest.kind === 'LXC')
    expect(guests).toHaveLength(25)
    expect(guests.filter((r) => r.manifest.kind === 'LXC')).toHaveLength(5)
    for (const g of guests) expect(['pve1', 'pve2', 'pve3']).toContain((g.manifest.spec as { node: string }).node)
  })

  it('rng is deterministic and stays in [0, 1)', () => {
    const a = rng(42)
    const b = rng(42)
    for (let i = 0; i < 1000; i++) {
      const x = a()
      expect(x).toBe(b())
      expect(x).toBeGreaterThanOrEqual(0)
      expect(x).toBeLessThan(1)
    }
  })
})
