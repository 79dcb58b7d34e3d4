/**
 * The end-to-end files run `main()` in process (harness.ts, `proxops`); this one holds them to the real thing: the
 * built `dist/bin.js`, started as a process, must say exactly what `main()` says in process, byte for byte, with
 * the same exit code, for reads, usage errors, help and an apply.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { rmSync } from 'node:fs'
import type { Simulator } from '@proxops/pve-sim'
import { makeRepo, proxops, spawned, startLab, transcriptCanaries } from './harness.js'

vi.setConfig({ testTimeout: 120_000 })

let sim: Simulator
let root: string
beforeAll(async () => {
  sim = await startLab({ estate: { guests: 2 }, seed: 7 })
  root = await makeRepo(sim)
  // the first run pins the endpoint and says so once; what follows is the steady state
  expect((await proxops(['diff'], { cwd: root })).code).toBe(0)
})
afterAll(async () => {
  await sim.close()
  rmSync(root, { recursive: true, force: true })
})

const both = async (args: readonly string[]) => {
  const inProcess = await proxops(args, { cwd: root })
  const processRun = await spawned(args, { cwd: root })
  return { inProcess, processRun }
}

describe('bin.js as a process and main() in process', () => {
  it.each(
    [
      ['diff'],
      ['diff', '-o', 'json'],
      ['diff', '--detailed-exitcode'],
      ['status'],
      ['status', 'VM/web'],
      ['validate'],
      ['show', 'VM/web'],
      ['--help'],
      ['help', 'apply'],
      ['dif'],
      ['diff', '--clustr', 'lab'],
      ['--version'],
    ].map((args) => [args.join(' '), args] as const),
  )('proxops %s says the same', async (_, args) => {
    const { inProcess, processRun } = await both(args)
    expect(processRun.signal).toBeNull()
    expect(inProcess).toEqual(processRun)
  })

  it('apply converges the same; diff afterwards says the same', async () => {
    const apply = await spawned(['apply', '--yes'], { cwd: root })
    expect(apply.code).toBe(0)
    const { inProcess, processRun } = await both(['diff', '--detailed-exitcode'])
    expect(processRun.code).toBe(0)
    expect(inProcess).toEqual(processRun)
  })

  it('no canary in any output', () => {
    expect(transcriptCanaries()).toEqual([])
  })
})
