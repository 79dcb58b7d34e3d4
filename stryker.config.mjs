// @ts-check
// `pnpm mutate`: mutation testing of the safety core (docs/mutation-testing.md). StrykerJS changes one line of these
// files at a time and runs the unit tests that cover it (vitest.mutate.config.mjs); a mutant no test notices
// survives. In place: each package's vitest config imports the shared one from the root, which a sandbox copy of
// one package would not have; Stryker restores the files when it ends or is interrupted.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  vitest: { configFile: 'vitest.mutate.config.mjs', related: false },
  inPlace: true,
  // in place, Stryker would otherwise write `// @ts-nocheck` into every source file of the tree while it runs
  disableTypeChecks: false,
  coverageAnalysis: 'perTest',
  concurrency: 2,
  mutate: [
    // the one prune stage, its guards and the ownership markers
    'packages/planner/src/plan/prune.ts',
    'packages/planner/src/kit/ownership.ts',
    'packages/planner/src/kit/guard-overrides.ts',
    'packages/planner/src/reconcile/prune-window.ts',
    // the guests' prunes (linked-clone detection) and what a destroy does beside the guest
    'packages/planner/src/kinds/guest/prune.ts',
    'packages/planner/src/kinds/guest/destroy-effects.ts',
    // the saved-plan check and the endpoint pins
    'packages/planner/src/reconcile/saved-plan.ts',
    'packages/cli/src/runtime/endpoint-pins.ts',
    // redaction and secret references
    'packages/pve-client/src/secret.ts',
    'packages/pve-client/src/scrub.ts',
    'packages/cli/src/safe-text.ts',
    'packages/cli/src/redact.ts',
    'packages/cli/src/runtime/secret-roles.ts',
    'packages/sops/src/secret.ts',
    'packages/planner/src/reconcile/secrets.ts',
    // the privilege preflight
    'packages/planner/src/kit/privileges.ts',
    'packages/planner/src/privileges.ts',
  ],
  // the goal of 95 is reached (docs/mutation-testing.md); CI fails below it, so the score can only rise
  thresholds: { high: 95, low: 90, break: 95 },
  reporters: ['clear-text', 'progress-append-only', 'html'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  clearTextReporter: { allowColor: false, logTests: false, reportMutants: true, reportScoreTable: true },
  incremental: true,
  incrementalFile: 'reports/mutation/stryker-incremental.json',
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
}
