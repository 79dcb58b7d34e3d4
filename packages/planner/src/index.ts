/**
 * `@proxops/planner`: observe, plan (pure), execute and adopt, and reconcile() composing them into one
 * cycle with its safety checks. The public API is this list (docs/embedding-planner.md); the building blocks of
 * custom executors are in `@proxops/planner/execute`, the parts of a live inventory in
 * `@proxops/planner/inventory`, the detail types of a plan's requests in `@proxops/planner/plan-format`, test
 * helpers for embedders in `@proxops/planner/testing`.
 */
export type { LiveReader, PveWriter } from './ports.js'
export { storageLedger } from './ledger.js'
export type { DesiredState, SecretLookup } from './desired.js'
export type { LiveInventory } from './inventory.js'
export {
  DEFAULT_POLICY,
  PLAN_FORMAT_VERSION,
  type Action,
  type AllowEmptyKind,
  type ActionType,
  type Anomaly,
  type AnomalyCode,
  type DisruptionClass,
  type DisruptionPolicy,
  type FieldDiff,
  type Gap,
  type PendingChange,
  type Plan,
  type Policy,
  type ResourceKind,
  type Skip,
  type SkipCode,
} from './plan-types.js'
export { plan, addressesOf, describeAction, type PlanOptions } from './plan/index.js'
export { targetPlan, type PlanTarget } from './plan/target.js'
export type { PlanHold } from './plan/hold.js'
export { serializePlan, parsePlan } from './serialize.js'
export { PlanInputError, type PlanErrorCode } from './errors.js'
export {
  convergence,
  describeBlocked,
  blockedCount,
  type Convergence,
  type Blocked,
  type BlockReason,
} from './convergence.js'
export { observe, ObserveError, DEFAULT_READ_CONCURRENCY, type ObserveOptions } from './observe/index.js'
export {
  execute,
  type ExecuteOptions,
  type Report,
  type ActionResult,
  type ActionStatus,
  type ProgressEvent,
} from './execute/index.js'
export {
  adopt,
  selectForAdoption,
  declaredObjects,
  type AdoptSelection,
  type AdoptFilter,
  type SelectedInventory,
  type OwnedElsewhere,
  type AdoptOptions,
  type AdoptResult,
  type AdoptedFile,
  type AdoptGap,
  type AdoptSkip,
} from './adopt/index.js'
export {
  reconcile,
  ReconcileError,
  PruneWindowBudget,
  secretRefs,
  type ReconcileOptions,
  type ReconcileResult,
  type ReconcileErrorCode,
  type PruneWindow,
} from './reconcile/index.js'
