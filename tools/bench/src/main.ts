#!/usr/bin/env node
/**
 * `pnpm bench`: runs the scenarios and their targets (listed in docs/performance.md) against the simulator,
 * prints a table (scenario, figure, target, pass/fail; `-` for a figure reported without a target) and writes the
 * results as JSON.
 * Flags: --quick (smaller estates, fewer repetitions; for a smoke run), --out <file>, --only <name,...>.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { scenarios, type Result } from './scenarios.js'

const argv = process.argv.slice(2)
const flag = (name: string): string | undefined => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : undefined
}
const quick = argv.includes('--quick')
const only = flag('--only')?.split(',')
const out = flag('--out') ?? 'tools/bench/results/latest.json'

const results: Result[] = []
for (const s of scenarios) {
  if (only && !only.includes(s.name)) continue
  process.stderr.write(`bench: ${s.name} ...\n`)
  try {
    results.push(...(await s.run({ quick })))
  } catch (err) {
    results.push({
      scenario: s.name,
      figure: `error: ${err instanceof Error ? err.message : String(err)}`,
      target: s.target,
      pass: false,
      data: {},
    })
  }
}

const rows = [
  ['scenario', 'figure', 'target', 'result'],
  ...results.map((r) => [r.scenario, r.figure, r.target, r.pass === undefined ? '-' : r.pass ? 'pass' : 'FAIL']),
]
const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
const line = (r: string[]): string => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`
console.log(line(rows[0]!))
console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`)
for (const r of rows.slice(1)) console.log(line(r))

const machine = {
  node: process.version,
  cpus: (await import('node:os')).cpus().length,
  platform: process.platform,
  quick,
}
mkdirSync(dirname(out), { recursive: true })
writeFileSync(out, JSON.stringify({ machine, results }, null, 2) + '\n')
process.stderr.write(`bench: results written to ${out}\n`)
process.exitCode = results.some((r) => r.pass === false) ? 1 : 0
