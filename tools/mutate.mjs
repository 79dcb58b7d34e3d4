// `pnpm mutate [stryker options]`: Stryker over the safety core (stryker.config.mjs, docs/mutation-testing.md),
// then the score summary: its line on stdout and the per-file table in reports/mutation/summary.md (committed
// with the incremental record). Exits with Stryker's status: 1 when the score is under the break threshold.
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { DEFAULT_REPORT, mutationScores, scoreLine, summaryMarkdown } from './mutation-summary.mjs'

const run = spawnSync('stryker', ['run', ...process.argv.slice(2)], { stdio: 'inherit' })
if (run.error) console.error(`stryker: ${run.error.message}`)
if (existsSync(DEFAULT_REPORT)) {
  const scores = mutationScores(JSON.parse(readFileSync(DEFAULT_REPORT, 'utf8')))
  writeFileSync('reports/mutation/summary.md', summaryMarkdown(scores))
  console.log(scoreLine(scores))
}
process.exit(run.status ?? 1)
