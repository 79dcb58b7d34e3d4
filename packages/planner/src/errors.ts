/** Coded errors for input plan() cannot work with (bad policy, inconsistent desired state). */
export type PlanErrorCode = 'PLAN_POLICY' | 'PLAN_UNKNOWN_NODE' | 'PLAN_DUPLICATE' | 'PLAN_DEPENDENCY' | 'PLAN_FORMAT'

export class PlanInputError extends Error {
  override readonly name = 'PlanInputError'
  constructor(
    readonly code: PlanErrorCode,
    message: string,
    /** the resource (`Kind/name`) or policy field concerned */
    readonly subject?: string,
  ) {
    super(subject === undefined ? message : `${subject}: ${message}`)
  }
}
