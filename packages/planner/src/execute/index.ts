export { execute } from './execute.js'
export type { ExecuteOptions, Report, ActionResult, ActionStatus, ProgressEvent } from './execute.js'
