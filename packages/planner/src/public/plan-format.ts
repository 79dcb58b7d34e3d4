/**
 * `@proxops/planner/plan-format`: the detail types of a plan's actions (docs/plan-format.md), for code that reads
 * or builds requests one by one: the kinds' names, request parameters and secret references. `Plan`, `Action`
 * and the findings are on the main entry.
 */
export type {
  ActionKind,
  ArtifactKind,
  CanonFirewall,
  GuestKind,
  PlanParams,
  PlanParamValue,
  PlanSummary,
  PveRequest,
  SecretParam,
} from '../plan-types.js'
