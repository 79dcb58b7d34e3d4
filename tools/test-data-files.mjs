// The test files that use the external test data (the PVE API schema, the SOPS conformance vectors): the files
// that call one of the gates below, which skip with an announced line where the data is absent. CI's fresh-clone
// pass runs exactly these files in a clone with nothing beside it (.ci/run). Prints one line per package,
// `<package dir> <file> <file> ...`, paths relative to the package. Exits 1 when no file is found, or when a gate
// is called outside a test file (a helper that calls it would hide its test files from this rule).
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The gates, each with the module that defines it (the only other place that may name it). */
export const GATES = {
  apidocForTests: 'tools/pve-sim/src/apidoc/test-data.ts',
  vectorsForTests: 'packages/sops/src/test-support/fixtures.ts',
}

const root = fileURLToPath(new URL('..', import.meta.url))
const call = new RegExp(`\\b(${Object.keys(GATES).join('|')})\\(`)

function* sources(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue
    const path = join(dir, entry.name)
    if (entry.isDirectory()) yield* sources(path)
    else if (entry.name.endsWith('.ts')) yield path
  }
}

const byPackage = new Map()
const misplaced = []
for (const top of ['packages', 'tools', 'examples']) {
  for (const pkg of readdirSync(join(root, top), { withFileTypes: true })) {
    if (!pkg.isDirectory()) continue
    const dir = join(root, top, pkg.name)
    for (const file of sources(dir)) {
      const text = readFileSync(file, 'utf8')
      const gate = call.exec(text)?.[1]
      if (!gate) continue
      const where = relative(root, file)
      if (file.endsWith('.test.ts'))
        byPackage.set(relative(root, dir), [...(byPackage.get(relative(root, dir)) ?? []), relative(dir, file)])
      else if (GATES[gate] !== where) misplaced.push(`${where} calls ${gate}()`)
    }
  }
}

if (misplaced.length > 0) {
  console.error(
    `test data gates called outside test files (call them from the test files that use the data):\n  ${misplaced.join('\n  ')}`,
  )
  process.exit(1)
}
if (byPackage.size === 0) {
  console.error(`no test file calls ${Object.keys(GATES).join(' or ')}: the fresh-clone pass would prove nothing`)
  process.exit(1)
}
for (const [dir, files] of [...byPackage].sort()) console.log([dir, ...files.sort()].join(' '))
