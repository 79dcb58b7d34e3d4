// The tests `pnpm mutate` (StrykerJS, stryker.config.mjs) runs against each mutant of the safety core: each
// package's own settings (vitest.shared.mjs), limited to its unit tests that run without the simulator. A suite
// that drives the simulator costs seconds per mutant; the core's decisions are asserted in the unit tests beside it
// (docs/mutation-testing.md).
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'
import shared from './vitest.shared.mjs'

const seed = fileURLToPath(new URL('./tools/mutate-seed.mjs', import.meta.url))

const project = (name, include, isolate = false) => ({
  ...shared,
  test: { ...shared.test, name, root: `packages/${name}`, include, isolate, setupFiles: [seed] },
})

export default defineConfig({
  test: {
    // no JSON report: CI's closing summary sums the `.vitest-report.json` files that `pnpm test` writes
    reporters: ['default'],
    projects: [
      project('planner', [
        'src/plan/prune-guards.test.ts',
        'src/kit/{ownership,guard-overrides}.test.ts',
        'src/kinds/guest/{prune,destroy-effects-pure}.test.ts',
        'src/reconcile/{saved-plan,check-saved-plan,plan-difference,prune-window,secrets}.test.ts',
        'src/{privileges,privileges-check}.test.ts',
      ]),
      project('cli', ['src/{safe-text,redact}.test.ts', 'src/runtime/{endpoint-pins,secret-roles}.test.ts'], true),
      project('pve-client', ['src/{secret,scrub}.test.ts']),
      project('sops', ['src/secret.test.ts']),
    ],
  },
})
