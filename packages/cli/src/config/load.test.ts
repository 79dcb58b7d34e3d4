import { afterAll, describe, expect, it } from 'vitest'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { findRepositoryRoot, loadDraftConfig } from './load.js'

const tmp = mkdtempSync(path.join(os.tmpdir(), 'proxops-load-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))

function write(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true })
  writeFileSync(file, text)
}
const cluster = (name: string, url: string) => `pve:\n  clusters:\n    ${name}:\n      base-url: ${url}\n`

describe('repository-first discovery', () => {
  const root = path.join(tmp, 'repo')
  mkdirSync(path.join(root, '.git'), { recursive: true })
  write(path.join(root, 'clusters/edge/config.yaml'), cluster('edge', 'https://edge:8006'))
  write(path.join(root, 'clusters/homelab/config.yaml'), cluster('homelab', 'https://pve1:8006'))
  mkdirSync(path.join(root, 'clusters/notes'), { recursive: true })
  write(path.join(root, 'proxops.yaml'), 'reconcile:\n  prune-budget: 1\n')
  mkdirSync(path.join(root, 'vm/homelab'), { recursive: true })

  it('walks up from the cwd to the .git ancestor; an explicit --git-path / PROXOPS_GIT_PATH is the root as given', () => {
    expect(findRepositoryRoot(path.join(root, 'vm/homelab'))).toBe(root)
    const d = loadDraftConfig({ flags: {}, env: {}, cwd: path.join(root, 'vm/homelab'), home: '/h' })
    expect(d.root).toBe(root)
    expect(d.clusters.map((c) => c.name)).toEqual(['edge', 'homelab'])
    expect(d.reconcile.pruneBudget).toBe(1)
    expect(loadDraftConfig({ flags: {}, env: { PROXOPS_GIT_PATH: root }, cwd: tmp, home: '/h' }).root).toBe(root)
    expect(loadDraftConfig({ flags: { gitPath: 'repo' }, env: {}, cwd: tmp, home: '/h' }).root).toBe(root)
    // a ProxOps tree inside a larger repository: the explicit path wins over the .git ancestor
    expect(() => loadDraftConfig({ flags: { gitPath: 'repo/vm' }, env: {}, cwd: tmp, home: '/h' })).toThrow(
      /at least one named PVE cluster is required: add clusters\/<name>\/config.yaml under .*repo\/vm$/,
    )
  })

  it('fails outside a repository and for a missing --git-path', () => {
    expect(() => loadDraftConfig({ flags: {}, env: {}, cwd: os.tmpdir(), home: '/h' })).toThrow(
      /no ProxOps GitOps repository found/,
    )
    expect(() => loadDraftConfig({ flags: { gitPath: 'nope' }, env: {}, cwd: tmp, home: '/h' })).toThrow(
      /--git-path .*nope is not a directory/,
    )
  })

  it('--config: the file layers over proxops.yaml, its git.url switches to URL mode, clusters still come from the repository', () => {
    const file = path.join(tmp, 'etc/proxops.yaml')
    write(file, `git:\n  url: https://git.example/ops.git\n  path: ${root}\n`)
    expect(() => loadDraftConfig({ flags: { config: file }, env: {}, cwd: tmp, home: '/h' })).toThrow(
      /git\.url and git\.path are mutually exclusive/,
    )
    write(file, `git:\n  path: ${root}\nreconcile:\n  prune-budget: 9\n`)
    const d = loadDraftConfig({ flags: {}, env: { PROXOPS_CONFIG: file }, cwd: tmp, home: '/h' })
    expect(d.root).toBe(root)
    expect(d.reconcile.pruneBudget).toBe(9)
    expect(d.git.path).toBe(root)
    expect(d.clusters.map((c) => c.name)).toEqual(['edge', 'homelab'])
    write(file, `git:\n  url: https://git.example/ops.git\n${cluster('solo', 'https://solo:8006')}`)
    const url = loadDraftConfig({ flags: { config: file }, env: {}, cwd: tmp, home: '/h' })
    expect(url.git).toEqual({ url: 'https://git.example/ops.git', branch: 'main' })
    expect(url.clusters.map((c) => c.name)).toEqual(['solo'])
    expect(() =>
      loadDraftConfig({ flags: { config: path.join(tmp, 'missing.yaml') }, env: {}, cwd: tmp, home: '/h' }),
    ).toThrow(/cannot read --config file: ENOENT/)
  })
})
