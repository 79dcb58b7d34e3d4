export { execute, toJobs, DEFAULT_NODE_CONCURRENCY, DEFAULT_STORAGE_CONCURRENCY } from './execute.js'
export type { ExecuteOptions, Report, ActionResult, ActionStatus, ProgressEvent } from './execute.js'
export {
  resolveParams,
  redact,
  describeParams,
  isSecretParam,
  SecretResolutionError,
  SENSITIVE,
} from '../kit/params.js'
export type { SecretResolver, ResolvedParams } from '../kit/params.js'
export { schedule } from './scheduler.js'
export type { Job, Outcome, SkipReasonCode, ScheduleOptions } from './scheduler.js'
export type { TaskRecord } from './run-action.js'
