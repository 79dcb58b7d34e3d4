// Sums the vitest JSON reports of every workspace package into one plain "N passed, N failed" line.
// A package whose tests ran but wrote no report (a crash) counts as one failure, and so does each quality gate
// named on the command line (`node tools/ci-summary.mjs lint typecheck`: those gates failed).
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

let passed = 0
let failed = 0
let skipped = 0
for (const root of ['packages', 'tools', 'examples']) {
  if (!existsSync(root)) continue
  for (const name of readdirSync(root)) {
    const dir = join(root, name)
    const pkg = join(dir, 'package.json')
    if (!existsSync(pkg) || !JSON.parse(readFileSync(pkg, 'utf8')).scripts?.test) continue
    const report = join(dir, '.vitest-report.json')
    if (!existsSync(report)) {
      console.error(`${dir}: no test report (the test run crashed or did not start)`)
      failed += 1
      continue
    }
    const r = JSON.parse(readFileSync(report, 'utf8'))
    passed += r.numPassedTests
    failed += r.numFailedTests
    skipped += r.numPendingTests + (r.numTodoTests ?? 0)
    // A test file that failed to load has no tests in it but is still a failure.
    failed += (r.testResults ?? []).filter((f) => f.status === 'failed' && f.assertionResults.length === 0).length
  }
}
for (const gate of process.argv.slice(2)) {
  console.error(`gate failed: pnpm ${gate}`)
  failed += 1
}
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`)
process.exit(failed > 0 || passed === 0 ? 1 : 0)
