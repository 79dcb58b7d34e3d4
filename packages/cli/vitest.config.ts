import { defineConfig, mergeConfig } from 'vitest/config'
import shared from '../../vitest.shared.mjs'

// The end-to-end cases wait on the simulator's tasks as much as they compute, and this suite is the longest of
// `pnpm test`: two workers halve its wall time (CONTRIBUTING.md, "How long the tests take").
export default mergeConfig(shared, defineConfig({ test: { maxWorkers: 2 } }))
