// The mutation score of the safety core (docs/mutation-testing.md) from Stryker's JSON report, as Stryker counts
// it: killed and timed-out mutants over every mutant a test could have noticed (killed, timed out, survived, not
// covered); ignored mutants and those that do not compile are left out.
// `node tools/mutation-summary.mjs [REPORT] [--write FILE]`: prints the overall line; with --write, also writes the
// per-file table (the committed reports/mutation/summary.md). Exits 1 when the report is missing or unreadable.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'

export const DEFAULT_REPORT = 'reports/mutation/stryker-incremental.json'

const DETECTED = new Set(['Killed', 'Timeout'])
const COUNTED = new Set(['Killed', 'Timeout', 'Survived', 'NoCoverage'])

/** per file and overall: detected, counted, survived (with their lines), not covered */
export function mutationScores(report) {
  const files = []
  const total = { detected: 0, counted: 0, survived: 0, noCoverage: 0 }
  for (const [file, { mutants }] of Object.entries(report.files ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const f = { file, detected: 0, counted: 0, survived: 0, noCoverage: 0 }
    for (const m of mutants) {
      if (!COUNTED.has(m.status)) continue
      f.counted += 1
      if (DETECTED.has(m.status)) f.detected += 1
      if (m.status === 'Survived') f.survived += 1
      if (m.status === 'NoCoverage') f.noCoverage += 1
    }
    files.push(f)
    for (const k of Object.keys(total)) total[k] += f[k]
  }
  return { files, total }
}

export const percent = ({ detected, counted }) => (counted === 0 ? 100 : (100 * detected) / counted)

export const scoreLine = ({ total }) =>
  `mutation score of the safety core: ${percent(total).toFixed(2)}% (${total.detected} of ${total.counted} mutants killed, ${total.survived} survived, ${total.noCoverage} not covered)`

export function summaryMarkdown(scores) {
  const row = (name, s) =>
    `| ${name} | ${percent(s).toFixed(2)}% | ${s.detected} | ${s.survived} | ${s.noCoverage} | ${s.counted} |`
  return [
    '# Mutation score of the safety core',
    '',
    'Written by `pnpm mutate` from its last run (docs/mutation-testing.md); the surviving mutants and why each is',
    'left are listed there.',
    '',
    '| file | score | killed | survived | not covered | mutants |',
    '| --- | --- | --- | --- | --- | --- |',
    ...scores.files.map((f) => row(`\`${f.file}\``, f)),
    row('**all**', scores.total),
    '',
  ].join('\n')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2)
  const w = args.indexOf('--write')
  const out = w >= 0 ? args.splice(w, 2)[1] : undefined
  const file = args[0] ?? DEFAULT_REPORT
  if (!existsSync(file)) {
    console.error(`${file}: no mutation report (run pnpm mutate)`)
    process.exit(1)
  }
  const scores = mutationScores(JSON.parse(readFileSync(file, 'utf8')))
  if (out) writeFileSync(out, summaryMarkdown(scores))
  console.log(scoreLine(scores))
}
