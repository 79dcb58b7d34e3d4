/**
 * The `proxops diff` sample at the top of README.md is real output: the same scenario (apply examples/repository/ to the
 * homelab simulator, then commit a bigger app-vm and the removal of vm/homelab/web.yaml) prints it again, byte
 * for byte except the commit id.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fencedBlocks } from './markdown.js'
import { createSandbox, gitCommit, missingBuilds, repoRoot, runInSandbox, type Sandbox } from './sandbox.js'

const PROMPT = '$ proxops diff --cluster homelab'

function edit(file: string, replacements: ReadonlyArray<[string, string]>): void {
  let text = readFileSync(file, 'utf8')
  for (const [from, to] of replacements) {
    if (!text.includes(from))
      throw new Error(`${file} no longer contains ${JSON.stringify(from)}: update the README sample scenario`)
    text = text.replace(from, to)
  }
  writeFileSync(file, text)
}

const normalise = (text: string): string => text.replace(/ at [0-9a-f]{12}\b/g, ' at <commit>').trimEnd()

describe('README.md: the diff sample', () => {
  let sandbox: Sandbox | undefined

  beforeAll(async () => {
    const missing = missingBuilds()
    if (missing.length > 0) throw new Error(missing.join('\n'))
    sandbox = await createSandbox({ clusters: ['homelab'] })
  }, 120_000)
  afterAll(async () => {
    await sandbox?.close()
  })

  it('is what the CLI prints for its scenario', async () => {
    const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8')
    const sample = fencedBlocks(readme).find((b) => b.body.startsWith(PROMPT))
    expect(sample, `README.md has no block starting with "${PROMPT}"`).toBeDefined()
    if (!sandbox || !sample) return

    const applied = await runInSandbox(sandbox, 'proxops apply --yes --cluster homelab')
    expect(applied.code, applied.output).toBe(0)
    const repo = sandbox.repo
    edit(path.join(repo, 'vm/homelab/app-vm.yaml'), [
      ['memory: 4GiB', 'memory: 8GiB'],
      ['size: 32GiB', 'size: 48GiB'],
      ['tags: [app]', 'tags: [app, prod]'],
    ])
    edit(path.join(repo, 'clusters/homelab/resources.yaml'), [['  - ../../vm/homelab/web.yaml\n', '']])
    rmSync(path.join(repo, 'vm/homelab/web.yaml'))
    // a backup job selects only guests this entry manages (docs/safety.md#backup-jobs): the retired VM leaves it too
    edit(path.join(repo, 'backupjob/homelab/nightly.yaml'), [['vmids: [400, 401, 410]', 'vmids: [400, 410]']])
    gitCommit(repo, 'bigger app-vm; web VMs retired')

    const diff = await runInSandbox(sandbox, 'proxops diff --cluster homelab')
    expect(diff.code, diff.output).toBe(0)
    expect(normalise(diff.output)).toBe(normalise(sample.body.slice(PROMPT.length + 1)))
  }, 180_000)
})
