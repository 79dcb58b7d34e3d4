// A setup file of `pnpm mutate` only (vitest.mutate.config.mjs): one fast-check seed for every property, so that a
// property test has the same name and draws the same cases in every run. @fast-check/vitest puts the seed in the
// test's name, and Stryker's incremental record knows tests by name: a new seed each run would make every property
// a new test and re-test every mutant it covers.
import fc from 'fast-check'

fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: 20261208 })
