/**
 * `@proxops/planner/testing`: helpers for the tests of code built on the planner. `manifest()` builds a
 * manifest through the schema's parser; `makeAction()` and `makePlan()` build hand-written plans for tests of
 * executors and renderers. Run what you build against `@proxops/pve-sim` (`createInProcessSimulator`).
 */
export { manifest } from './manifest.js'
export { makeAction, makePlan } from './builders.js'
