import { defineConfig, mergeConfig } from 'vitest/config'
import shared from '../../vitest.shared.mjs'

// The end-to-end cases wait on the simulator's tasks as much as they compute, and this suite is the longest of
// `pnpm test`: two workers halve its wall time (CONTRIBUTING.md, "How long the tests take"). Each test file in a
// fresh worker: with two workers sharing modules, `@fast-check/vitest` once registered a file's properties with no
// suite to collect them ("Vitest failed to find the current suite").
export default mergeConfig(shared, defineConfig({ test: { maxWorkers: 2, isolate: true } }))
