/**
 * `@proxops/planner/execute`: the building blocks of execute(), for custom executors: the scheduler that
 * runs jobs in dependency order under per-node and per-storage limits, and the secret resolution and
 * redaction of request parameters, the executor's default limits and its task records.
 */
export { toJobs, DEFAULT_NODE_CONCURRENCY, DEFAULT_STORAGE_CONCURRENCY } from './execute.js'
export type { TaskRecord, TokenSecretSink } from '../kit/runners.js'
export { schedule, type Job, type Outcome, type ScheduleOptions, type SkipReasonCode } from './scheduler.js'
export {
  resolveParams,
  redact,
  describeParams,
  isSecretParam,
  SecretResolutionError,
  type SecretResolver,
  type ResolvedParams,
} from '../kit/params.js'
