/**
 * `@proxops/cli` as a library: run the CLI in process (wrappers, tests). It exports no internals: the
 * reconcile logic is the planner's `reconcile()`, the configuration model is `@proxops/schema`'s.
 */
export { main, type MainOptions } from './cli.js'
export { version } from './version.js'
