#!/usr/bin/env node
// The publish smoke test (`pnpm publish-check`, run by CI after the tests): packs every public package as npm
// would publish it, checks each tarball's manifest and files, installs the tarballs into an empty project, and
// uses them there as a stranger would: `proxops --version`, `proxops validate` on a copy of the example repository,
// require() from CommonJS, the custom-reconciler example type-checked with NodeNext and Bundler resolution and run
// against the simulator. Needs `pnpm build` first. Ends with one line: "publish check: passed" or the failures.
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { PACKAGES, ROOT as root, packTarballs } from './pack-tarballs.mjs'

const failures = []
const check = (ok, what) => {
  if (!ok) failures.push(what)
}
const run = (cmd, args, opts = {}) =>
  execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...opts })
const step = (text) => process.stderr.write(`publish check: ${text}\n`)

const tmp = mkdtempSync(path.join(os.tmpdir(), 'proxops-publish-'))
try {
  step('packing')
  const tarballs = path.join(tmp, 'tarballs')
  packTarballs(tarballs)

  step('checking the packed manifests and files')
  for (const file of readdirSync(tarballs)) {
    const unpacked = path.join(tmp, 'unpacked', file)
    mkdirSync(unpacked, { recursive: true })
    run('tar', ['-xzf', path.join(tarballs, file), '-C', unpacked])
    const dir = path.join(unpacked, 'package')
    const manifest = readFileSync(path.join(dir, 'package.json'), 'utf8')
    const pkg = JSON.parse(manifest)
    check(!manifest.includes('@proxops/source'), `${pkg.name}: an export condition points at unshipped sources`)
    check(!manifest.includes('workspace:'), `${pkg.name}: a workspace: range survived packing`)
    for (const field of ['license', 'repository', 'homepage', 'bugs', 'keywords'])
      check(pkg[field] !== undefined, `${pkg.name}: no ${field}`)
    check(existsSync(path.join(dir, 'LICENSE')), `${pkg.name}: no LICENSE file`)
    for (const dep of Object.keys(pkg.dependencies ?? {})) {
      const local = PACKAGES.find((p) => `@proxops/${p}` === dep)
      check(
        dep.startsWith('@proxops/') ? local !== undefined : true,
        `${pkg.name}: depends on the private package ${dep}`,
      )
    }
    const files = run('find', ['.', '-type', 'f'], { cwd: dir }).split('\n').filter(Boolean)
    for (const f of files) {
      check(!/\.test\.|test-support|\.test-d\./.test(f), `${pkg.name}: ships the test file ${f}`)
      if (f.endsWith('.map')) {
        const map = JSON.parse(readFileSync(path.join(dir, f), 'utf8'))
        check(
          Array.isArray(map.sourcesContent) && map.sourcesContent.every((s) => typeof s === 'string'),
          `${pkg.name}: ${f} points at sources it does not carry`,
        )
      }
    }
  }

  step('installing the tarballs into an empty project')
  const consumer = path.join(tmp, 'consumer')
  mkdirSync(consumer)
  writeFileSync(
    path.join(consumer, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
  )
  const typesNode = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).devDependencies['@types/node']
  run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      '--loglevel=error',
      ...readdirSync(tarballs).map((f) => path.join(tarballs, f)),
      `@types/node@${typesNode}`,
    ],
    { cwd: consumer },
  )
  const proxops = path.join(consumer, 'node_modules', '.bin', 'proxops')

  step('proxops --version, proxops validate on a copy of the examples')
  const version = run(proxops, ['--version'], { cwd: consumer }).trim()
  check(/\d+\.\d+\.\d+/.test(version), `proxops --version printed '${version}'`)
  const repo = path.join(tmp, 'repo')
  cpSync(path.join(root, 'examples', 'repository'), repo, { recursive: true })
  for (const args of [
    ['init', '-q'],
    ['add', '-A'],
    ['-c', 'user.name=check', '-c', 'user.email=check@example.invalid', 'commit', '-q', '-m', 'examples'],
  ])
    run('git', args, { cwd: repo })
  const validate = run(proxops, ['validate'], {
    cwd: repo,
    env: { ...process.env, SOPS_AGE_KEY_FILE: path.join(repo, 'keys', 'test-only.agekey') },
  })
  check(/homelab: valid/.test(validate), `proxops validate on the examples said: ${validate.trim()}`)

  step('require() from CommonJS')
  for (const name of PACKAGES.filter((p) => p !== 'cli')) {
    const out = run(
      process.execPath,
      ['-e', `const m = require('@proxops/${name}'); console.log(Object.keys(m).length)`],
      { cwd: consumer },
    ).trim()
    check(Number(out) > 0, `require('@proxops/${name}') gave no exports`)
  }

  step('the custom-reconciler example, type-checked with NodeNext and Bundler resolution')
  const src = path.join(consumer, 'src')
  cpSync(path.join(root, 'examples', 'custom-reconciler', 'src'), src, {
    recursive: true,
    filter: (f) => !f.endsWith('.test.ts'),
  })
  // the CLI as a library too: its declarations must resolve every type they import (yargs' among them)
  writeFileSync(
    path.join(src, 'cli-api.ts'),
    "import { main, version } from '@proxops/cli'\nexport const api: [typeof main, string] = [main, version]\n",
  )
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc')
  const base = { target: 'ES2022', lib: ['ES2023'], strict: true, skipLibCheck: false, types: ['node'], outDir: 'dist' }
  for (const [module, moduleResolution, noEmit] of [
    ['NodeNext', 'NodeNext', false],
    ['ESNext', 'Bundler', true],
  ]) {
    writeFileSync(
      path.join(consumer, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { ...base, module, moduleResolution, noEmit }, include: ['src'] }),
    )
    try {
      run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: consumer })
    } catch (err) {
      failures.push(`tsc with ${moduleResolution} resolution: ${String(err.stdout || err.message).trim()}`)
    }
  }

  step('running it against the simulator')
  const { startSimulator } = await import(pathToFileURL(path.join(root, 'tools', 'pve-sim', 'dist', 'index.js')).href)
  const sim = await startSimulator({ taskDurationMs: 20, log: () => {} })
  try {
    const env = {
      ...process.env,
      PVE_URL: sim.url,
      PVE_TOKEN_ID: sim.token.id,
      PVE_TOKEN_SECRET: sim.token.secret,
      PVE_FINGERPRINT: sim.fingerprint,
      PVE_NODES: 'pve1',
    }
    for (const args of [['--apply'], []]) {
      try {
        const out = await new Promise((resolve, reject) => {
          import('node:child_process').then(({ execFile }) =>
            execFile(
              process.execPath,
              ['dist/main.js', ...args],
              { cwd: consumer, env, encoding: 'utf8' },
              (err, stdout, stderr) =>
                err ? reject(new Error(`${err.message}\n${stdout}${stderr}`)) : resolve(stdout),
            ),
          )
        })
        if (args.length === 0)
          check(/: 0 action\(s\)/.test(out), `the example's second run still plans changes: ${out.trim()}`)
      } catch (err) {
        failures.push(`the example ${args.join(' ')}: ${err.message}`)
      }
    }
    check(sim.control.guest(500) !== undefined, 'the example did not create VM 500 on the simulator')
  } finally {
    await sim.close()
  }
} catch (err) {
  failures.push(err instanceof Error ? `${err.message}${err.stderr ? `\n${err.stderr}` : ''}` : String(err))
} finally {
  rmSync(tmp, { recursive: true, force: true })
}

if (failures.length === 0) {
  console.log('publish check: passed')
} else {
  for (const f of failures) console.log(`publish check: FAILED: ${f}`)
  process.exitCode = 1
}
