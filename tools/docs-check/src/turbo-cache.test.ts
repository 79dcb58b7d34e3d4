/**
 * turbo's cache can only replay a result when the task's hash covers everything the task reads. Tests and
 * typechecks read the sources of the workspace packages they import (the `@proxops/source` condition), so the hash
 * of every cached `test` and `typecheck` task must reach each workspace package it depends on, transitively: through
 * a dependency on that package's `inputs` (a task no package implements, whose hash is the package's files and its
 * own dependencies' `inputs`) or `build` (whose inputs are the sources). docs-check reads the whole repository
 * (docs/, examples/, every tracked file), which no package hash covers, so its tests are never cached. The suites
 * that run a built `dist/` (the CLI's end-to-end tests, reliability, docs-check) start only after those builds.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { repoRoot } from './sandbox.js'

interface DryTask {
  taskId: string
  task: string
  package: string
  directory: string
  dependencies: string[]
  resolvedTaskDefinition: { cache: boolean }
}

/** The workspace packages each package names in its dependencies or devDependencies. */
export type WorkspaceDeps = ReadonlyMap<string, readonly string[]>

/** `P#task: misses D` for each cached task of `tasks` whose hash does not reach a workspace package it reads. */
export function uncovered(tasks: readonly DryTask[], deps: WorkspaceDeps, names: readonly string[]): string[] {
  const byId = new Map(tasks.map((t) => [t.taskId, t]))
  const reached = new Map<string, Set<string>>()
  const reach = (id: string): Set<string> => {
    const known = reached.get(id)
    if (known) return known
    const t = byId.get(id)
    const out = new Set<string>(t ? [t.package] : [id.split('#')[0]!])
    reached.set(id, out)
    for (const d of t?.dependencies ?? []) for (const p of reach(d)) out.add(p)
    return out
  }
  const closure = (pkg: string, seen = new Set<string>()): Set<string> => {
    for (const d of deps.get(pkg) ?? []) if (!seen.has(d)) closure(d, seen.add(d))
    return seen
  }
  const out: string[] = []
  for (const t of tasks) {
    if (!names.includes(t.task) || !t.resolvedTaskDefinition.cache) continue
    const got = reach(t.taskId)
    for (const d of [...closure(t.package)].sort()) if (!got.has(d)) out.push(`${t.taskId}: misses ${d}`)
  }
  return out
}

function dryRun(): DryTask[] {
  const turbo = path.join(repoRoot, 'node_modules/.bin/turbo')
  const out = execFileSync(turbo, ['run', 'test', 'typecheck', '--dry=json'], {
    cwd: repoRoot,
    encoding: 'utf8',
    env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1', DO_NOT_TRACK: '1' },
    maxBuffer: 64 * 1024 * 1024,
  })
  return (JSON.parse(out) as { tasks: DryTask[] }).tasks
}

function workspaceDeps(tasks: readonly DryTask[]): WorkspaceDeps {
  const out = new Map<string, string[]>()
  for (const t of tasks) {
    if (out.has(t.package)) continue
    const manifest = JSON.parse(readFileSync(path.join(repoRoot, t.directory, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>
      devDependencies?: Record<string, string>
    }
    const all = { ...manifest.dependencies, ...manifest.devDependencies }
    out.set(
      t.package,
      Object.keys(all).filter((n) => all[n]!.startsWith('workspace:')),
    )
  }
  return out
}

describe("turbo's cache keys", () => {
  const tasks = dryRun()

  it('every cached test and typecheck hash covers the workspace packages the task reads', () => {
    expect(tasks.some((t) => t.taskId === '@proxops/planner#test')).toBe(true)
    expect(uncovered(tasks, workspaceDeps(tasks), ['test', 'typecheck'])).toEqual([])
  })

  it('docs-check, which reads the whole repository, is never replayed from the cache', () => {
    const t = tasks.find((x) => x.taskId === '@proxops/docs-check#test')
    expect(t?.resolvedTaskDefinition.cache).toBe(false)
  })

  it('the suites that run built output start after the builds they run (no stale dist/)', () => {
    const byId = new Map(tasks.map((t) => [t.taskId, t]))
    const before = (id: string, seen = new Set<string>()): Set<string> => {
      for (const d of byId.get(id)?.dependencies ?? []) if (!seen.has(d)) before(d, seen.add(d))
      return seen
    }
    // the CLI's end-to-end tests and reliability run packages/cli/dist; docs-check also runs packages/sops/dist
    const builds = ['@proxops/cli#build', '@proxops/sops#build', '@proxops/pve-sim#build']
    for (const suite of ['@proxops/cli#test', '@proxops/reliability#test', '@proxops/docs-check#test'])
      expect([suite, builds.filter((b) => !before(suite).has(b))]).toEqual([suite, []])
  })

  it('the check can fail: a test that depends on nothing misses its dependencies', () => {
    const task = (id: string, dependencies: string[]): DryTask => ({
      taskId: id,
      task: id.split('#')[1]!,
      package: id.split('#')[0]!,
      directory: '',
      dependencies,
      resolvedTaskDefinition: { cache: true },
    })
    const deps: WorkspaceDeps = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', []],
    ])
    expect(uncovered([task('a#test', []), task('b#inputs', ['c#inputs'])], deps, ['test'])).toEqual([
      'a#test: misses b',
      'a#test: misses c',
    ])
    expect(uncovered([task('a#test', ['b#inputs']), task('b#inputs', ['c#inputs'])], deps, ['test'])).toEqual([])
  })
})
