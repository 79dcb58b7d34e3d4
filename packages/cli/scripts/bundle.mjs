#!/usr/bin/env node
// The `proxops` command as a bundle (docs/performance.md, "A CLI that feels instant"): `dist/bin.js` and its chunks
// in `dist/chunks/`, made from the TypeScript sources of the CLI and the four libraries (their `@proxops/source`
// export condition) and the npm packages they import. Loading a few large files instead of about 400 small ones
// takes a quarter of a converged diff's CPU. The dynamic imports stay chunks, so a command still loads only what it
// needs; the SOPS stack (with age and its curves) is one chunk named `sops-*` and the YAML library one named
// `yaml-parser-*`, which the lazy-loading test looks for.
// Runs after `tsc` in `pnpm build`, and replaces tsc's `dist/bin.js`; the library entry (`dist/index.js`) and the
// declarations stay tsc's. Source maps carry their sources; bin.ts turns them on for PROXOPS_DEBUG's stack traces.
//
// Two modules are loaded at run time with `require` and stay outside the bundle: undici's Agent and connector (the
// PVE client) and winston (the logger), resolved from this package's own dependencies.
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { rolldown } from 'rolldown'

const here = path.dirname(fileURLToPath(import.meta.url))
const pkgDir = path.resolve(here, '..')
const dist = path.join(pkgDir, 'dist')
const { version } = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8'))

/** version.ts reads ../package.json beside its module; a chunk lives one folder deeper, so the bundle holds the value. */
const inlineVersion = {
  name: 'proxops-inline-version',
  load(id) {
    if (id === path.join(pkgDir, 'src', 'version.ts')) return `export const version = ${JSON.stringify(version)}\n`
    return null
  },
}

/** Every npm package the bundle carries, with its license text: dist/THIRD-PARTY-LICENSES.md. */
const licenses = new Map()
const collectLicenses = {
  name: 'proxops-third-party-licenses',
  moduleParsed(info) {
    const m = /^(.*[\\/]node_modules[\\/](?:@[^\\/]+[\\/])?[^\\/]+)[\\/]/.exec(info.id)
    if (!m || licenses.has(m[1])) return
    const pkg = JSON.parse(readFileSync(path.join(m[1], 'package.json'), 'utf8'))
    const file = ['LICENSE', 'LICENSE.md', 'LICENSE.txt', 'license', 'LICENCE', 'LICENSE-MIT'].find((f) => {
      try {
        return readFileSync(path.join(m[1], f), 'utf8')
      } catch {
        return false
      }
    })
    const text = file ? readFileSync(path.join(m[1], file), 'utf8').trim() : `License: ${pkg.license ?? 'unknown'}`
    licenses.set(m[1], { name: pkg.name, version: pkg.version, license: pkg.license ?? 'unknown', text })
  },
}

rmSync(path.join(dist, 'chunks'), { recursive: true, force: true })
const bundle = await rolldown({
  input: { bin: path.join(pkgDir, 'src', 'bin.ts') },
  cwd: pkgDir,
  platform: 'node',
  tsconfig: path.join(pkgDir, 'tsconfig.json'),
  resolve: {
    // the workspace libraries from their sources: one compile, and source maps that point at TypeScript
    conditionNames: ['@proxops/source', 'node', 'import', 'default'],
    extensionAlias: { '.js': ['.ts', '.js'] },
  },
  plugins: [inlineVersion, collectLicenses],
  // the workspace's modules only define things when they load (none registers itself anywhere), so a name imported
  // from a library's index brings its own module, not the whole library: `--help` needs two small schema helpers
  treeshake: {
    moduleSideEffects: [
      { test: /[\\/]packages[\\/](cli|schema|planner|pve-client|sops)[\\/]src[\\/]/, sideEffects: false },
    ],
  },
  // bin.js exports nothing (what the SOPS group below needs to leave out the modules it imports)
  preserveEntrySignatures: false,
  logLevel: 'warn',
  onLog(level, log, handler) {
    // yargs' and others' `this` at the top of an ES module: harmless, and not ours to fix
    if (log.code === 'THIS_IS_UNDEFINED') return
    // a warning is a failed build: a bundle that silently differs from the modules must not ship
    if (level === 'warn') throw new Error(`bundle: ${log.message}`)
    handler(level, log)
  },
})
await bundle.write({
  dir: dist,
  format: 'esm',
  entryFileNames: '[name].js',
  chunkFileNames: 'chunks/[name]-[hash].js',
  sourcemap: true,
  codeSplitting: {
    groups: [
      {
        name: 'sops',
        test: /[\\/]packages[\\/]sops[\\/]src[\\/]|[\\/]node_modules[\\/](age-encryption|@noble)[\\/]/,
        // not the modules it imports (yaml): the commands that never decrypt load those without this chunk
        includeDependenciesRecursively: false,
      },
      // the YAML library, one chunk too: what needs no repository (`--help`, completion) never loads it
      { name: 'yaml-parser', test: /[\\/]node_modules[\\/]yaml[\\/]/, includeDependenciesRecursively: false },
    ],
  },
})
await bundle.close()

const notices = [...licenses.values()]
  .sort((a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version))
  .map((l) => `## ${l.name} ${l.version} (${l.license})\n\n\`\`\`\n${l.text}\n\`\`\`\n`)
writeFileSync(
  path.join(dist, 'THIRD-PARTY-LICENSES.md'),
  `# Third-party licenses\n\nThe \`proxops\` command (\`dist/bin.js\` and \`dist/chunks/\`) carries these npm packages.\n\n${notices.join('\n')}`,
)
