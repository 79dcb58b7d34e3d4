#!/usr/bin/env node
// The two-command demo (`pnpm demo` builds, then runs this): starts the PVE simulator for the example
// clusters, copies examples/ into a temporary git repository pointed at the simulators, and runs the real
// CLI: diff, apply --yes, diff again (must show no changes), status. Then it stops the simulators.
import { execFileSync, spawn } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const cliBin = path.join(repoRoot, 'packages/cli/dist/bin.js')
const simEntry = path.join(repoRoot, 'tools/pve-sim/dist/index.js')
const examples = path.join(repoRoot, 'examples', 'repository')
const ageKey = path.join(examples, 'keys/test-only.agekey')
const CLUSTERS = { homelab: ['pve1', 'pve2', 'pve3'], edge: ['edge1'] }

for (const [file, hint] of [
  [cliBin, 'build the CLI'],
  [simEntry, 'build tools/pve-sim'],
]) {
  if (!existsSync(file)) {
    console.error(`demo: ${path.relative(repoRoot, file)} is missing: ${hint} first (pnpm demo does it)`)
    process.exit(1)
  }
}

const started = Date.now()
// bold headings only on a terminal, and never with NO_COLOR (as the CLI itself does)
const bold = process.stderr.isTTY && !process.env.NO_COLOR
const say = (text) => process.stderr.write(bold ? `\n\u001b[1m==> ${text}\u001b[22m\n` : `\n==> ${text}\n`)
const { startSimulator, DEMO_TOKEN_ID, DEMO_TOKEN_SECRET } = await import(pathToFileURL(simEntry).href)

/** Points a cluster config at a simulator: its URL and its certificate fingerprint. */
export function pointAt(configText, url, fingerprint) {
  if (/^\s*tls:/m.test(configText)) throw new Error('demo: the example config already has a tls block')
  return configText.replace(
    /^(\s*)base-url:.*$/m,
    (_, indent) => `${indent}base-url: ${url}\n${indent}tls:\n${indent}  fingerprint: "${fingerprint}"`,
  )
}

function run(args, cwd, env, allowed = [0]) {
  return new Promise((resolve, reject) => {
    process.stderr.write(`\n$ proxops ${args.join(' ')}\n`)
    const child = spawn(process.execPath, [cliBin, ...args], { cwd, env, stdio: ['ignore', 'inherit', 'inherit'] })
    child.on('error', reject)
    child.on('exit', (code) =>
      allowed.includes(code ?? 1) ? resolve(code) : reject(new Error(`proxops ${args.join(' ')} exited ${code}`)),
    )
  })
}

const sims = []
const tmp = mkdtempSync(path.join(os.tmpdir(), 'proxops-demo-'))
let failed = false
try {
  say('Starting the PVE simulator (homelab: pve1..pve3, edge: edge1)')
  const repo = path.join(tmp, 'repo')
  // the example repository is copied as it is, as a user would
  cpSync(examples, repo, { recursive: true })
  for (const [cluster, nodes] of Object.entries(CLUSTERS)) {
    const sim = await startSimulator({
      nodes,
      taskDurationMs: 100,
      tokens: [{ id: DEMO_TOKEN_ID, secret: DEMO_TOKEN_SECRET }],
      schemaValidation: 'if-found',
    })
    sims.push(sim)
    const file = path.join(repo, 'clusters', cluster, 'config.yaml')
    writeFileSync(file, pointAt(readFileSync(file, 'utf8'), sim.url, sim.fingerprint))
    process.stderr.write(`    ${cluster}: ${sim.url} (fingerprint ${sim.fingerprint.slice(0, 23)}...)\n`)
  }
  const git = (...args) =>
    execFileSync(
      'git',
      ['-c', 'user.name=demo', '-c', 'user.email=demo@example.invalid', '-c', 'init.defaultBranch=main', ...args],
      { cwd: repo, stdio: 'ignore' },
    )
  git('init', '-q')
  git('add', '-A')
  git('commit', '-q', '-m', 'examples, pointed at the simulator')

  const env = { ...process.env, SOPS_AGE_KEY_FILE: ageKey, HOME: tmp, NO_COLOR: process.env.NO_COLOR ?? '' }
  delete env.PROXOPS_CONFIG
  delete env.PROXOPS_GIT_PATH

  say('proxops diff: what would change')
  await run(['diff'], repo, env)
  say('proxops apply --yes: converge both clusters')
  await run(['apply', '--yes'], repo, env)
  say('proxops diff --detailed-exitcode: must be "No changes." (exit 0)')
  await run(['diff', '--detailed-exitcode'], repo, env)
  say('proxops status')
  await run(['status'], repo, env)
  say(`Done in ${((Date.now() - started) / 1000).toFixed(1)} s`)
} catch (error) {
  failed = true
  process.stderr.write(`\ndemo failed: ${error instanceof Error ? error.message : String(error)}\n`)
} finally {
  await Promise.all(sims.map((s) => s.close()))
  rmSync(tmp, { recursive: true, force: true })
}
process.exit(failed ? 1 : 0)
