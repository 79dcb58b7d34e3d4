/** Why reconcile() stopped before executing anything. */
export type ReconcileErrorCode =
  /** a secret reference of the manifests does not resolve (checked before any PVE call) */
  | 'SECRETS'
  /** the saved plan is not the plan the desired state and live PVE give now */
  | 'PLAN_MISMATCH'

export class ReconcileError extends Error {
  override readonly name = 'ReconcileError'
  constructor(
    readonly code: ReconcileErrorCode,
    message: string,
  ) {
    super(message)
  }
}
