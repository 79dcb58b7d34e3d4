import { defineConfig, mergeConfig } from 'vitest/config'
import shared from '../../vitest.shared.mjs'

// Most of this suite's time is waiting: on the simulator's tasks and on CLI processes it kills. Two workers overlap
// that waiting; one (vitest's default on two cores) ran its files end to end (CONTRIBUTING.md, "How long the tests
// take").
export default mergeConfig(shared, defineConfig({ test: { maxWorkers: 2 } }))
