/**
 * What lifts each guard, said in the guard's own message so nobody has to look it up (docs/safety.md, "Prunes"
 * and "Disruption"). One place: the CLI's flags and the configuration keys the messages name.
 */

/** the empty-desired and ratio guards of one kind */
export const allowEmptyOverride = (kind: string): string => `pass --allow-empty ${kind} to accept`

/** the per-cycle prune budget (capped in the daemon by the sliding window) */
export const PRUNE_BUDGET_OVERRIDE =
  'raise it with --prune-budget or reconcile.prune-budget; the daemon also caps it by reconcile.prune-window'

/** the disruption policy that holds a change back */
export const DISRUPTION_OVERRIDE = "raise it with the guest's proxops/disruption annotation or the cluster's disruption"
