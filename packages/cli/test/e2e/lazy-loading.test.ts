/**
 * A command loads what it needs when it needs it (docs/performance.md, "A CLI that feels instant"): the SOPS and
 * age stack only for a cluster with a secrets file, the HTTP stack (undici) only for a command that talks to PVE.
 * The built `dist/bin.js` runs as a process with test/support/module-probe.mjs, which lists every module the
 * process loaded; each case also has its control (the same probe sees the stack when the command needs it).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { Simulator } from '@proxops/pve-sim'
import { BIN, CANARY, baseEnv, makeRepo, startLab, vmManifest } from './harness.js'

vi.setConfig({ testTimeout: 120_000 })

const PROBE = fileURLToPath(new URL('../support/module-probe.mjs', import.meta.url))

/**
 * Module URLs or paths of each stack: in the bundle (scripts/bundle.mjs puts SOPS, age and its curves in one
 * `chunks/sops-*` file and the YAML library in `chunks/yaml-parser-*`; undici stays outside it), and as modules
 * (packages/sops, node_modules/...).
 */
const STACKS = {
  sops: /\/dist\/chunks\/sops-|\/packages\/sops\/|\/node_modules\/(@proxops\/sops|age-encryption|@noble)\//,
  http: /\/node_modules\/undici\//,
  yaml: /\/dist\/chunks\/yaml-parser-|\/node_modules\/yaml\//,
} as const
type Stack = keyof typeof STACKS

let sim: Simulator
let plain: string
let secret: string
let scratch: string
beforeAll(async () => {
  sim = await startLab()
  // no secrets file: credentials from the environment, and no manifest naming a secret
  plain = await makeRepo(sim, { sops: false, manifests: { 'vm/lab/db.yaml': vmManifest('db', 101) } })
  secret = await makeRepo(sim)
  scratch = mkdtempSync(path.join(os.tmpdir(), 'proxops-probe-'))
})
afterAll(async () => {
  await sim.close()
  for (const dir of [plain, secret, scratch]) rmSync(dir, { recursive: true, force: true })
})

let runs = 0
/** Runs `proxops args` in `root` with the probe; its exit code and which stacks it loaded. */
async function loadedBy(root: string, args: readonly string[]): Promise<{ code: number | null; stacks: Stack[] }> {
  const file = path.join(scratch, `modules-${++runs}.txt`)
  const env = baseEnv(root, {
    MODULE_PROBE_FILE: file,
    ...(root === plain ? { PROXOPS_PVE_TOKEN_VALUE: `root@pam!proxops=${CANARY.token}` } : {}),
  })
  const child = spawn(process.execPath, ['--import', PROBE, BIN, ...args], { cwd: root, env, stdio: 'ignore' })
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  const modules = readFileSync(file, 'utf8').split('\n')
  // the probe saw the CLI itself: an empty list would pass every "not loaded" below
  expect(modules.some((m) => m.endsWith('/cli/dist/bin.js'))).toBe(true)
  return { code, stacks: (Object.keys(STACKS) as Stack[]).filter((s) => modules.some((m) => STACKS[s].test(m))) }
}

describe('what a command loads', () => {
  it('validate of a repository without secrets loads neither SOPS/age nor the HTTP stack', async () => {
    expect(await loadedBy(plain, ['validate'])).toEqual({ code: 0, stacks: ['yaml'] })
  })

  it('validate of a cluster with a secrets file decrypts it (SOPS/age) and still never loads the HTTP stack', async () => {
    expect(await loadedBy(secret, ['validate'])).toEqual({ code: 0, stacks: ['sops', 'yaml'] })
  })

  it('diff of a repository without secrets talks to PVE (HTTP stack) and never loads SOPS/age', async () => {
    expect(await loadedBy(plain, ['diff'])).toEqual({ code: 0, stacks: ['http', 'yaml'] })
  })

  it('diff of a cluster with a secrets file loads both', async () => {
    expect(await loadedBy(secret, ['diff'])).toEqual({ code: 0, stacks: ['sops', 'http', 'yaml'] })
  })

  it('--help, --version and completion load none of them, not even the YAML parser', async () => {
    expect(await loadedBy(plain, ['--help'])).toEqual({ code: 0, stacks: [] })
    expect(await loadedBy(plain, ['--version'])).toEqual({ code: 0, stacks: [] })
    expect(await loadedBy(plain, ['--get-yargs-completions', 'proxops', 'di'])).toEqual({ code: 0, stacks: [] })
  })
})
