import { defineConfig, mergeConfig } from 'vitest/config'
import shared from '../../vitest.shared.mjs'

/** One project of this suite: the shared settings, these files (merging would add to the shared `include`). */
const project = (name: string, include: string[], isolate: boolean) => ({
  ...shared,
  test: { ...shared.test, name, include, isolate },
})

// The end-to-end cases wait on the simulator's tasks as much as they compute, and this suite is among the longest
// of `pnpm test`: two workers halve its wall time (CONTRIBUTING.md, "How long the tests take"). The end-to-end
// files share their workers' modules (the simulator, the planner, the CLI), as every suite does. The unit files each
// get a fresh worker: with two workers sharing modules, `@fast-check/vitest` once registered a file's properties
// with no suite to collect them ("Vitest failed to find the current suite").
export default mergeConfig(
  shared,
  defineConfig({
    test: {
      maxWorkers: 2,
      projects: [project('unit', ['src/**/*.test.ts'], true), project('e2e', ['test/**/*.test.ts'], false)],
    },
  }),
)
