// Sums the vitest JSON reports of every workspace package into one plain "N passed, N failed" line.
// Arguments: the checkouts to sum (default: this one); `--partial DIR` sums only the packages of DIR that ran
// (CI's fresh-clone pass runs a few suites); `--failed-step NAME` counts a CI step that failed outside vitest (a
// gate, the publish check) as one failure. A package whose tests ran but wrote no report (a crash) counts as one
// failure. Each failed test is named (file, title, first line of its message) so that a CI log's tail says what
// failed even when the suite's own output scrolled away. `--mutation FILE` prints the safety core's mutation score
// from Stryker's record (its pass or fail is the `pnpm mutate` step's).
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { mutationScores, scoreLine } from './mutation-summary.mjs'

const firstLine = (text) => (text ?? '').split('\n')[0].slice(0, 300)

const args = process.argv.slice(2)
const checkouts = []
const failedSteps = []
let mutation
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--failed-step') failedSteps.push(args[++i])
  else if (args[i] === '--mutation') mutation = args[++i]
  else if (args[i] === '--partial') checkouts.push({ dir: args[++i], partial: true })
  else checkouts.push({ dir: args[i], partial: false })
}
if (checkouts.length === 0) checkouts.push({ dir: '.', partial: false })

let passed = 0
let failed = 0
let skipped = 0
for (const { dir: checkout, partial } of checkouts) {
  if (!checkout || !existsSync(join(checkout, 'package.json'))) {
    console.error(`${checkout}: no checkout`)
    failed += 1
    continue
  }
  for (const root of ['packages', 'tools', 'examples'].map((r) => join(checkout, r))) {
    if (!existsSync(root)) continue
    for (const name of readdirSync(root)) {
      const dir = join(root, name)
      const pkg = join(dir, 'package.json')
      if (!existsSync(pkg) || !JSON.parse(readFileSync(pkg, 'utf8')).scripts?.test) continue
      const report = join(dir, '.vitest-report.json')
      if (!existsSync(report)) {
        if (partial) continue
        console.error(`${dir}: no test report (the test run crashed or did not start)`)
        failed += 1
        continue
      }
      const r = JSON.parse(readFileSync(report, 'utf8'))
      passed += r.numPassedTests
      failed += r.numFailedTests
      skipped += r.numPendingTests + (r.numTodoTests ?? 0)
      for (const file of r.testResults ?? []) {
        const where = relative(checkout, file.name)
        // A test file that failed to load, or whose hook failed (its tests then count as skipped), is a failure.
        if (file.status === 'failed' && !file.assertionResults.some((t) => t.status === 'failed')) {
          failed += 1
          console.error(`failed: ${where}: ${firstLine(file.message)}`)
        }
        for (const t of file.assertionResults) {
          if (t.status === 'failed')
            console.error(`failed: ${where} > ${t.fullName}: ${firstLine(t.failureMessages?.[0])}`)
        }
      }
    }
  }
}
if (mutation !== undefined) {
  if (existsSync(mutation)) console.log(scoreLine(mutationScores(JSON.parse(readFileSync(mutation, 'utf8')))))
  else console.log(`${mutation}: no mutation report`)
}
for (const step of failedSteps) {
  console.error(`${step}: failed`)
  failed += 1
}
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`)
process.exit(failed > 0 || passed === 0 ? 1 : 0)
