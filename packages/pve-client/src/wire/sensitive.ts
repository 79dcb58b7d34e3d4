/**
 * The one marker every ProxOps output shows in place of a secret: plan diffs, logs, errors, adopt's gaps, a
 * `Secret` printed by accident (docs/safety.md).
 */
export const SENSITIVE = '(sensitive)'
